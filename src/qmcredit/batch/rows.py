"""Typing payroll rows at scale: ``payroll.normalize`` once per distinct raw value, not per row.

``normalize`` judges a row by its own values (month, hours, basis, ownership, relation and the
claim's ``as_of``), except for two checks that look at the employee: a missing ``employee_id``
and a second row for the same employee and month. Payroll values repeat endlessly (a few hundred
months, a few thousand distinct hours), so for the claims where neither of those two can occur
the batch runs ``normalize`` on the distinct value tuples and joins the typed values and problems
back to the rows. Every other claim's rows go through ``normalize`` whole. Either way the verdict
on each row is ``normalize``'s; this module only decides how often it is asked.
"""

from __future__ import annotations

import polars as pl

from ..payroll import RAW_COLUMNS, normalize

VALUE_COLUMNS = ("month", "hours", "basis", "ownership_interest", "owner_relation", "as_of_idx")
TYPED_COLUMNS = ("month_idx", "hours", "basis", "ownership_interest", "owner_relation", "problem")


def _source(name: str) -> pl.Expr:
    return pl.format(f"{name} line {{}}", pl.col("_line")).alias("source")


def typed(rows: pl.DataFrame, name: str) -> pl.DataFrame:
    """Normalised rows of known claims: ``claim_id`` text, the claim's columns, the typed payroll
    columns of ``payroll.COLUMNS`` (``source`` only where the row has a problem), ``problem`` and
    ``_line``.
    ``rows``: raw text payroll rows with ``_line``, joined to the claim's columns (``_code``, a
    whole number per claim, and ``as_of_idx``)."""
    rows = rows.with_columns(pl.lit(None, dtype=pl.Utf8).alias(c) for c in RAW_COLUMNS if c not in rows.columns)
    key = pl.col("employee_id").str.strip_chars()
    dup_or_missing = (
        rows.group_by("_code", key.alias("_emp"), pl.col("month").str.strip_chars().alias("_month"))
        .agg(pl.len().alias("_n"))
        .filter((pl.col("_n") > 1) | pl.col("_emp").is_null() | (pl.col("_emp") == ""))
        .get_column("_code").unique()
    )
    whole = rows.filter(pl.col("_code").is_in(dup_or_missing.implode()))
    fast = rows.filter(~pl.col("_code").is_in(dup_or_missing.implode()))
    claim_cols = [c for c in rows.columns if c not in (*RAW_COLUMNS, "_line", "claim_id")]

    judged_whole = normalize(whole.lazy().with_columns(_source(name)), as_of_idx=pl.col("as_of_idx")).collect()

    values = fast.select(VALUE_COLUMNS).unique()
    raw = [f"_raw_{c}" for c in VALUE_COLUMNS]
    judged_values = normalize(
        values.lazy().with_row_index("_v").with_columns(
            pl.col("_v").cast(pl.Utf8).alias("employee_id"), pl.lit("").alias("source"),
            *(pl.col(c).alias(r) for c, r in zip(VALUE_COLUMNS, raw)),
        ),
        as_of_idx=pl.col("as_of_idx"),
    ).select(*raw, *TYPED_COLUMNS).collect()
    judged_fast = (
        fast.rename(dict(zip(VALUE_COLUMNS, raw)))
        .join(judged_values, on=raw, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(
            key.alias("employee_id"), pl.col("_raw_as_of_idx").alias("as_of_idx"),
            pl.when(pl.col("problem").is_not_null()).then(_source(name)).alias("source"),
        )
    )
    cols = ["claim_id", "employee_id", *TYPED_COLUMNS, "source", "_line", *claim_cols]
    return pl.concat([judged_whole.select(cols), judged_fast.select(cols)])
