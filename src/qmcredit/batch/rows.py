"""Typing payroll rows at scale: ``payroll.normalize`` once per distinct raw value, not per row.

``normalize`` judges a row by its own values (month, hours, basis, ownership, relation and the
claim's ``as_of``), except for two checks that look at the employee: a missing ``employee_id``
and a second row for the same employee and month (found here by hashing the row's key). Payroll values repeat endlessly (a few hundred
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
    """Normalised rows of known claims: ``_code``, the typed payroll columns of
    ``payroll.COLUMNS`` (``source`` only where the row has a problem), ``problem`` and ``_line``.
    ``rows``: raw text payroll rows with ``_line``, ``_code`` (a whole number per claim) and the
    claim's ``as_of_idx``; the claim's other columns are joined afterwards, so they are not
    carried through here."""
    rows = rows.with_columns(pl.lit(None, dtype=pl.Utf8).alias(c) for c in RAW_COLUMNS if c not in rows.columns)
    key = pl.col("employee_id").str.strip_chars()
    # A second row for an employee and month shares its key's hash; a hash shared by chance only
    # sends that claim's rows through ``normalize`` whole, which judges them the same.
    same_key = pl.struct(pl.col("_code"), key, pl.col("month").str.strip_chars()).hash().is_duplicated()
    dup_or_missing = rows.filter(same_key | key.is_null() | (key == "")).get_column("_code").unique()
    whole = rows.filter(pl.col("_code").is_in(dup_or_missing.implode()))
    fast = rows.filter(~pl.col("_code").is_in(dup_or_missing.implode()))

    judged_whole = normalize(  # its claim key: a second row is one of the same claim
        whole.lazy().rename({"_code": "claim_id"}).with_columns(_source(name)), as_of_idx=pl.col("as_of_idx")
    ).rename({"claim_id": "_code"}).collect()

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
            key.alias("employee_id"),
            pl.when(pl.col("problem").is_not_null()).then(_source(name)).alias("source"),
        )
    )
    cols = ["_code", "employee_id", *TYPED_COLUMNS, "source", "_line"]
    return pl.concat([judged_whole.select(cols), judged_fast.select(cols)])
