"""The CLI functions, wired into a Typer app as the main CLI does."""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def test_synth_refuses_what_it_cannot_make(tmp_path):
    """``qmcredit synth`` with no claims, a share outside 0-1, a negative seed (an internal
    error), or a file or unwritable place as ``--out`` (internal errors): exit 2, naming it."""
    import subprocess
    import sys

    exe = str(Path(sys.executable).parent / "qmcredit")
    (tmp_path / "afile").write_text("mine")
    for args, said in ((["--claims", "0"], "--claims"), (["--claims", "-3"], "--claims"), (["--invalid-share", "2"], "--invalid-share"),
                       (["--seed", "-1"], "--seed"), (["--out", str(tmp_path / "afile")], "afile"), (["--out", "/proc/qmcredit-synth"], "cannot be written")):
        args = args if "--out" in args else [*args, "--out", str(tmp_path / "out")]
        r = subprocess.run([exe, "synth", "--claims", "5", *args] if "--claims" not in args else [exe, "synth", *args],
                           capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
        assert r.returncode == 2 and said in r.stderr and "internal error" not in r.stderr, (args, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "mine"
