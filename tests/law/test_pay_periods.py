"""RULES.md P6: pay periods allocated to calendar months, checked against an independent plain
reading of the rule (day by day, with fractions), through the claim's payroll table."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date, timedelta
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import qmcredit
from qmcredit import ClaimError
from qmcredit.law.pay_periods import allocate

from ..conftest import EXAMPLES, load_doc


def plain(start: date, end: date, hundredths: int, how: str) -> dict[tuple[int, int], int]:
    """P6 read literally: count the period's weekdays (or days) month by month, give each month
    its proportion in hundredths rounded down, then one more hundredth to the largest remainders,
    the earlier month first among equal ones."""
    if how == "end_month":
        return {(end.year, end.month): hundredths}
    days: dict[tuple[int, int], int] = defaultdict(int)
    d = start
    while d <= end:
        if how == "calendar_days" or d.weekday() < 5:
            days[(d.year, d.month)] += 1
        else:
            days.setdefault((d.year, d.month), 0)
        d += timedelta(days=1)
    if how == "weekdays" and sum(days.values()) == 0:  # a weekend: by its days
        return plain(start, end, hundredths, "calendar_days")
    total = sum(days.values())
    quota = {m: Fraction(hundredths * n, total) for m, n in days.items()}
    share = {m: q.numerator // q.denominator for m, q in quota.items()}
    left = hundredths - sum(share.values())
    for m in sorted(quota, key=lambda m: (-(quota[m] - share[m]), m))[:left]:
        share[m] += 1
    return share


periods = st.tuples(
    st.dates(date(1999, 1, 1), date(2030, 12, 31)), st.integers(0, 40), st.integers(0, 400_000),
    st.sampled_from(["weekdays", "calendar_days", "end_month"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(periods, min_size=1, max_size=12))
def test_allocation_agrees_with_the_plain_reading(rows):
    """P6: shares by weekdays (or days), to 0.01 hour by largest remainder, ties to the earlier
    month; each period's total kept exactly."""
    for how in ("weekdays", "calendar_days", "end_month"):
        df = pl.DataFrame({
            "_row": list(range(len(rows))), "period_start": [r[0] for r in rows],
            "period_end": [r[0] + timedelta(days=r[1]) for r in rows], "units": [r[2] for r in rows],
        })
        got = allocate(df, how)
        for k, (start, length, units, _) in enumerate(rows):
            mine = {(m // 12, m % 12 + 1): u for m, u in got.filter(pl.col("_row") == k).select("month_idx", "units").iter_rows()}
            expected = plain(start, start + timedelta(days=length), units, how)
            assert {m: u for m, u in mine.items() if u or m in expected} == expected, (start, length, units, how)
            assert sum(mine.values()) == units


def _claim(tmp_path, rows: list[str], options: dict | None = None):
    doc = load_doc(EXAMPLES / "03-part-time-equivalents.claim.json")
    doc.pop("employees")
    doc["payroll"] = "export.csv"
    doc["options"] = options or {}
    (tmp_path / "export.csv").write_text("\n".join(['"Emp #","Pay Period Start","Pay Period End","Hours Worked"', *rows]) + "\n")
    (tmp_path / "claim.json").write_text(json.dumps(doc, default=str))
    return qmcredit.load_claim(tmp_path / "claim.json")


def test_export_with_pay_periods_and_the_trace(tmp_path):
    """An export's pay periods (MM/DD/YYYY dates): each month's hours and, in the trace (B1), the
    pay-period rows and the share each gave."""
    claim = _claim(tmp_path, ['"E1","12/29/2003","01/11/2004","80.00"', '"E1","01/12/2004","01/25/2004","80"'])
    rows = {r["month"]: r for r in qmcredit.decide(claim).employee_month_rows()}
    assert rows["2003-12"]["hours"] == "24" and rows["2004-01"]["hours"] == "136"
    assert rows["2004-01"]["source"] == (
        "export.csv line 2 (2003-12-29..2004-01-11: 56.00 of 80.00 h, 7 of 10 weekdays); "
        "export.csv line 3 (2004-01-12..2004-01-25: 80.00 of 80.00 h, 10 of 10 weekdays)")


@pytest.mark.parametrize("how, december, january", [("calendar_days", "18.14", "62.86"), ("end_month", "1", "80")])
def test_the_options(tmp_path, how, december, january):
    """P6 options: by calendar days (3 of the 14 days in December); the whole period in the month of its last day."""
    claim = _claim(tmp_path, ['"E1","12/29/2003","01/11/2004","80.00"', '"E1","12/01/2003","12/14/2003","1"'],
                   {"pay_period_allocation": how})
    rows = {r["month"]: r["hours"] for r in qmcredit.decide(claim).employee_month_rows()}
    assert (rows["2003-12"], rows["2004-01"]) == (december, january)


def test_overlapping_pay_periods_are_refused(tmp_path):
    with pytest.raises(ClaimError) as e:
        _claim(tmp_path, ['"E1","12/01/2003","12/14/2003","80"', '"E1","12/10/2003","12/23/2003","80"', '"E2","12/10/2003","12/23/2003","80"'])
    (p,) = e.value.problems
    assert p.location == "export.csv line 3" and "overlaps 2003-12-01..2003-12-14 (at export.csv line 2)" in p.message


def test_pay_period_rows_problems(tmp_path):
    with pytest.raises(ClaimError) as e:
        _claim(tmp_path, ['"E1","12/01/2003","11/14/2003","80"', '"E1","12/15/2003","12/28/2003","80.125"', '"E1","01/01/2004","01/02/2004","49"'])
    messages = [p.message for p in e.value.problems]
    assert any("is before period_start" in m for m in messages)
    assert any("more than 2 decimals" in m for m in messages)
    assert any("is more than the 48 hours of the pay period" in m for m in messages)
