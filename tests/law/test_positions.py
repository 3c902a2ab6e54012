"""P1-P5 (52:27BBB-55(e)): who counts, month by month."""

import json
import random
from fractions import Fraction

import pytest

import qmcredit

from ..conftest import base_claim, employee, months

Y1 = months("2004-04", 12)
BASE = months("2003-04", 12)


def avg(emps, period="year_one", **options):
    d = qmcredit.decide(qmcredit.claim_from_dict(base_claim(emps, **options)))
    return Fraction(d.averages[period]), d


def test_P1_owner_and_relatives_count_nowhere():
    for kw in ({"owner": True}, {"relation": "spouse"}, {"relation": "dependant"}, {"relation": "ancestor"}, {"relation": "descendant"}):
        a, d = avg([employee("X", {m: 200 for m in Y1}, **kw)])
        assert a == 0, kw
        statuses = {r["status"] for r in d.employee_month_rows()}
        assert statuses <= {"owner", "owner_relative"}


def test_P2_140_hours_is_full_time_139_99_is_not():
    a, _ = avg([employee("A", {m: 140 for m in Y1})])
    assert a == 1
    a, d = avg([employee("B", {m: "139.99" for m in Y1})])
    assert a == Fraction("139.99") / 140  # a part-time position (>= 86 2/3 in >= 3 months), as equivalents


def test_P2_temporary_and_seasonal_are_never_full_time():
    for basis in ("temporary", "seasonal"):
        _, d = avg([employee("T", {m: 200 for m in Y1}, basis=basis)])
        assert d.months[12].full_time == 0
        assert all(r["status"] == "part_time_equivalent" for r in d.employee_month_rows() if r["period"] == "year_one")


def test_P3_threshold_is_86_and_two_thirds_hours():
    exactly = Fraction(260, 3)
    # 86.666667 > 260/3 meets it; 86.666666 does not
    a, _ = avg([employee("A", {m: "86.666667" for m in Y1[:3]})])
    assert a == Fraction("86.666667") * 3 / 140 / 12
    a, _ = avg([employee("B", {m: "86.666666" for m in Y1[:3]})])
    assert a == 0
    assert Fraction("86.666666") < exactly < Fraction("86.666667")


def test_P3_needs_three_months_not_consecutive_and_counts_all_months_hours():
    hours = {Y1[0]: 90, Y1[5]: 90, Y1[11]: 90, Y1[3]: 40}
    a, _ = avg([employee("A", hours)])
    assert a == Fraction(310, 140 * 12)
    a, _ = avg([employee("B", {Y1[0]: 90, Y1[5]: 90, Y1[3]: 40})])
    assert a == 0


def test_P3_full_time_month_counts_toward_the_three_months():
    a, _ = avg([employee("A", {Y1[0]: 160, Y1[1]: 160, Y1[2]: 50})])
    # two full-time months (2 positions-months) and a 50-hour month; only 2 months >= 86 2/3 ... plus
    # the full-time months meet it, so months meeting = 2 -> not part-time: the 50 hours do not count
    assert a == Fraction(2, 12)
    a, _ = avg([employee("B", {Y1[0]: 160, Y1[1]: 160, Y1[2]: 90, Y1[3]: 50})])
    assert a == Fraction(2, 12) + Fraction(140, 140 * 12)


def test_P3_part_time_is_judged_per_period():
    hours = {BASE[0]: 90, BASE[1]: 90, Y1[0]: 90}
    a, _ = avg([employee("A", hours)], period="base")
    assert a == 0


def test_P3_option_excludes_temporary_from_part_time():
    emps = [employee("T", {m: 100 for m in Y1}, basis="temporary")]
    a, _ = avg(emps)
    assert a == Fraction(100, 140)
    a, d = avg(emps, part_time_excludes_temporary=True)
    assert a == 0
    assert {r["status"] for r in d.employee_month_rows() if r["period"] == "year_one"} == {"temporary_excluded"}


def test_P4_equivalents_are_hours_over_140_of_part_time_positions_not_full_time_that_month():
    a, d = avg([employee("A", {**{m: 100 for m in Y1[:6]}, **{m: 150 for m in Y1[6:]}})])
    assert a == (Fraction(600, 140) + 6) / 12


