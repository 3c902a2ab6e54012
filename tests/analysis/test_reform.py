"""``qmcredit reform``: a reform that changes nothing decides exactly as the baseline, and
reforms of the amounts (C2), the 140 hours (P2), the 50% share (L2) and the carryforward (L5)
agree, claim by claim, with an independent reading of RULES.md under the changed parameters
(``tests/oracle.py`` given the parameters). Issue 17."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from qmcredit.batch import synth

from ..oracle import oracle
from .conftest import CLAIMS, SEED, qmcredit

EARLY = "2000-01-01"  # before every generated credit year: the reform's value is in force for every claim
REFORMS = {
    "amounts": ({"amount_year_one": 3000, "amount_year_two": 2000}, [("amount_year_one", "3000.00"), ("amount_year_two", "2000.00")]),
    "hours_120": ({"full_time_hours": 120}, [("full_time_hours_per_month", "120")]),
    "share_40": ({"share": Decimal("0.40")}, [("credit_limit_share", "0.40")]),
    "carry_2": ({"carryforward": 2}, [("carryforward_periods", "2")]),
}


def reform_file(folder: Path, name: str, changes: list[tuple[str, str]]) -> Path:
    text = f'name = "{name}"\ndescription = "test reform {name}"\n'
    for par, value in changes:
        text += (f'\n[[change]]\nname = "{par} to {value}"\nparameter = "{par}"\nfrom = "{EARLY}"\nvalue = "{value}"\n'
                 f'source = "test"\ncite = "tests/analysis/test_reform.py"\n')
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def run(data):
    folder = data / "reforms"
    folder.mkdir(exist_ok=True)
    files = [reform_file(folder, "restated", [("amount_year_one", "2500.00"), ("full_time_hours_per_month", "140"), ("credit_limit_share", "0.50"),
                                              ("carryforward_periods", "5")])]
    files += [reform_file(folder, name, changes) for name, (_, changes) in REFORMS.items()]
    qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             *(a for f in files for a in ("--reform", str(f))), "--out", str(data / "reform"))
    return data / "reform"


def test_a_reform_that_changes_nothing_is_the_baseline_claim_by_claim_and_in_every_total(data, run):
    for table in ("claims", "ledger"):
        base = pl.read_parquet(data / f"batch/{table}.parquet")
        assert pl.read_parquet(run / f"scenarios/baseline/{table}.parquet").equals(base)
        assert pl.read_parquet(run / f"scenarios/restated/{table}.parquet").equals(base)
    for table in ("totals", "by_fiscal_year", "by_tax", "by_firm_size", "by_credit_year"):
        df = pl.read_parquet(run / f"{table}.parquet")
        parts = df.partition_by("scenario", as_dict=True, include_key=False)
        assert parts[("restated",)].equals(parts[("baseline",)]), table
    changes = pl.read_parquet(run / "changes.parquet").filter(pl.col("scenario") == "restated").row(0, named=True)
    assert changes["same"] == CLAIMS and changes["gain"] == changes["lose"] == 0


def _documents(data: Path) -> dict[str, dict]:
    """The generated claims as the oracle reads them (employees embedded), where it can: every
    period's minimum tax given, no as_of, one basis and ownership per employee."""
    rows = pl.read_parquet(data / "in/payroll.parquet").with_columns(pl.col("claim_id").str.strip_chars())
    by_claim = rows.partition_by("claim_id", as_dict=True)
    docs = {}
    for cid, doc in synth.documents(CLAIMS, SEED):
        if doc.get("as_of") or any("minimum_tax" not in p for p in doc.get("periods", [])):
            continue
        employees, ok = [], True
        for (eid,), e in by_claim.get((cid,), rows.clear()).partition_by("employee_id", as_dict=True).items():
            kinds = e.select("basis", "ownership_interest", "owner_relation").unique()
            if kinds.height != 1:
                ok = False
                break
            basis, owner, relation = kinds.row(0)
            employees.append({"id": eid, "basis": basis or "permanent", "ownership_interest": owner == "true", "owner_relation": relation,
                              "hours": dict(e.select("month", "hours").iter_rows())})
        if ok:
            docs[cid] = {**doc, "employees": employees}
    return docs


