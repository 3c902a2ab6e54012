"""A small run of the load test (benchmarks/service_load.py): concurrent submissions to a real
server on loopback, none lost, no 5xx. The recorded figures come from longer runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "service_load.py"


def _load_module():
    spec = importlib.util.spec_from_file_location("service_load", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _forty_claims(load, url: str, tmp_path) -> dict:
    """The load script's server on ``url``, 40 claims posted by 8 clients, the server stopped."""
    proc, base, token = load.start_server(url, str(tmp_path))
    try:
        return load.run(base, token, claims=40, concurrency=8, deadline=120)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_concurrent_submissions_are_all_answered_and_stored(tmp_path):
    load = _load_module()
    with load.fresh_database(None, str(tmp_path)) as url:
        result = _forty_claims(load, url, tmp_path)
    assert result["statuses"] == {201: 40}
    assert result["lost"] == 0 and result["server_errors"] == 0 and result["stored"] == 40


@pytest.mark.slow
def test_two_worker_processes_on_sqlite_take_turns_and_keep_one_chain(tmp_path, monkeypatch):
    """``QMCREDIT_WORKERS=2`` on one SQLite file: the processes' writers queue on the file lock
    beside it (``db.WriterQueue``), every claim stored, the audit chain unbroken."""
    from qmcredit.service.audit import verify
    from qmcredit.service.db import Database

    load = _load_module()
    monkeypatch.setenv("QMCREDIT_WORKERS", "2")
    with load.fresh_database(None, str(tmp_path)) as url:
        result = _forty_claims(load, url, tmp_path)
        db = Database(url)
        try:
            with db.read() as session:
                count, broken = verify(session)
        finally:
            db.dispose()
    assert result["statuses"] == {201: 40}
    assert result["lost"] == 0 and result["server_errors"] == 0 and result["stored"] == 40
    assert broken is None and count > 40 * 4
    assert Path(url.removeprefix("sqlite:///") + ".writers").exists()


def test_a_worker_process_keeps_its_start_up_out_of_the_collectors_reach(tmp_path):
    """A worker's app (``app_from_env``, what ``qmcredit serve --workers N`` starts in each
    process) moves what start-up made out of reach of the cyclic collector (``gc.freeze``): a full
    collection does not scan the modules and the app again at every few dozen filings."""
    import os
    import subprocess
    import sys

    code = ("import gc; from qmcredit.service.app import app_from_env; before = gc.get_freeze_count(); app_from_env(); "
            "print(before, gc.get_freeze_count())")
    env = {**os.environ, "QMCREDIT_DATABASE_URL": f"sqlite:///{tmp_path}/office.sqlite3"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
    before, after = map(int, done.stdout.split())
    assert before == 0 and after > 100_000