def test_P5_missing_months_count_as_zero_and_rows_outside_are_classified():
    a, d = avg([employee("A", {Y1[0]: 160, "2010-01": 160})])
    assert a == Fraction(1, 12)
    assert any(r["status"] == "outside_periods" and r["rule"] == "W3" for r in d.employee_month_rows())


def test_P3_boundary_at_nine_decimals_is_exact():
    # 86.666666667 > 260/3 > 86.666666666: nine decimals are kept, never rounded
    a, _ = avg([employee("A", {m: "86.666666667" for m in Y1[:3]})])
    assert a == Fraction("86.666666667") * 3 / 140 / 12
    a, _ = avg([employee("B", {m: "86.666666666" for m in Y1[:3]})])
    assert a == 0


@pytest.mark.parametrize("hours", ["160", "160.0", "160.000000000", 160])
def test_hours_forms_are_exact(hours):
    a, _ = avg([employee("A", {m: hours for m in Y1})])
    assert a == 1


def _claim_with_table(folder, rows: list[tuple], **options):
    """A claim whose header names a payroll CSV holding ``rows`` (employee, month, hours, basis), in that order."""
    folder.mkdir()
    (folder / "payroll.csv").write_text("employee_id,month,hours,basis\n" + "".join(f"{e},{m},{h},{b}\n" for e, m, h, b in rows))
    doc = base_claim([], **options)
    del doc["employees"]
    doc["payroll"] = "payroll.csv"
    (folder / "claim.json").write_text(json.dumps(doc))
    return qmcredit.decide(qmcredit.load_claim(folder / "claim.json"))


@pytest.mark.parametrize("exclude_temporary", [False, True])
def test_P3_months_count_per_employee_and_period_in_any_row_order(tmp_path, exclude_temporary):
    """P3 counts an employee's months of 20 hours a week in a period run by run of rows, then over
    the runs of each employee and period (``classify``): the same figures and employee-months
    whichever way a table orders its rows."""
    rng = random.Random(18)
    bases = ("permanent", "permanent", "temporary", "seasonal")
    rows = [(f"E{k}", m, rng.choice(("0", "40", "86.666666666", "86.666666667", "100", "139.99", "140", "160")), bases[k % 4])
            for k in range(12) for m in months("2003-01", 60) if rng.random() < 0.7]
    shuffled = rng.sample(rows, len(rows))
    by_employee = _claim_with_table(tmp_path / "by_employee", rows, part_time_excludes_temporary=exclude_temporary)
    any_order = _claim_with_table(tmp_path / "shuffled", shuffled, part_time_excludes_temporary=exclude_temporary)
    assert by_employee.averages == any_order.averages and by_employee.months == any_order.months
    assert any(a != 0 for a in by_employee.averages.values())
    unsourced = lambda d: [{k: v for k, v in r.items() if k != "source"} for r in d.employee_month_rows()]  # noqa: E731
    assert unsourced(by_employee) == unsourced(any_order)
    statuses = {r["status"] for r in by_employee.employee_month_rows()}
    assert {"full_time", "part_time_equivalent", "not_part_time"} <= statuses


def test_P3_counts_by_runs_are_the_counts_over_each_employee_and_period():
    """``_per_employee_period`` (counts per run, then over the runs of a key) gives what a window
    over all rows of each (claim, employee, period) gives: rows listed employee by employee, an
    employee's rows split into several runs, shuffled rows, null flags and rows outside periods."""
    import polars as pl

    from qmcredit.law.positions import _EMPLOYEE_PERIOD, _per_employee_period

    rng = random.Random(55)
    grouped = [(c, f"E{e}", rng.choice((0, 1, 2, None)), rng.choice((True, False, None)))
               for c in range(3) for e in range(5) for _ in range(rng.randrange(1, 9))]
    split = grouped[: len(grouped) // 2] + grouped[:10] + grouped[len(grouped) // 2:]  # some runs again, apart
    for rows in (grouped, split, rng.sample(grouped, len(grouped)), []):
        df = pl.DataFrame(rows, schema={"claim_id": pl.Int64, "employee_id": pl.Utf8, "period": pl.Int8, "_meets": pl.Boolean}, orient="row")
        window = df.select(pl.col("_meets").cast(pl.Int32).sum().over(_EMPLOYEE_PERIOD)).to_series()
        assert _per_employee_period(df, "_meets").to_list() == window.to_list()
