"""The reform's second decision pass (issue 17 item 4): a reform that changes only parameters read
after ``core.prepare`` (C2's amounts, P2-P3's hour tests, L5's carryforward: each parameter names
its rule) reuses the baseline's prepared claims, and gives exactly what deciding it from scratch
gives; a reform of anything ``prepare`` reads (L2's share and minimum tax, E2's municipalities, an
option) prepares again. One reform of every kind the parameter set holds: each parameter of
``law/parameters/credit.toml`` (a new one joins by itself), the municipalities, both minimum-tax
changes and an option."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from qmcredit.core import PREPARE_RULES, cached_constants, measure, measured_again, prepare, prepared_again, read_after_prepare
from qmcredit.law.parameter_set import baseline, load_reform

from .conftest import qmcredit

CITED = 'source = "test"\ncite = "tests/analysis/test_second_pass.py"\n'
EARLY = "2000-01-01"  # before every generated credit year: each change is in force for every claim


def _changed(value: Decimal) -> str:
    """A parameter's value halved, with its own decimal places (2500.00 -> 1250.00, 140 -> 70,
    0.50 -> 0.25, 5 -> 2)."""
    return str((value / 2).quantize(value))


def _kinds() -> dict[str, str]:
    """name -> the [[change]] table of a reform of that kind."""
    kinds = {name: f'parameter = "{name}"\nfrom = "{EARLY}"\nvalue = "{_changed(par.values[-1].value)}"\n'
             for name, par in baseline().credit.items()}
    kinds["municipalities"] = f'parameter = "municipalities"\nfrom = "{EARLY}"\nremove = ["camden"]\n'
    kinds["minimum_tax_schedule"] = 'parameter = "minimum_tax.schedule"\nfrom_year = 2000\nbrackets = [{ bracket_from = "0", minimum = "100000.00" }]\n'
    kinds["s_corporation"] = 'parameter = "minimum_tax.s_corporation"\nfrom_year = 2000\nshare = "0.25"\n'
    kinds["option_refund"] = f'option = "refund"\nvalue = false\nfrom = "{EARLY}"\n'
    return kinds


KINDS = _kinds()


@pytest.fixture(scope="module")
def reforms(data) -> dict[str, Path]:
    folder = data / "second_pass"
    folder.mkdir(exist_ok=True)
    files = {}
    for name, change in KINDS.items():
        files[name] = folder / f"{name}.toml"
        files[name].write_text(f'name = "{name}"\n\n[[change]]\nname = "{name} changed"\n{CITED}{change}')
    return files


@pytest.fixture(scope="module")
def run(data, reforms) -> Path:
    """Every reform in one ``qmcredit reform`` run, after the baseline: the second pass of each."""
    qmcredit("reform", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             *(a for f in reforms.values() for a in ("--reform", str(f))), "--out", str(data / "second_pass/out"))
    return data / "second_pass/out"


def test_the_parameters_read_after_prepare_are_told_by_their_rules(reforms):
    for name, path in reforms.items():
        par = baseline().credit.get(name)
        after = par is not None and par.rule not in PREPARE_RULES
        assert read_after_prepare(load_reform(path), baseline()) == after, name
    assert {n for n, p in baseline().credit.items() if p.rule not in PREPARE_RULES} >= {"amount_year_one", "amount_year_two", "full_time_hours_per_month",
                                                                                        "carryforward_periods"}
    assert not read_after_prepare(baseline(), load_reform(reforms["option_refund"]))
    assert read_after_prepare(baseline(), baseline())


@pytest.mark.parametrize("name", list(KINDS))
def test_a_reform_after_the_baseline_decides_as_the_reform_alone(data, reforms, run, name):
    """The reform's tables of the one run (the baseline decided first, its prepared claims reused
    when the reform allows) are those of the reform decided alone, from scratch."""
    from qmcredit.analysis.reform import decide_scenarios

    [alone], _ = decide_scenarios(data / "in/claims.parquet", data / "in/payroll.parquet", data / "in/periods.parquet", [load_reform(reforms[name])])
    for table in ("claims", "ledger"):
        got = pl.read_parquet(run / f"scenarios/{name}/{table}.parquet")
        assert got.equals(getattr(alone, table)), (name, table)


def test_the_reforms_read_after_prepare_change_the_figures(run):
    """The equivalence above proves something: the reforms that reuse the baseline's prepared
    claims do change figures."""
    base = pl.read_parquet(run / "scenarios/baseline/ledger.parquet")
    for name in ("amount_year_one", "amount_year_two", "full_time_hours_per_month", "carryforward_periods"):
        assert not pl.read_parquet(run / f"scenarios/{name}/ledger.parquet").equals(base), name


@pytest.fixture(scope="module")
def prepared(data) -> tuple[dict, dict, dict]:
    """The generated set's valid headers, each claim's taxpayer window (E4) and the claims
    ``prepare`` reads under the baseline (those it refuses left out)."""
    from qmcredit.batch.partition import _windows, headers, return_members
    from qmcredit.batch.tables import read_tables
    from qmcredit.problems import ClaimError

    table, periods = read_tables(data / "in/claims.parquet", data / "in/periods.parquet")
    valid, _ = headers(table, periods)
    window_of = _windows(return_members(table, list(valid)), valid)
    cache: dict = {}
    claims = {}
    for cid, header in valid.items():
        try:
            claims[cid] = prepare(header, cid, cache, window_of.get(cid), baseline())
        except ClaimError:
            continue
    return valid, window_of, claims


def _read_after_prepare(reforms: dict[str, Path]):
    """(name, reform) of each reform whose changes are all read after prepare (``prepared_again``'s)."""
    for name, path in reforms.items():
        reform = load_reform(path)
        if read_after_prepare(reform, baseline()):
            yield name, reform


def test_a_claim_prepared_again_is_the_claim_prepared_under_the_reform(reforms, prepared):
    """``prepared_again`` gives, field by field, what ``prepare`` gives under the reform, for every
    claim of the generated set and every reform read after prepare."""
    valid, window_of, prepared = prepared
    checked = 0
    for name, reform in _read_after_prepare(reforms):
        cache: dict = {}
        for cid, prep in prepared.items():
            assert prepared_again(prep, cached_constants(valid[cid], cache, reform)) == prepare(valid[cid], cid, {}, window_of.get(cid), reform), (name, cid)
        checked += 1
    assert checked >= 4 and len(prepared) > 200


def test_a_claim_measured_again_is_the_claim_measured_under_the_reform(reforms, prepared):
    """``measured_again`` (C2 and C3 on the first scenario's P5 averages and C1 positions) gives
    what ``measure`` gives under the reform, for every claim of the generated set whose P1-P4
    constants the reform leaves as they were, under each reform read after prepare, whatever the
    hours counted; a reform of the hour tests changes those constants, and is measured anew."""
    valid, _, prepared = prepared
    hours = [(0, 0, 0, 0, 0, 0), (12, 15, 9, 0, 0, 0), (3, 40, 41, 1_680 * 10**6, 0, 7 * 10**9), (100, 340, 200, 5 * 10**11, 6 * 10**11, 0)]
    again = {}
    for name, reform in _read_after_prepare(reforms):
        cache: dict = {}
        for cid, prep in prepared.items():
            other = prepared_again(prep, cached_constants(valid[cid], cache, reform))
            alike = other.constants.columns == prep.constants.columns
            again[name] = again.get(name, 0) + alike
            for sums in hours:
                if alike:
                    assert measured_again(other, measure(prep, sums)) == measure(other, sums), (name, cid, sums)
    assert again["amount_year_one"] == again["carryforward_periods"] == len(prepared) > 200
    assert again["full_time_hours_per_month"] < len(prepared)


def test_a_later_scenario_settles_again_only_the_returns_it_changes(data, reforms, monkeypatch):
    """L4-L6 are settled again, in a reform's pass, only for the claims whose settling inputs it
    changes (``partition._settles_alike``): under a reform of the amounts, the claims without a
    credit keep the baseline's figures and rows, and the reform's tables are those it gives
    decided alone (no ``shared``)."""
    from concurrent.futures import Future

    from qmcredit.batch import partition
    from qmcredit.batch.engine import PayrollSource, read_rows
    from qmcredit.batch.tables import read_tables

    table, periods = read_tables(data / "in/claims.parquet", data / "in/periods.parquet")
    ids = sorted(cid for cid in table.get_column("claim_id").to_list() if cid)
    source = PayrollSource(str(data / "in/payroll.parquet"), ("payroll.parquet line ", ""), False)
    reading = Future()
    reading.set_result(read_rows(source, ids))
    settled: list[int] = []
    settle = partition._settled
    monkeypatch.setattr(partition, "_settled", lambda chosen, measured, members: settled.append(len(chosen)) or settle(chosen, measured, members))
    reform = load_reform(reforms["amount_year_one"])
    shared: dict = {}
    first, again = (partition.decide_partition(table, periods, source, True, ids, reading, params, shared) for params in (baseline(), reform))
    alone = partition.decide_partition(table, periods, source, True, ids, reading, reform)
    assert again.claims.equals(alone.claims) and again.ledger.equals(alone.ledger) and again.jsonl == alone.jsonl
    assert not again.ledger.equals(first.ledger)
    no_credit = first.claims.filter((pl.col("status") == "decided") & (pl.col("credit_year_one") == "0.00")).height
    assert no_credit > 50 and settled[0] == settled[2] and settled[1] <= settled[0] - no_credit
