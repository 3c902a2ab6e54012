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
    assert exact_decimal_text(frame, "n", "d").to_list() == [exact_decimal(Fraction(n, d)) for n, d in pairs]


def test_exact_decimal_text_keeps_nulls():
    frame = pl.DataFrame({"n": pl.Series([None, 1], dtype=pl.Int128), "d": pl.Series([None, 3], dtype=pl.Int128)})
    assert exact_decimal_text(frame, "n", "d").to_list() == [None, "0.333333"]


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
