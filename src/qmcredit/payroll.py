"""The payroll table: one row per employee and calendar month (FORMAT.md, "The payroll table").

``normalize`` turns raw columns (text or numbers, as read from JSON, CSV, Parquet or Excel) into
typed, exact columns and a ``problem`` column naming what is wrong with each bad row (its
``source`` column says where the row came from). The single-claim path and the batch engine both run these
expressions, so a row is judged the same way wherever it comes from.

Hours are kept as scaled integers, ``hours`` = hours x 10^9 (``HOURS_SCALE``), which loses nothing
of an input with up to nine decimals (a nanohour); an input with more is refused rather than rounded.
Int64 holds every product and per-month sum of them up to some twelve million employees in a month.
"""

from __future__ import annotations

from datetime import date

import polars as pl


HOURS_SCALE = 1_000_000_000
HOURS_DECIMALS = 9
BASES = ("permanent", "temporary", "seasonal")
RELATIONS = ("spouse", "dependant", "ancestor", "descendant")

#: The normalised columns (besides an optional ``claim_id``).
COLUMNS = {
    "employee_id": pl.Utf8,
    "month": pl.Utf8,
    "month_idx": pl.Int32,
    "hours": pl.Int64,
    "basis": pl.Utf8,
    "ownership_interest": pl.Boolean,
    "owner_relation": pl.Utf8,
    "source": pl.Utf8,
}
RAW_COLUMNS = ("employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation")
REQUIRED_COLUMNS = ("employee_id", "month", "hours")

_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


def month_text(idx: int) -> str:
    return f"{idx // 12:04d}-{idx % 12 + 1:02d}"


def month_of(day: date) -> int:
    return day.year * 12 + day.month - 1


def first_unknown_month(as_of: date | None) -> int | None:
    """With ``as_of``, the first month that is not over by that day: from it on, months are
    unknown, not zero (issue 2, completeness). None without ``as_of``."""
    if as_of is None:
        return None
    over = date.fromordinal(as_of.toordinal() + 1).day == 1
    return month_of(as_of) + (1 if over else 0)


def _text(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Utf8).str.strip_chars()


