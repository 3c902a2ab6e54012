"""Issue 14, items 6 and 7, through ``qmcredit batch`` run as a user runs it: a finished run is one
(a fresh folder swapped in, ``manifest.json`` naming every file with its SHA-256 and the inputs),
a killed run never looks finished and leaves no scratch folders once rerun; payroll claim ids of
another type, and claims with no payroll row, are problems on the claims; a truncated Parquet file
or a CSV that is not UTF-8 is named with its place (exit 1, not 3)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qmcredit.batch import outputs, synth

EXE = Path(sys.executable).parent / "qmcredit"


def batch(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), "batch", *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    return synth.write(tmp_path_factory.mktemp("tables"), 300, 5, kind="parquet")


def _manifest_holds(out: Path) -> dict:
    manifest = json.loads((out / "manifest.json").read_text())
    listed = set(manifest["files"]) | {"manifest.json"}
    assert {p.name for p in out.iterdir()} == listed
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == entry["sha256"], name
    return manifest


def test_a_finished_run_has_a_manifest_naming_every_file_and_the_inputs(tables, tmp_path):
    out = tmp_path / "out"
    r = batch(tables["claims"], tables["payroll"], "--periods", tables["periods"], "--out", out, "--jsonl", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    manifest = _manifest_holds(out)
    assert set(manifest["files"]) == {"claims.parquet", "ledger.parquet", "determinations.jsonl", "summary.json"}
    assert manifest["inputs"]["payroll"]["path"] == str(tables["payroll"].resolve())
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no scratch folder beside or inside


def test_a_killed_run_never_looks_finished_and_a_rerun_cleans_up(tables, tmp_path):
    out = tmp_path / "out"
    assert batch(tables["claims"], tables["payroll"], "--out", out, "--jobs", "1").returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    big = synth.write(tmp_path / "big", 6000, 9, kind="parquet")
    proc = subprocess.Popen([str(EXE), "batch", str(big["claims"]), str(big["payroll"]), "--out", str(out), "--jobs", "1", "--jsonl"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # --out is the former run, whole (or the new one, whole, had it finished): never a mix
    now = {p.name: p.read_bytes() for p in out.iterdir()}
    assert now == before or _manifest_holds(out)["inputs"]["claims"]["path"] == str(big["claims"].resolve())
    r = batch(tables["claims"], tables["payroll"], "--out", out, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    _manifest_holds(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "out"]  # the killed run's folder is gone


def test_out_holding_other_files_is_refused(tables, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    r = batch(tables["claims"], tables["payroll"], "--out", tmp_path)
    assert r.returncode == 2 and "notes.txt" in r.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_payroll_claim_ids_of_another_type_are_a_problem_on_every_claim(tmp_path):
    claims = tmp_path / "claims.parquet"
    pl.DataFrame({"claim_id": ["1", "2"], "taxpayer_id": ["22-1", "22-2"], "tax": ["cbt", "cbt"],
                  "municipality": ["Camden", "Camden"], "operations_began": ["2004-03-15", "2004-03-15"],
                  "periods": ['[{"start": "2005-01-01", "end": "2005-12-31", "liability": "1000.00", "minimum_tax": "500.00"}]'] * 2}
                 ).write_parquet(claims)
    payroll = tmp_path / "payroll.parquet"
    pl.DataFrame({"claim_id": [1, 2], "employee_id": ["E1", "E1"], "month": ["2004-05", "2004-05"], "hours": ["160", "160"]}
                 ).write_parquet(payroll)
    r = batch(claims, payroll, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    out = pl.read_parquet(tmp_path / "out" / "claims.parquet")
    assert out.get_column("status").to_list() == ["invalid", "invalid"]
    (problem,) = json.loads(out.get_column("problems")[0])
    assert problem["location"] == "claim_id" and "Int64" in problem["message"] and "String" in problem["message"]
    assert pl.read_parquet(tmp_path / "out" / "ledger.parquet").height == 0


def test_a_claim_without_payroll_rows_is_a_problem(tables, tmp_path):
    claims = pl.read_parquet(tables["claims"])
    payroll = pl.read_parquet(tables["payroll"])
    first = claims.get_column("claim_id")[0]
    thinned = tmp_path / "payroll.parquet"
    payroll.filter(pl.col("claim_id") != first).write_parquet(thinned)
    r = batch(tables["claims"], thinned, "--periods", tables["periods"], "--out", tmp_path / "out", "--jsonl")
    assert r.returncode == 0, r.stderr
    row = pl.read_parquet(tmp_path / "out" / "claims.parquet").filter(pl.col("claim_id") == first).row(0, named=True)
    assert row["status"] == "invalid" and f"no row of the payroll table has claim_id {first!r}" in row["problems"]
    jsonl = {d["claim_id"]: d for d in map(json.loads, (tmp_path / "out" / "determinations.jsonl").read_text().splitlines())}
    assert jsonl[first]["problems"][0]["location"] == "payroll"


def test_a_truncated_parquet_file_is_named_exit_1(tables, tmp_path):
    cut = tmp_path / "payroll.parquet"
    data = tables["payroll"].read_bytes()
    cut.write_bytes(data[: len(data) - 200])
    r = batch(tables["claims"], cut, "--out", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    assert f"{cut}: is not a whole Parquet file" in r.stderr and "internal error" not in r.stderr
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["payroll.parquet"]


def test_a_csv_that_is_not_utf8_is_named_with_its_line_exit_1(tmp_path):
    paths = synth.write(tmp_path / "csv", 30, 3, kind="csv")
    lines = paths["payroll"].read_bytes().split(b"\n")
    lines[41] = lines[41].replace(b"E", b"\xff", 1)
    paths["payroll"].write_bytes(b"\n".join(lines))
    r = batch(paths["claims"], paths["payroll"], "--out", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    assert f"{paths['payroll']} line 42: byte" in r.stderr and "is not UTF-8" in r.stderr


@pytest.mark.parametrize("rows_per_partition, partitions", [(1_000_000, 1), (1, 5)])
def test_a_partition_of_invalid_claims_only_or_of_none_is_decided(tmp_path, rows_per_partition, partitions):
    """A partition whose every claim is invalid (constants all null), or that holds no claim at
    all (more partitions than claims), is decided like any other: no internal error (a polars
    schema error before), the invalid claim reported with its problem, the others decided."""
    pl.DataFrame({"claim_id": ["BAD", "GOOD"], "taxpayer_id": ["T1", "T2"], "tax": ["cbt", "cbt"], "municipality": ["Camden"] * 2,
                  "operations_began": ["not a date", "2004-03-01"]}).write_csv(tmp_path / "claims.csv")
    pl.DataFrame({"claim_id": ["BAD", "GOOD", "GOOD", "GOOD", "GOOD"], "employee_id": ["E1"] * 5,
                  "month": ["2004-01", "2004-01", "2004-02", "2004-03", "2004-04"], "hours": ["160"] * 5}).write_csv(tmp_path / "payroll.csv")
    only_bad = tmp_path / "only_bad.csv"
    pl.read_csv(tmp_path / "claims.csv").head(1).write_csv(only_bad)
    r = batch(only_bad, tmp_path / "payroll.csv", "--out", tmp_path / "out1", "--rows-per-partition", rows_per_partition, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["invalid"] == 1 and "operations_began" in pl.read_parquet(tmp_path / "out1" / "claims.parquet")["problems"][0]
    r = batch(tmp_path / "claims.csv", tmp_path / "payroll.csv", "--out", tmp_path / "out2", "--rows-per-partition", rows_per_partition, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["decided"], summary["invalid"], summary["partitions"]) == (1, 1, partitions)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["C1", "C2", "C10", "C3", None]), st.integers(0, 3)), max_size=12), st.integers(1, 4))
def test_in_order_is_the_sort_and_in_one_piece(rows, pieces):
    """``outputs.in_order`` (the outputs' claim order): the frame ``sort`` gives, whether its rows
    came in order (kept, in one piece) or not, ties and missing ids included."""
    frame = pl.DataFrame(rows, schema={"claim_id": pl.Utf8, "period": pl.Int32}, orient="row")
    cut = [frame.slice(k * len(rows) // pieces, (k + 1) * len(rows) // pieces - k * len(rows) // pieces) for k in range(pieces)]
    joined = pl.concat(cut, rechunk=False)
    got = outputs.in_order(joined, "claim_id", "period")
    want = frame.sort("claim_id", "period")
    if len(set(rows)) == len(rows):  # distinct rows: one order only, in one piece
        assert got.equals(want) and got.n_chunks() == 1
    else:
        assert sorted(got.rows(), key=repr) == sorted(want.rows(), key=repr) and got.equals(got.sort("claim_id", "period"))
    ordered = pl.concat([p for p in (want.slice(0, len(rows) // 2), want.slice(len(rows) // 2)) if p.height] or [want], rechunk=False)
    kept = outputs.in_order(ordered, "claim_id", "period")
    if len(set(rows)) == len(rows):
        assert kept.equals(want)


def test_outputs_in_order_are_written_as_sorted_ones(tmp_path):
    """A ledger that comes back in order in pieces (one a partition) gives the Parquet file its
    sort would: the same bytes."""
    rows = pl.DataFrame({"claim_id": [f"C{k // 7:05d}" for k in range(200_000)], "period": [k % 7 for k in range(200_000)]},
                        schema={"claim_id": pl.Utf8, "period": pl.Int32})
    pieces = pl.concat([rows.slice(0, 70_001), rows.slice(70_001, 90_000), rows.slice(160_001)], rechunk=False)
    outputs.write_parquet(outputs.in_order(pieces, "claim_id", "period"), tmp_path / "a.parquet")
    outputs.write_parquet(pieces.sort("claim_id", "period"), tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_between_the_swaps_two_renames_waits_for_both(tmp_path, monkeypatch, sig):
    """Ctrl-C or SIGTERM right after the former run is moved aside: the new run is put in place
    first, then the signal is answered (before, ``--out`` was left missing, and the next run
    removed the former run too), and the former run's folder is removed (it was left beside)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("former")
    fresh = outputs.fresh_folder(out)
    (fresh / "summary.json").write_text("new")
    real, moved = os.replace, []

    def replace(a, b):
        real(a, b)
        moved.append(b)
        if len(moved) == 1:
            signal.raise_signal(sig)

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    monkeypatch.setattr(os, "replace", replace)
    previous = signal.signal(sig, stop)
    try:
        with pytest.raises(Stopped):
            outputs.swap_in(fresh, out)
    finally:
        signal.signal(sig, previous)
    assert len(moved) == 2 and (out / "summary.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the former run's folder removed, not left beside it


@pytest.mark.parametrize("out", [".", ".."])
def test_out_is_never_the_folder_one_is_in(tables, tmp_path, out):
    """``--out .`` (or a folder holding the one you are in), empty or a former run's: refused,
    untouched. The run replaces ``--out`` whole, and it had moved the folder one was in aside and
    removed it, leaving the shell in a deleted folder."""
    here = tmp_path / "work"
    here.mkdir()
    for args in (["batch", tables["claims"], tables["payroll"]], ["reform", tables["claims"], tables["payroll"]]):
        r = subprocess.run([str(EXE), *map(str, args), "--out", out], capture_output=True, text=True, timeout=300, cwd=here)
        refused = (here / out).resolve()
        assert (r.returncode, r.stderr) == (2, f"error: {refused}: --out is the folder you are in, or holds it; the run replaces the folder "
                                               "whole, so give a folder of its own, such as --out results\n")
        assert list(here.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["work"]  # nothing moved, nothing written


def test_a_refused_option_is_named_as_what_it_is(tables, tmp_path):
    """A problem with a run's options or ``--out`` is one line, ``error: WHERE: WHAT``; before, it
    came under "1 problem in the claim", the words of a claim file's problems."""
    (tmp_path / "afile").write_text("mine")
    r = batch(tables["claims"], tables["payroll"], "--out", tmp_path / "afile")
    assert (r.returncode, r.stderr) == (2, f"error: {tmp_path / 'afile'}: --out is a file; give a folder for the outputs\n")


@pytest.mark.parametrize("command", ["batch", "reform"])
def test_options_out_of_range_are_usage_errors(tables, tmp_path, command):
    """``--rows-per-partition 0`` ran for ever (the batch planned partitions of no rows),
    ``--workers 0`` ran on local processes as if not given, and a ``--scheduler`` that is no
    address or a ``--workdir`` that does not exist ended in an internal error (exit 3): each is
    now refused at once, exit 2, naming the option."""
    out = tmp_path / "out"
    for args, said in ((["--rows-per-partition", "0"], "--rows-per-partition"), (["--workers", "0"], "--workers"),
                       (["--workdir", str(tmp_path / "missing")], "--workdir"), (["--scheduler", "nonsense"], "--scheduler")):
        r = subprocess.run([str(EXE), command, str(tables["claims"]), str(tables["payroll"]), "--out", str(out), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and said in r.stderr and "internal error" not in r.stderr, (args, r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_an_export_read_through_a_mapping_decides_as_the_table_and_the_manifest_names_it(tmp_path):
    """``qmcredit batch CLAIMS EXPORT --mapping FILE``: a payroll export (its own headers,
    semicolons) decides as the payroll table it holds, and the manifest names the export and the
    mapping file, not the scratch table made of them (it named that, removed when the run ended)."""
    tables = synth.write(tmp_path / "tables", 200, 3, kind="parquet", invalid_share=0)  # bad rows are named otherwise in an export (test_exports.py)
    rows = pl.read_parquet(tables["payroll"]).rename({"claim_id": "Client", "employee_id": "Emp #", "month": "Month", "hours": "Hours Worked"})
    export = tmp_path / "export.csv"
    rows.write_csv(export, separator=";")
    mapping = tmp_path / "payroll-mapping.toml"
    mapping.write_text('[columns]\nclaim_id = "Client"\nemployee_id = "Emp #"\nmonth = "Month"\nhours = "Hours Worked"\n')
    plain, mapped = tmp_path / "plain", tmp_path / "mapped"
    assert batch(tables["claims"], tables["payroll"], "--periods", tables["periods"], "--out", plain, "--jobs", "1").returncode == 0
    r = batch(tables["claims"], export, "--periods", tables["periods"], "--out", mapped, "--jobs", "1", "--mapping", mapping)
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(mapped / "claims.parquet").equals(pl.read_parquet(plain / "claims.parquet"))
    inputs = _manifest_holds(mapped)["inputs"]
    assert inputs["payroll"]["path"] == str(export.resolve()) and inputs["mapping"]["path"] == str(mapping.resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "mapped", "payroll-mapping.toml", "plain", "tables"]  # no scratch table left


def test_a_swap_that_fails_puts_the_former_run_back(tmp_path, monkeypatch):
    """The second rename of ``swap_in`` failing (a full or read-only disk): the former run is put
    back in place as it was, nothing left beside it, and the error raised."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("former")
    fresh = outputs.fresh_folder(out)
    (fresh / "summary.json").write_text("new")
    real = os.replace

    def replace(a, b):
        if Path(a) == fresh:
            raise OSError(28, "No space left on device")
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError):
        outputs.swap_in(fresh, out)
    assert (out / "summary.json").read_text() == "former"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", fresh.name])  # the fresh folder is whole_folder's to remove
