"""``qmcredit serve``: the demo seed files the bundled examples as example taxpayers, once."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from qmcredit.service import cli
from qmcredit.service.db import Database
from qmcredit.service.seed import example_files, seed

from .conftest import make_office


def test_seed_files_every_example_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    office = make_office(url)
    first = seed(office.db)
    assert sorted(first.filed) == sorted(p.name for p in example_files()) and first.skipped == []
    again = seed(Database(url))
    assert again.filed == [] and set(again.tokens) == {"preparer", "preparer2", "examiner", "auditor"}
    claims = office.client.get("/api/v1/claims", headers={"Authorization": f"Bearer {again.tokens['auditor']}"}).json()
    # a several-location example (07) is filed as one claim per location (RULES.md L6, issue 12)
    locations = sum(len(json.loads(p.read_text()).get("locations") or [None]) for p in example_files())
    assert len(claims) == locations and {c["state"] for c in claims} == {"submitted"}


def test_serve_is_a_typer_command_with_help():
    app = typer.Typer()
    app.command()(cli.serve)
    out = CliRunner().invoke(app, ["--help"])
    assert out.exit_code == 0
    for option in ("--host", "--port", "--database-url", "--seed-examples"):
        assert option in out.output


def test_serve_prints_the_sign_in_page_first(tmp_path):
    """Issue 15: a preparer new to the product finds the pages from what ``make demo`` prints;
    the first line names the address a browser opens, and that address answers with the sign-in page."""
    import os
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).parent / "qmcredit"
    env = {**os.environ, "QMCREDIT_DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}"}
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port), "--no-seed-examples"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/ in a browser" in first
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", headers={"Accept": "text/html"}, follow_redirects=True, timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the office did not start"
                time.sleep(0.2)
        assert page.status_code == 200 and "sign in" in page.text.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_office_serves_from_one_process_a_core_unless_told(monkeypatch):
    """Issue 18: ``qmcredit serve`` starts one server process a core (at most ``MOST_WORKERS``)
    unless ``--workers`` or ``QMCREDIT_WORKERS`` says otherwise; a worker count that is not a whole
    number from 1 to 64 is refused with the variable named."""
    import os

    import pytest

    monkeypatch.delenv("QMCREDIT_WORKERS", raising=False)
    assert cli.default_workers() == min(cli.MOST_WORKERS, os.cpu_count() or 1)
    monkeypatch.setenv("QMCREDIT_WORKERS", " 3 ")
    assert cli.default_workers() == 3
    for bad in ("0", "65", "two", "-1", "1.5"):
        monkeypatch.setenv("QMCREDIT_WORKERS", bad)
        with pytest.raises(typer.BadParameter, match="QMCREDIT_WORKERS"):
            cli.default_workers()


def test_serve_where_it_cannot_run_says_why_on_one_line(tmp_path):
    """``qmcredit serve`` on a port in use, at an address not this machine's, or with a database
    it cannot open: one line and exit 2, before anything is set up. Before, a database it could
    not open was an internal error (exit 3) with SQL, and a port in use ended, after the
    database was set up, in uvicorn's log and 3, the code of an internal error."""
    import socket
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "qmcredit")
    url = f"sqlite:///{tmp_path / 'office.sqlite3'}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cases = {
            ("--port", str(port), "--database-url", url): f"qmcredit: cannot listen on 127.0.0.1:{port}: address already in use; give another --port",
            ("--host", "192.0.2.1", "--database-url", url): "qmcredit: cannot listen on 192.0.2.1:",
            ("--port", "0", "--database-url", "nonsense"): "",
            ("--port", str(port + 1 if port < 65535 else port - 1), "--database-url", "nonsense"): "qmcredit: --database-url: 'nonsense' is not a database URL",
            ("--port", str(port + 1 if port < 65535 else port - 1), "--database-url", f"sqlite:///{tmp_path / 'no' / 'x.db'}"):
                f"qmcredit: sqlite:///{tmp_path / 'no' / 'x.db'}: cannot be opened: unable to open database file",
        }
        for args, said in cases.items():
            r = subprocess.run([exe, "serve", "--no-seed-examples", "--workers", "1", *args], capture_output=True, text=True, timeout=60)
            assert r.returncode == 2, (args, r.stderr)
            assert r.stderr.startswith(said) and (not said or r.stderr.count("\n") == 1), (args, r.stderr)
    assert [p.name for p in tmp_path.iterdir()] == []  # no database set up
