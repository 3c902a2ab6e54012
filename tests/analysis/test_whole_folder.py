"""An analysis's ``--out`` (``qmcredit reform``, ``qmcredit cost``) holds one finished run, as the
batch's does: a rerun with fewer scenarios leaves none of the former's behind, a folder of other
files is refused untouched, a run stopped midway leaves the former run whole; and a table without
periods (no ledger line at all) still gives every table its columns and the report."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import polars as pl

from qmcredit.batch import synth

from .conftest import EXE, qmcredit

REFORMS = Path(__file__).resolve().parents[2] / "examples" / "reforms"


def _reform(data: Path, out: Path, *reforms: str) -> dict:
    done = qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
                    *(a for r in reforms for a in ("--reform", str(REFORMS / f"{r}.toml"))), "--out", str(out))
    return json.loads(done.stdout)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_rerun_replaces_the_folder_whole(data, tmp_path):
    out = tmp_path / "out"
    _reform(data, out, "double_amounts", "hours_120")
    assert sorted(p.name for p in (out / "scenarios").iterdir()) == ["baseline", "double_amounts", "hours_120"]
    told = _reform(data, out, "double_amounts")
    assert sorted(p.name for p in (out / "scenarios").iterdir()) == ["baseline", "double_amounts"]  # the former run's hours_120 is gone
    assert pl.read_parquet(out / "totals.parquet").get_column("scenario").to_list() == ["baseline", "double_amounts"]
    assert all(Path(path).is_file() and Path(path).parent.resolve() in (out.resolve(), *(out.resolve() / "scenarios").iterdir())
               for path in told["files"].values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no fresh or former folder left beside it


def test_a_folder_of_other_files_is_refused_untouched(data, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for args in (["reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet")],
                 ["cost", str(data / "batch"), "--claims", str(data / "in/claims.parquet")]):
        done = subprocess.run([str(EXE), *args, "--out", str(out)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and any("notes.txt" in line and "--out holds other files" in line for line in done.stderr.splitlines()), done.stderr
        assert _files(out) == {"notes.txt": b"mine"} and sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_cost_reruns_into_its_own_folder(data, tmp_path):
    out = tmp_path / "cost"
    for _ in range(2):
        qmcredit("cost", str(data / "batch"), "--claims", str(data / "in/claims.parquet"), "--out", str(out))
    assert {p.name for p in out.iterdir()} >= {"totals.parquet", "claims.csv", "analysis.xlsx", "report.html"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cost"]


def test_a_run_stopped_midway_leaves_the_former_run_whole(tmp_path):
    """SIGTERM at any moment of a rerun: ``--out`` holds the former run byte for byte, or the new
    one whole (the signal came as it was swapped in, or after), never a mix, nothing beside it."""
    big = synth.write(tmp_path / "big", 6000, 9, kind="parquet")
    out, new = tmp_path / "out", tmp_path / "new"
    args = [str(EXE), "reform", str(big["claims"]), str(big["payroll"]), "--periods", str(big["periods"])]
    reform = ["--reform", str(REFORMS / "double_amounts.toml")]
    assert subprocess.run([*args, "--out", str(out)], capture_output=True, timeout=300).returncode == 0
    assert subprocess.run([*args, *reform, "--out", str(new)], capture_output=True, timeout=300).returncode == 0
    before, whole = _files(out), set(_files(new))
    shutil.rmtree(new)
    p = subprocess.Popen([*args, *reform, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while p.poll() is None and not any(q.name.startswith(".out.new-") for q in tmp_path.iterdir()):
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGTERM)
    err = p.communicate(timeout=120)[1].decode()
    now = _files(out)
    assert (p.returncode, err) in ((143, "terminated\n"), (0, "")), err  # stopped, or finished before the signal came
    assert now == before or (set(now) == whole and now != before), sorted(now)
    assert p.returncode == 143 or now != before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["big", "out"]


def test_a_table_without_periods_gives_every_table_its_columns(data, tmp_path):
    out = tmp_path / "out"
    qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--reform", str(REFORMS / "double_amounts.toml"),
             "--out", str(out))  # no --periods: no ledger line, nothing applied (it failed with an internal error)
    fy = pl.read_parquet(out / "by_fiscal_year.parquet")
    assert fy.height == 0 and fy.columns == ["scenario", "fiscal_year", "allowed", "applied", "refunded", "forfeited", "carried_forward", "cost"]
    totals = pl.read_parquet(out / "totals.parquet")
    assert totals.get_column("cost").to_list() == ["0.00", "0.00"] and (out / "report.html").stat().st_size > 0


def test_cost_refuses_a_claims_table_the_batch_did_not_decide(data, tmp_path):
    """``qmcredit cost RESULTS --claims TABLE``: the claims table gives each claim its tax, so it
    must be the batch's. Another table (another synthetic set), one lacking claims, or none at all
    is refused naming --claims and the table the batch read (manifest.json); before, the claims it
    lacked went untaxed and the rest took its taxes, exit 0, or a missing file was an internal
    error."""
    other = tmp_path / "other"
    qmcredit("synth", "--out", str(other), "--claims", "40", "--seed", "9")
    fewer = tmp_path / "fewer.parquet"
    pl.read_parquet(data / "in/claims.parquet").head(-1).write_parquet(fewer)
    batch_read = str((data / "in/claims.parquet").resolve())
    for table, said in ((other / "claims.parquet", "is not the claims table the batch decided"),
                        (tmp_path / "missing.parquet", "no such file"), (fewer, "is not the claims table the batch decided")):
        done = subprocess.run([str(EXE), "cost", str(data / "batch"), "--claims", str(table), "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and done.stderr.startswith(f"error: --claims: {table}") and said in done.stderr, done.stderr
        assert batch_read in done.stderr and not (tmp_path / "out").exists()
    batch = tmp_path / "batch"  # a results folder without its manifest (moved, or an older run): the claims are still checked
    shutil.copytree(data / "batch", batch)
    (batch / "manifest.json").unlink()
    done = subprocess.run([str(EXE), "cost", str(batch), "--claims", str(fewer), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "1 of the batch's claims is not in it" in done.stderr, done.stderr
