"""The CLI functions, wired into a Typer app as the main CLI does."""

from __future__ import annotations

import json

import polars as pl
import typer
from typer.testing import CliRunner

from qmcredit.batch.cli import batch, synth


def app() -> typer.Typer:
    a = typer.Typer()
    a.command()(batch)
    a.command()(synth)
    return a


def test_synth_then_batch(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app(), ["synth", "--out", str(tmp_path / "data"), "--claims", "60", "--seed", "3", "--kind", "csv"])
    assert r.exit_code == 0, r.output
    d = tmp_path / "data"
    r = runner.invoke(app(), ["batch", str(d / "claims.csv"), str(d / "payroll.csv"), "--periods", str(d / "periods.csv"),
                              "--out", str(tmp_path / "out"), "--jsonl"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["claims"] == 60 == pl.read_parquet(tmp_path / "out" / "claims.parquet").height
    assert len((tmp_path / "out" / "determinations.jsonl").read_text().splitlines()) == 60


def test_batch_reports_a_table_it_cannot_read(tmp_path):
    (tmp_path / "claims.csv").write_text("id,tax\n1,cbt\n")
    (tmp_path / "payroll.csv").write_text("claim_id,employee_id,month,hours\n")
    r = CliRunner().invoke(app(), ["batch", str(tmp_path / "claims.csv"), str(tmp_path / "payroll.csv"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "claim_id" in r.output