@pytest.mark.parametrize("name", list(REFORMS))
def test_reforms_agree_with_the_independent_reading_claim_by_claim(data, run, name):
    params = REFORMS[name][0]
    claims = pl.read_parquet(run / f"scenarios/{name}/claims.parquet").filter(pl.col("status") == "decided")
    ledger = pl.read_parquet(run / f"scenarios/{name}/ledger.parquet")
    lines = {}
    for row in ledger.iter_rows(named=True):
        lines.setdefault(row["claim_id"], []).append(row)
    docs = _documents(data)
    checked = 0
    for row in claims.iter_rows(named=True):
        doc = docs.get(row["claim_id"])
        if doc is None:
            continue
        want = oracle(doc, params)
        assert row["eligible"] == want["eligible"], row["claim_id"]
        assert [Decimal(row["credit_year_one"]), Decimal(row["credit_year_two"])] == want["credit"], row["claim_id"]
        assert Decimal(row["refund"]) == want["refund"] and Decimal(row["carried_forward"]) == want["carried_forward"], row["claim_id"]
        for got, exp in zip(lines.get(row["claim_id"], []), want["periods"]):
            for k, v in exp.items():
                assert Decimal(got[k]) == v, (row["claim_id"], got["period"], k)
        checked += 1
    assert checked >= CLAIMS // 3  # the others derive their minimum tax from receipts, or have as_of
    base = pl.read_parquet(run / "scenarios/baseline/claims.parquet")
    assert not pl.read_parquet(run / f"scenarios/{name}/claims.parquet").equals(base), "the reform changed nothing: the test would prove nothing"


def test_claims_side_by_side_hold_both_figures_and_the_difference(run):
    claims = pl.read_parquet(run / "claims.parquet").filter(pl.col("scenario") == "amounts")
    for row in claims.iter_rows(named=True):
        assert Decimal(row["cost"]) - Decimal(row["cost_baseline"]) == Decimal(row["cost_difference"])
        assert Decimal(row["credit"]) - Decimal(row["credit_baseline"]) == Decimal(row["credit_difference"])
    changes = pl.read_parquet(run / "changes.parquet").filter(pl.col("scenario") == "amounts").row(0, named=True)
    assert changes["gain"] > 0 and changes["lose"] == 0
    assert sum(changes[k] for k in ("same", "gain", "lose", "timing", "become_eligible", "become_ineligible")) == CLAIMS


