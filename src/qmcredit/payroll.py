"""The payroll table: one row per employee and calendar month (FORMAT.md, "The payroll table").

``normalize`` turns raw columns (text or numbers, as read from JSON, CSV, Parquet or Excel) into
typed, exact columns and a ``problem`` column naming what is wrong with each bad row; ``problems``
collects those into ``Problem`` objects. The single-claim path and the batch engine both run these
expressions, so a row is judged the same way wherever it comes from.

Hours are kept as scaled integers, ``hours`` = hours x 10^6 (``HOURS_SCALE``), which loses nothing
of an input with up to six decimals; an input with more is refused rather than rounded.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from .problems import Problem

HOURS_SCALE = 1_000_000
HOURS_DECIMALS = 6
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


def month_index(month: str) -> int:
    """'YYYY-MM' -> months since year 0 (year * 12 + month - 1)."""
    return int(month[:4]) * 12 + int(month[5:7]) - 1


def month_text(idx: int) -> str:
    return f"{idx // 12:04d}-{idx % 12 + 1:02d}"


def month_of(day: date) -> int:
    return day.year * 12 + day.month - 1


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

    emp = _text("employee_id")
    month = _text("month")
    month_ok = month.str.contains(r"^\d{4}-(0[1-9]|1[0-2])$").fill_null(False)
    year = pl.when(month_ok).then(month.str.slice(0, 4).cast(pl.Int32, strict=False))
    mon = pl.when(month_ok).then(month.str.slice(5, 2).cast(pl.Int32, strict=False))
    days = pl.date(year, mon, 1).dt.month_end().dt.day().cast(pl.Int64)

    h = _text("hours").str.replace_all(",", "")
    h_num = h.str.contains(r"^[+-]?(\d+\.?\d*|\.\d+)$").fill_null(False)
    h_neg = h.str.starts_with("-") & h_num & h.str.contains(r"[1-9]")
    int_part = h.str.extract(r"^[+-]?(\d*)", 1)
    frac_part = h.str.extract(r"\.(\d*)$", 1).fill_null("")
    frac_sig = frac_part.str.replace(r"0+$", "")
    too_precise = frac_sig.str.len_chars() > HOURS_DECIMALS
    int_digits = int_part.str.replace(r"^0+", "").str.len_chars()
    scaled = (
        pl.when(int_part == "").then(pl.lit("0")).otherwise(int_part).cast(pl.Int64, strict=False) * HOURS_SCALE
        + frac_part.str.slice(0, HOURS_DECIMALS).str.pad_end(HOURS_DECIMALS, "0").cast(pl.Int64, strict=False)
    )
    hours_ok = h_num & ~h_neg & ~too_precise & (int_digits <= 6)
    hours = pl.when(hours_ok).then(scaled)

    basis_raw = _text("basis").str.to_lowercase()
    basis = pl.when(basis_raw.is_null() | (basis_raw == "")).then(pl.lit("permanent")).otherwise(basis_raw)
    own_raw = _text("ownership_interest").str.to_lowercase()
    own = (
        pl.when(own_raw.is_null() | (own_raw == "")).then(False)
        .when(own_raw.is_in(_TRUE)).then(True)
        .when(own_raw.is_in(_FALSE)).then(False)
    )
    rel_raw = _text("owner_relation").str.to_lowercase()
    rel = pl.when(rel_raw.is_null() | rel_raw.is_in(("", "none", "null"))).then(None).otherwise(rel_raw)

    lf = lf.with_columns(
        emp.alias("employee_id"),
        month.alias("month"),
        (year * 12 + mon - 1).cast(pl.Int32).alias("month_idx"),
        hours.cast(pl.Int64).alias("hours"),
        basis.alias("basis"),
        own.alias("ownership_interest"),
        rel.alias("owner_relation"),
        h.alias("_hours_text"),
        own_raw.alias("_own_text"),
        days.alias("_days"),
        h_num.alias("_h_num"),
        h_neg.alias("_h_neg"),
        too_precise.alias("_h_precise"),
        month_ok.alias("_month_ok"),
    )
    q = lambda c: pl.format("'{}'", pl.col(c).fill_null(""))  # noqa: E731
    checks = [
        (pl.col("employee_id").is_null() | (pl.col("employee_id") == ""), pl.lit("employee_id: missing; every row needs the employee it is for")),
        (~pl.col("_month_ok"), pl.format("month: {} is not a calendar month; write YYYY-MM, e.g. 2004-05", q("month"))),
        (pl.col("_hours_text").is_null() | (pl.col("_hours_text") == ""), pl.lit("hours: missing; write 0 for a month without work")),
        (~pl.col("_h_num"), pl.format("hours: {} is not a number of hours; write e.g. 152.5", q("_hours_text"))),
        (pl.col("_h_neg"), pl.format("hours: {} is negative; hours worked are zero or more", q("_hours_text"))),
        (pl.col("_h_precise"), pl.format("hours: {} has more than {} decimals; round the source record or give it in minutes/60 to 6 places", q("_hours_text"), pl.lit(HOURS_DECIMALS))),
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
        "_hours_text", "_own_text", "_days", "_h_num", "_h_neg", "_h_precise", "_month_ok"
    )


def problems(normalized: pl.DataFrame) -> list[Problem]:
    """The bad rows of a normalised single-claim table, as problems at their exact location (the
    row's ``source``: a JSON path, or the table's file and line)."""
    bad = normalized.filter(pl.col("problem").is_not_null()).select("source", "problem")
    return [Problem(source, message) for source, message in bad.iter_rows()]
