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