def test_partitions_and_processes_decide_as_one(data, run, tmp_path):
    """The batch's reading (issue 17 item 4): a payroll table in claim order read in runs of rows,
    without a split pass, and one out of claim order split by claim hash; in one process and on
    two. The baseline is the batch's own output for the same table, and the reform's tables are
    those of the one-partition run (but for the payroll rows' line numbers in problems)."""
    from qmcredit.analysis.reform import decide_scenarios
    from qmcredit.batch import engine
    from qmcredit.law.parameter_set import baseline, load_reform

    table = pl.read_parquet(data / "in/payroll.parquet")
    ordered, shuffled = tmp_path / "ordered/payroll.parquet", tmp_path / "shuffled/payroll.parquet"
    ordered.parent.mkdir()
    shuffled.parent.mkdir()
    table.sort("claim_id", maintain_order=True).write_parquet(ordered, row_group_size=10_000)
    table.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(shuffled)
    assert engine.claim_ranges(shuffled, 40_000, 1) is None
    sets = [baseline(), load_reform(data / "reforms/amounts.toml")]
    inputs = (str(data / "in/claims.parquet"), "--periods", str(data / "in/periods.parquet"))
    for payroll in (ordered, shuffled):
        folder = payroll.parent
        qmcredit("batch", inputs[0], str(payroll), *inputs[1:], "--rows-per-partition", "40000", "--jobs", "1", "--out", str(folder / "batch"))
        qmcredit("reform", inputs[0], str(payroll), *inputs[1:], "--reform", str(data / "reforms/amounts.toml"),
                 "--rows-per-partition", "40000", "--jobs", "1", "--out", str(folder / "reform"))
        scenarios, info = decide_scenarios(data / "in/claims.parquet", payroll, data / "in/periods.parquet", sets, jobs=2, rows_per_process=1,
                                           rows_per_partition=60000, workdir=tmp_path)
        assert info["partitions"] >= 2 and info["rows"] == table.height
        if payroll == ordered:  # runs of rows, as the batch reads this table
            assert info["partitions"] == len(engine.claim_ranges(ordered, min(30_000, -(-table.height // 8)), 2))
        for s in scenarios:
            for t in ("claims", "ledger"):
                got = pl.read_parquet(folder / f"reform/scenarios/{s.params.name}/{t}.parquet")
                assert getattr(s, t).equals(got), (folder.name, s.params.name, t)
                if s.params.name == "baseline":
                    assert got.equals(pl.read_parquet(folder / f"batch/{t}.parquet")), (folder.name, t)
                want = pl.read_parquet(run / f"scenarios/{s.params.name}/{t}.parquet")
                assert got.drop("problems", strict=False).equals(want.drop("problems", strict=False)), (folder.name, s.params.name, t)


@pytest.mark.parametrize("order", ["claim order", "shuffled"])
def test_claims_without_payroll_rows_are_refused_as_the_batch_refuses_them(data, run, tmp_path, monkeypatch, order):
    """Issue 14 in a reform: a claim no payroll row matches is refused in every scenario, as the
    batch refuses it, found by the partitions that read the rows (``PartitionResult.unrowed``):
    the payroll table is read once (issue 17 item 4), not again for its claim ids."""
    from qmcredit.analysis import reform
    from qmcredit.analysis.reform import decide_scenarios
    from qmcredit.batch import engine
    from qmcredit.law.parameter_set import baseline, load_reform

    table = pl.read_parquet(data / "in/payroll.parquet")
    known = set(pl.read_parquet(data / "in/claims.parquet").get_column("claim_id").to_list())
    ids = [cid for cid in table.get_column("claim_id").unique(maintain_order=True).to_list() if cid in known]
    gone = {ids[0], ids[len(ids) // 2], ids[-1]}
    thinned = table.filter(~pl.col("claim_id").is_in(list(gone)))
    payroll = tmp_path / "payroll.parquet"
    (thinned.sample(fraction=1.0, shuffle=True, seed=3) if order == "shuffled" else thinned).write_parquet(payroll, row_group_size=10_000)
    inputs = (str(data / "in/claims.parquet"), str(payroll), "--periods", str(data / "in/periods.parquet"), "--rows-per-partition", "40000")
    qmcredit("batch", *inputs, "--out", str(tmp_path / "batch"))
    qmcredit("reform", *inputs, "--reform", str(data / "reforms/amounts.toml"), "--out", str(tmp_path / "reform"))
    for t in ("claims", "ledger"):
        assert pl.read_parquet(tmp_path / f"reform/scenarios/baseline/{t}.parquet").equals(pl.read_parquet(tmp_path / f"batch/{t}.parquet")), t
    for name in ("baseline", "amounts"):
        claims = pl.read_parquet(tmp_path / f"reform/scenarios/{name}/claims.parquet").filter(pl.col("claim_id").is_in(list(gone)))
        assert claims.get_column("status").to_list() == ["invalid"] * len(gone), name
        assert all(f"no row of the payroll table has claim_id {cid!r}" in p for cid, p in claims.select("claim_id", "problems").iter_rows())

    told = []

    def unmatched(claims, payroll, decided, unrowed=None, shown=None):
        told.append(unrowed)
        return engine._unmatched(claims, payroll, decided, unrowed, shown)

    monkeypatch.setattr(reform, "_unmatched", unmatched)
    sets = [baseline(), load_reform(data / "reforms/amounts.toml")]
    scenarios, info = decide_scenarios(data / "in/claims.parquet", payroll, data / "in/periods.parquet", sets, rows_per_partition=40_000, workdir=tmp_path)
    assert info["partitions"] >= 2 and told == [gone]  # told by the partitions, not read again
    for s in scenarios:
        assert s.claims.equals(pl.read_parquet(tmp_path / f"reform/scenarios/{s.params.name}/claims.parquet")), s.params.name


@pytest.mark.slow
def test_a_dask_cluster_decides_as_one_process(data, run, tmp_path):
    """``--workers``: the partitions as Dask tasks on a local cluster, the same tables."""
    qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             "--reform", str(data / "reforms/amounts.toml"), "--workers", "2", "--out", str(tmp_path / "dask"))
    for name in ("baseline", "amounts"):
        for table in ("claims", "ledger"):
            assert pl.read_parquet(tmp_path / f"dask/scenarios/{name}/{table}.parquet").equals(pl.read_parquet(run / f"scenarios/{name}/{table}.parquet"))
    assert pl.read_parquet(tmp_path / "dask/totals.parquet").equals(pl.read_parquet(run / "totals.parquet").filter(pl.col("scenario").is_in(["baseline", "amounts"])))


def test_the_counts_are_shared_unless_a_reform_changes_what_they_read(data, run):
    """One decision pass more, not a second count: P1-P4 are counted once for the baseline and a
    reform of the amounts (C2), and again, from the rows in memory, for one of the 140 hours (P2)."""
    from concurrent.futures import Future

    from qmcredit.batch.engine import PayrollSource, read_rows
    from qmcredit.batch.partition import decide_partition
    from qmcredit.batch.tables import read_tables
    from qmcredit.law.parameter_set import baseline, load_reform

    table, periods = read_tables(data / "in/claims.parquet", data / "in/periods.parquet")
    ids = sorted(cid for cid in table.get_column("claim_id").to_list() if cid)
    source = PayrollSource(str(data / "in/payroll.parquet"), ("payroll.parquet line ", ""), False)
    reading = Future()
    reading.set_result(read_rows(source, ids))
    for reform, counts in (("amounts", 1), ("hours_120", 2)):
        shared: dict = {}
        results = [decide_partition(table, periods, source, False, ids, reading, params, shared)
                   for params in (baseline(), load_reform(data / f"reforms/{reform}.toml"))]
        assert len(shared["counts"]) == counts, reform
        assert results[0].claims.equals(pl.read_parquet(data / "batch/claims.parquet"))
