"""Reform files (docs/analysis.md): any parameter of law/parameters/ and any option, changed from
a date, named and cited; a bad file is reported change by change, never as a traceback."""

from __future__ import annotations

import subprocess
from datetime import date
from decimal import Decimal

import polars as pl
import pytest

from qmcredit.law.parameter_set import baseline, reform_from_dict

from .conftest import EXE, qmcredit

CITED = {"source": "test", "cite": "tests/analysis/test_reform_files.py"}


def _toml(name: str, changes: list[str]) -> str:
    return f'name = "{name}"\n' + "".join(f'\n[[change]]\nsource = "test"\ncite = "t"\n{c}\n' for c in changes)


@pytest.fixture(scope="module")
def run(data):
    folder = data / "reform_files"
    folder.mkdir(exist_ok=True)
    files = {
        "no_camden": _toml("no_camden", ['name = "Camden no longer qualified"\nparameter = "municipalities"\nfrom = "2000-01-01"\nremove = ["camden"]']),
        "whole": _toml("whole", ['name = "Whole positions"\noption = "whole_positions"\nvalue = true\nfrom = "2000-01-01"']),
        "dear_minimum": _toml("dear_minimum", ['name = "A $100,000 minimum"\nparameter = "minimum_tax.schedule"\nfrom_year = 2000\n'
                                               'brackets = [{ bracket_from = "0", minimum = "100000.00" }]']),
    }
    paths = []
    for name, text in files.items():
        (folder / f"{name}.toml").write_text(text)
        paths += ["--reform", str(folder / f"{name}.toml")]
    qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             *paths, "--out", str(data / "reform_files/out"))
    return data / "reform_files/out"


def test_e2_municipalities_removed_make_every_claim_there_ineligible(run):
    base = pl.read_parquet(run / "scenarios/baseline/claims.parquet").filter(pl.col("status") == "decided")
    claims = pl.read_parquet(run / "scenarios/no_camden/claims.parquet").filter(pl.col("status") == "decided")
    assert not claims.get_column("eligible").any()
    assert all("E2" in r for r in claims.get_column("ineligible_because").to_list())
    changes = pl.read_parquet(run / "changes.parquet").filter(pl.col("scenario") == "no_camden").row(0, named=True)
    assert changes["become_ineligible"] == base.filter(pl.col("eligible")).height


def test_c1_an_option_set_by_a_reform_applies_to_every_claim(run):
    claims = pl.read_parquet(run / "scenarios/whole/claims.parquet").filter((pl.col("status") == "decided") & pl.col("new_year_one").is_not_null())
    assert all(Decimal(v) == Decimal(v).to_integral_value() for v in claims.get_column("new_year_one").to_list())
    base = pl.read_parquet(run / "scenarios/baseline/claims.parquet").filter(pl.col("status") == "decided")
    assert not all(Decimal(v) == Decimal(v).to_integral_value() for v in base.get_column("new_year_one").drop_nulls().to_list())


def test_l2_a_minimum_tax_schedule_changes_the_floor_of_periods_that_derive_it(data, run):
    periods = pl.read_parquet(data / "in/periods.parquet").with_columns(pl.int_range(pl.len()).over("claim_id").alias("period"))
    derived = {(c, p): Decimal(liab) for c, p, liab, mt in periods.select("claim_id", "period", "liability", "minimum_tax").iter_rows() if mt is None}
    given = {(c, p) for c, p, mt in periods.select("claim_id", "period", "minimum_tax").iter_rows() if mt is not None}
    base = {(r["claim_id"], r["period"]): r["room"] for r in pl.read_parquet(run / "scenarios/baseline/ledger.parquet").iter_rows(named=True)}
    reform = pl.read_parquet(run / "scenarios/dear_minimum/ledger.parquet")
    claims = pl.read_parquet(run / "scenarios/baseline/claims.parquet")
    cbt = set(pl.read_parquet(data / "in/claims.parquet").filter(pl.col("tax") == "cbt").get_column("claim_id").to_list())
    hit = 0
    for r in reform.iter_rows(named=True):
        key = (r["claim_id"], r["period"])
        if key in derived and r["claim_id"] in cbt and derived[key] <= Decimal("100000"):
            assert r["room"] == "0.00", key
            hit += 1
        elif key in given:
            assert r["room"] == base[key], key
    assert hit > 0 and claims.height