def normalize(lf: pl.LazyFrame, *, as_of_idx: int | pl.Expr | None = None) -> pl.LazyFrame:
    """Type and check raw payroll rows. Adds ``problem`` (null when the row is good).

    ``as_of_idx``: the first month index that is not yet known (months from it on are unknown,
    rule "completeness" of issue 2); a row for such a month is a problem.
    """
    names = lf.collect_schema().names()
    for col in RAW_COLUMNS:
        if col not in names:
            lf = lf.with_columns(pl.lit(None, dtype=pl.Utf8).alias(col))
    if "source" not in names:
        lf = lf.with_row_index("_row", offset=1).with_columns(
            pl.format("row {}", pl.col("_row")).alias("source")
        ).drop("_row")

    # Stage 1: trimmed text, once.
    lf = lf.with_columns(
        _text("employee_id").alias("employee_id"),
        _text("month").alias("month"),
        _text("hours").str.replace_all(",", "", literal=True).alias("_hours_text"),
        _text("basis").str.to_lowercase().alias("_basis_text"),
        _text("ownership_interest").str.to_lowercase().alias("_own_text"),
        _text("owner_relation").str.to_lowercase().alias("_rel_text"),
    )
    # Stage 2: parse.
    h = pl.col("_hours_text")
    lf = lf.with_columns(
        pl.col("month").str.contains(r"^\d{4}-(0[1-9]|1[0-2])$").fill_null(False).alias("_month_ok"),
        h.str.contains(r"^[+-]?(\d+\.?\d*|\.\d+)$").fill_null(False).alias("_h_num"),
        h.str.extract(r"^[+-]?(\d*)", 1).alias("_int"),
        h.str.extract(r"\.(\d*)$", 1).fill_null("").alias("_frac"),
    )
    year = pl.col("month").str.slice(0, 4).cast(pl.Int32, strict=False)
    mon = pl.col("month").str.slice(5, 2).cast(pl.Int32, strict=False)
    lf = lf.with_columns(
        pl.when(pl.col("_month_ok")).then(year).alias("_year"),
        pl.when(pl.col("_month_ok")).then(mon).alias("_mon"),
        (h.str.starts_with("-") & pl.col("_h_num") & h.str.contains(r"[1-9]")).alias("_h_neg"),
        (pl.col("_frac").str.replace(r"0+$", "").str.len_chars() > HOURS_DECIMALS).alias("_h_precise"),
        (pl.col("_int").str.replace(r"^0+", "").str.len_chars() <= 6).alias("_h_small"),
    )
    y, m = pl.col("_year"), pl.col("_mon")
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    days = (
        pl.when(m == 2).then(pl.when(leap).then(29).otherwise(28))
        .when(m.is_in((4, 6, 9, 11))).then(30)
        .otherwise(31)
    ).cast(pl.Int64)
    scaled = (
        pl.when(pl.col("_int") == "").then(pl.lit("0")).otherwise(pl.col("_int")).cast(pl.Int64, strict=False) * HOURS_SCALE
        + pl.col("_frac").str.slice(0, HOURS_DECIMALS).str.pad_end(HOURS_DECIMALS, "0").cast(pl.Int64, strict=False)
    )
    hours_ok = pl.col("_h_num") & ~pl.col("_h_neg") & ~pl.col("_h_precise") & pl.col("_h_small")
    basis = pl.col("_basis_text")
    own = pl.col("_own_text")
    rel = pl.col("_rel_text")
    lf = lf.with_columns(
        (y * 12 + m - 1).cast(pl.Int32).alias("month_idx"),
        pl.when(hours_ok).then(scaled).cast(pl.Int64).alias("hours"),
        pl.when(basis.is_null() | (basis == "")).then(pl.lit("permanent")).otherwise(basis).alias("basis"),
        pl.when(own.is_null() | (own == "")).then(False).when(own.is_in(_TRUE)).then(True).when(own.is_in(_FALSE)).then(False).alias("ownership_interest"),
        pl.when(rel.is_null() | rel.is_in(("", "none", "null"))).then(None).otherwise(rel).alias("owner_relation"),
        pl.when(pl.col("_month_ok")).then(days).alias("_days"),
    )
    q = lambda c: pl.format("'{}'", pl.col(c).fill_null(""))  # noqa: E731
    checks = [
        (pl.col("employee_id").is_null() | (pl.col("employee_id") == ""), pl.lit("employee_id: missing; every row needs the employee it is for")),
        (~pl.col("_month_ok"), pl.format("month: {} is not a calendar month; write YYYY-MM, e.g. 2004-05", q("month"))),
        (pl.col("_hours_text").is_null() | (pl.col("_hours_text") == ""), pl.lit("hours: missing; write 0 for a month without work")),
        (~pl.col("_h_num"), pl.format("hours: {} is not a number of hours; write e.g. 152.5", q("_hours_text"))),
        (pl.col("_h_neg"), pl.format("hours: {} is negative; hours worked are zero or more", q("_hours_text"))),
        (pl.col("_h_precise"), pl.format("hours: {} has more than {} decimals; round the source record to {} places", q("_hours_text"), pl.lit(HOURS_DECIMALS), pl.lit(HOURS_DECIMALS))),
        (
            pl.col("_month_ok") & (pl.col("hours").is_null() | (pl.col("hours") > pl.col("_days") * 24 * HOURS_SCALE)),
            pl.format("hours: {} is more than the {} hours that {} has", q("_hours_text"), pl.col("_days") * 24, pl.col("month")),
        ),
        (~pl.col("basis").is_in(BASES), pl.format("basis: {} must be permanent, temporary or seasonal", q("basis"))),
        (pl.col("ownership_interest").is_null(), pl.format("ownership_interest: {} must be true or false", q("_own_text"))),
        (pl.col("owner_relation").is_not_null() & ~pl.col("owner_relation").is_in(RELATIONS),
         pl.format("owner_relation: {} must be empty or one of spouse, dependant, ancestor, descendant", q("owner_relation"))),
    ]
    if as_of_idx is not None:
        cut = as_of_idx if isinstance(as_of_idx, pl.Expr) else pl.lit(as_of_idx)
        checks.append((
            pl.col("_month_ok") & (pl.col("month_idx") >= cut),
            pl.format("month: {} is not over by as_of; leave months after as_of out (they are unknown, not zero)", pl.col("month")),
        ))
    problem = pl.when(checks[0][0]).then(checks[0][1])
    for cond, msg in checks[1:]:
        problem = problem.when(cond).then(msg)
    keys = ["claim_id", "employee_id", "month"] if "claim_id" in names else ["employee_id", "month"]
    dup = (pl.len().over(keys) > 1) & pl.col("_month_ok")
    first_source = pl.col("source").first().over(keys)
    problem = problem.when(dup & (pl.col("source") != first_source)).then(
        pl.format("employee {} has more than one row for {} (first at {}); give one row per employee and month", pl.col("employee_id"), pl.col("month"), first_source)
    )
    return lf.with_columns(problem.otherwise(None).alias("problem")).drop(
        "_hours_text", "_basis_text", "_own_text", "_rel_text", "_int", "_frac", "_year", "_mon",
        "_days", "_h_num", "_h_neg", "_h_precise", "_h_small", "_month_ok",
    )
