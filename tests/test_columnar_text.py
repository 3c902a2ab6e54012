"""The batch writes its tables' figures with columnar text functions; they must give the very text
of the single-claim presentation (``money``, ``exact_decimal``), and ``payroll.normalize`` must judge
a large table (each column's distinct values parsed once) as it judges a small one (rows parsed)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from qmcredit import money as money_module
from qmcredit import payroll
from qmcredit.money import exact_decimal, exact_decimal_text, money, money_text

denominators = st.one_of(
    st.sampled_from([1, 3, 7, 12 * 140 * 10**9, 2**40, 5**20, 2**70, 3 * 2**13 * 5**10 * 7]),
    st.integers(1, 10**30),
)


@given(st.lists(st.tuples(st.integers(0, 10**36), denominators), min_size=1, max_size=40))
@settings(max_examples=200, deadline=None)
def test_exact_decimal_text_is_exact_decimal(pairs):
    frame = pl.DataFrame({"n": pl.Series([n for n, _ in pairs], dtype=pl.Int128), "d": pl.Series([d for _, d in pairs], dtype=pl.Int128)})
    for _ in _columnar_then_row_by_row():
        assert exact_decimal_text(frame, "n", "d").to_list() == [exact_decimal(Fraction(n, d)) for n, d in pairs]


def _columnar_then_row_by_row():
    """Runs the loop's body twice: ``exact_decimal_text`` with every frame written by its
    queries, then every frame written row by row (as it writes a frame of at most ``FEW_VALUES`` values)."""
    kept = money_module.FEW_VALUES
    try:
        for few in (-1, 10**9):
            money_module.FEW_VALUES = few
            yield few
    finally:
        money_module.FEW_VALUES = kept


@given(st.lists(st.tuples(st.integers(0, 10**36), st.integers(0, 10**20), denominators), min_size=1, max_size=20))
@settings(max_examples=100, deadline=None)
def test_exact_decimal_text_of_several_numerators_is_each_alone(rows):
    """The batch writes its five position figures, all over one denominator, in one query."""
    frame = pl.DataFrame({k: pl.Series([r[i] for r in rows], dtype=pl.Int128) for i, k in enumerate(("a", "b", "d"))})
    for _ in _columnar_then_row_by_row():
        together = exact_decimal_text(frame, ["a", "b"], "d")
        assert [s.to_list() for s in together] == [exact_decimal_text(frame, "a", "d").to_list(), exact_decimal_text(frame, "b", "d").to_list()]
        assert [s.name for s in together] == ["a", "b"]


def test_exact_decimal_text_keeps_nulls():
    frame = pl.DataFrame({"n": pl.Series([None, 1], dtype=pl.Int128), "d": pl.Series([None, 3], dtype=pl.Int128)})
    for _ in _columnar_then_row_by_row():
        written = exact_decimal_text(frame, "n", "d")
        assert written.to_list() == [None, "0.333333"] and written.dtype == pl.Utf8


@given(st.lists(st.integers(0, 10**17), min_size=1, max_size=40))
def test_money_text_is_money(cents):
    got = pl.DataFrame({"c": pl.Series(cents, dtype=pl.Int128)}).select(money_text(pl.col("c"))).to_series().to_list()
    assert got == [money(Decimal(c) / 100) for c in cents]


texts = st.one_of(st.none(), st.sampled_from(["", " ", "0", "140", "139.999999999", "1e3", "-1", "-0", "1,200", "745", "abc", ".5",
                                               "2004-02", " 2004-06 ", "2004-13", "2000-02", "permanent", "Temporary", "SEASONAL",
                                               "perm", "true", "N", "maybe", "spouse", "none", "cousin", "12345678"]))


@given(st.lists(st.tuples(st.sampled_from(["a", "b", " a", ""]), texts, texts, texts, texts, texts), max_size=30))
@settings(max_examples=150, deadline=None)
def test_normalize_judges_large_and_small_tables_alike(rows):
    frame = pl.DataFrame(rows, schema={c: pl.Utf8 for c in payroll.RAW_COLUMNS}, orient="row")
    small = payroll.normalize(frame.lazy(), as_of_idx=24060).collect()
    before = payroll.LOOKUP_FROM_ROWS
    payroll.LOOKUP_FROM_ROWS = 0  # every table takes the large tables' path
    try:
        large = payroll.normalize(frame.lazy(), as_of_idx=24060).collect()
    finally:
        payroll.LOOKUP_FROM_ROWS = before
    assert_frame_equal(small, large)


@st.composite
def exports(draw):
    """Payroll tables as exports list them, each employee's months together and in order, with
    the slips that make a second row for a month: a row given twice, an employee's months in two
    places, months out of order, an id with spaces around it."""
    rows = []
    for e in range(draw(st.integers(1, 4))):
        first = draw(st.integers(24000, 24030))
        for idx in range(first, first + draw(st.integers(4, 14))):
            rows.append([f"e{e}", f"{idx // 12:04d}-{idx % 12 + 1:02d}", draw(st.sampled_from(["0", "80", "150", "745", "x"])), "permanent", "false", None])
    for slip in draw(st.lists(st.sampled_from(["twice", "elsewhere", "swap", "spaces", "no month"]), max_size=3)):
        k = draw(st.integers(0, len(rows) - 1))
        row = list(rows[k])
        if slip == "twice":
            rows.insert(k + 1, row)
        elif slip == "elsewhere":
            rows.append(row)
        elif slip == "swap" and k + 1 < len(rows):
            rows[k], rows[k + 1] = rows[k + 1], rows[k]
        elif slip == "spaces":
            rows.insert(k + 1, [f" {row[0]} ", *row[1:]])
        elif slip == "no month":
            rows[k] = [row[0], "", *row[2:]]
    return rows


@given(exports())
@settings(max_examples=200, deadline=None)
def test_normalize_finds_second_rows_of_an_export_in_employee_order(rows):
    """The large tables' path looks for second rows only in the runs of an employee's rows whose
    months do not rise, or whose employee has another run (``payroll._maybe_repeated``): it must
    find every one the row-by-row path finds."""
    frame = pl.DataFrame(rows, schema={c: pl.Utf8 for c in payroll.RAW_COLUMNS}, orient="row")
    small = payroll.normalize(frame.lazy()).collect()
    before = payroll.LOOKUP_FROM_ROWS
    payroll.LOOKUP_FROM_ROWS = 0
    try:
        large = payroll.normalize(frame.lazy()).collect()
    finally:
        payroll.LOOKUP_FROM_ROWS = before
    assert_frame_equal(small, large)


def test_an_export_in_employee_order_has_few_candidate_rows():
    """Only the runs that may hold a second row are looked at: here the employee whose month
    repeats, not the other."""
    rows = pl.DataFrame({
        "employee_id": ["a"] * 6 + ["b"] * 6, "month_idx": [1, 2, 3, 3, 4, 5, 1, 2, 3, 4, 5, 6],
    })
    again = payroll._maybe_repeated(rows, ["employee_id", "month_idx"])
    assert again.to_list() == [True] * 6 + [False] * 6