def test_a_set_is_read_through_not_patched():
    reform = reform_from_dict({"name": "more", "change": [
        {"name": "Trenton", "parameter": "municipalities", "from": "2010-01-01", "add": [{"name": "Trenton", "aliases": ["City of Trenton"]}], **CITED},
        {"name": "More", "parameter": "amount_year_one", "from": "2010-01-01", "value": "4000.00", **CITED},
    ]})
    assert [m.name for m in reform.qualified(date(2009, 12, 1))] == ["Camden"]
    assert [m.name for m in reform.qualified(date(2010, 1, 1))] == ["Camden", "Trenton"]
    assert reform.parameter("amount_year_one").at(date(2009, 1, 1)).value == Decimal("2500.00")
    assert reform.parameter("amount_year_one").at(date(2011, 1, 1)).value == Decimal("4000.00")
    assert baseline().parameter("amount_year_one").at(date(2011, 1, 1)).value == Decimal("2500.00")
    assert [m.name for m in baseline().qualified(date(2011, 1, 1))] == ["Camden"]


def test_a_bad_reform_file_is_reported_change_by_change(data, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n\n[[change]]\nname = "x"\nparameter = "amount_year_three"\nsource = "s"\ncite = "c"\n'
                   '\n[[change]]\nname = "y"\nparameter = "amount_year_one"\nfrom = "2010-01-01"\nvalue = 5000\nsource = "s"\n'
                   '\n[[change]]\nname = "z"\noption = "whole_positions"\nvalue = "sometimes"\nfrom = "2010-01-01"\nsource = "s"\ncite = "c"\n')
    done = subprocess.run([str(EXE), "reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--reform", str(bad),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    for where in ("change[0].parameter", "change[1].cite", "change[1].value", "change[2].value"):
        assert where in done.stderr, (where, done.stderr)
    # a problem a line, the file named once (it was named twice: as the error's source and in its location)
    assert all(line.startswith(f"error: {bad}: change[") and line.count(str(bad)) == 1 for line in done.stderr.splitlines()), done.stderr
    assert not (tmp_path / "out").exists()


def _as_received(params) -> tuple[int, bool, str]:
    """In a worker process: the set it was sent, by identity."""
    return id(params), params is baseline(), params.name


def test_a_set_sent_to_a_worker_process_is_one_object_there():
    """A partition's task carries its parameter sets to a worker process (pickled): there, a set
    is one object however many partitions carry it, and the baseline is the baseline, so that the
    caches keyed by a set (its hash is its identity) serve every partition, not one."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    amounts = reform_from_dict({"name": "amounts", "change": [{"name": "More", "parameter": "amount_year_one", "value": "3000", "from": "2000-01-01", **CITED}]})
    other = reform_from_dict({"name": "amounts", "change": [{"name": "More", "parameter": "amount_year_one", "value": "3500", "from": "2000-01-01", **CITED}]})
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as worker:
        sent = [worker.submit(_as_received, p).result() for p in (amounts, amounts, other, baseline(), baseline())]
    assert sent[0] == sent[1] and sent[0][1:] == (False, "amounts")
    assert sent[2][0] != sent[0][0]  # another content: another set, though named alike
    assert sent[3] == sent[4] and sent[3][1] is True


def test_a_killed_runs_partition_files_are_removed_by_the_next_run(data, tmp_path):
    """A reform killed while deciding (SIGKILL: nothing of it runs again) leaves its partition
    files in ``.qmcredit-reform-PID-*``: under ``--workdir`` when given, else in its new folder
    beside ``--out`` (``.out.new-PID-*``). The next run removes them, as the batch removes its own,
    and leaves those of a run still going (its process alive)."""
    import os
    import sys

    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True).stdout)
    work, out = tmp_path / "work", tmp_path / "out"
    left = {  # where a killed run and a running one left their partition files
        "workdir": (work / f".qmcredit-reform-{gone}-abc", work / f".qmcredit-reform-{os.getpid()}-def"),
        "default": (tmp_path / f".out.new-{gone}-abc", tmp_path / f".out.new-{os.getpid()}-def"),
    }
    for killed, running in left.values():
        for folder in (killed, running):
            (folder / "part-0").mkdir(parents=True)
            (folder / "part-0" / "rows.arrow").write_bytes(b"rows")
    for how, (killed, running) in left.items():
        qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
                 "--out", str(out), *(["--workdir", str(work)] if how == "workdir" else []))
        assert not killed.exists() and (running / "part-0" / "rows.arrow").read_bytes() == b"rows"
    assert sorted(p.name for p in work.iterdir()) == [left["workdir"][1].name]  # the run's own removed once done
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([left["default"][1].name, "out", "work"])
