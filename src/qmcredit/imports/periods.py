"""Pay-period rows (``period_start``, ``period_end``) -> one raw row per employee and calendar
month, by ``law.pay_periods`` (RULES.md P6). Each month's ``source`` names the pay-period rows
that gave to it and the share each gave, which is what the trace (B1) shows for the month.

A month takes the basis, ownership and relation of the last pay period that gave to it.
"""

from __future__ import annotations

import polars as pl

from ..law.pay_periods import Allocation, allocate, overlaps
from ..payroll import ambiguous_hours, hours_text
from ..problems import Problem

_HOURS = r"^\+?(\d+\.?\d*|\.\d+)$"
_UNIT = {"weekdays": "weekdays", "calendar_days": "days", "end_month": "month"}


def _hundredths(text: pl.Expr) -> pl.Expr:
    """Hours text -> hundredths of an hour (null unless a number with at most two decimals)."""
    whole = text.str.extract(r"^\+?(\d*)", 1)
    frac = text.str.extract(r"\.(\d*)$", 1).fill_null("").str.replace(r"0+$", "")
    return pl.when(text.str.contains(_HOURS) & (frac.str.len_chars() <= 2) & (whole.str.len_chars() <= 7)).then(
        pl.when(whole == "").then(pl.lit("0")).otherwise(whole).cast(pl.Int64, strict=False) * 100
        + frac.str.pad_end(2, "0").cast(pl.Int64, strict=False)
    )


def _text(units: pl.Expr) -> pl.Expr:
    return pl.format("{}.{}", units // 100, (units % 100).cast(pl.Utf8).str.pad_start(2, "0"))


def monthly(raw: pl.DataFrame, how: Allocation) -> tuple[pl.DataFrame, list[Problem]]:
    """``raw``: pay-period rows (text columns, ``source``); gives the raw monthly rows and the
    problems of the pay-period rows (which give to no month)."""
    raw = raw.with_columns(pl.lit(None, dtype=pl.Utf8).alias(c) for c in ("basis", "ownership_interest", "owner_relation") if c not in raw.columns)
    h = hours_text(pl.col("hours"))  # thousands separators removed; another comma stays, refused
    df = raw.with_row_index("_row").with_columns(
        pl.col("employee_id").cast(pl.Utf8).str.strip_chars(),
        pl.col("period_start").cast(pl.Utf8).str.strip_chars().str.to_date("%Y-%m-%d", strict=False).alias("_start"),
        pl.col("period_end").cast(pl.Utf8).str.strip_chars().str.to_date("%Y-%m-%d", strict=False).alias("_end"),
        h.alias("_h"), _hundredths(h).alias("units"),
    )
    days = (pl.col("_end") - pl.col("_start")).dt.total_days() + 1
    q = lambda c: pl.format("'{}'", pl.col(c).cast(pl.Utf8).fill_null(""))  # noqa: E731
    problem = (
        pl.when(pl.col("employee_id").is_null() | (pl.col("employee_id") == "")).then(pl.lit("employee_id: missing; every row needs the employee it is for"))
        .when(pl.col("_start").is_null()).then(pl.format("period_start: {} is not a date; write YYYY-MM-DD (P6: a pay period's first day)", q("period_start")))
        .when(pl.col("_end").is_null()).then(pl.format("period_end: {} is not a date; write YYYY-MM-DD (P6: a pay period's last day)", q("period_end")))
        .when(pl.col("_end") < pl.col("_start")).then(pl.format("period_end: {} is before period_start {}", q("period_end"), q("period_start")))
        .when(pl.col("_h").is_null() | (pl.col("_h") == "")).then(pl.lit("hours: missing; write 0 for a pay period without work"))
        .when(~pl.col("_h").str.contains(r"^[+-]?(\d+\.?\d*|\.\d+)$")).then(
            pl.coalesce(ambiguous_hours(pl.col("_h"), "80.5"), pl.format("hours: {} is not a number of hours; write e.g. 80.5", q("_h"))))
        .when(pl.col("_h").str.starts_with("-")).then(pl.format("hours: {} is negative; hours worked are zero or more", q("_h")))
        .when(pl.col("units").is_null()).then(pl.format("hours: {} has more than 2 decimals; a pay period's hours are allocated to months to 0.01 hour (P6): round to hundredths", q("_h")))
        .when(pl.col("units") > days * 2400).then(pl.format("hours: {} is more than the {} hours of the pay period {}..{}", q("_h"), days * 24, pl.col("_start"), pl.col("_end")))
    )
    df = df.with_columns(problem.alias("problem"))
    found = [Problem(s, m) for s, m in df.filter(pl.col("problem").is_not_null()).select("source", "problem").iter_rows()]
    good = df.filter(pl.col("problem").is_null()).drop("period_start", "period_end").rename({"_start": "period_start", "_end": "period_end"})
    over = overlaps(good)
    if over.height:
        src = dict(zip(good.get_column("_row"), good.get_column("source")))
        spans = {r: f"{a}..{b}" for r, a, b in good.select("_row", "period_start", "period_end").iter_rows()}
        for emp, row, earlier in over.iter_rows():
            found.append(Problem(src[row], f"employee {emp}: pay period {spans[row]} overlaps {spans[earlier]} (at {src[earlier]}); "
                                           "each day's hours belong to one pay period (P6): correct or remove one"))
        good = good.filter(~pl.col("_row").is_in(over.get_column("_row").implode()))
    shares = allocate(good.select("_row", "period_start", "period_end", "units"), how)
    unit = _UNIT[how]
    rows = shares.join(good.select("_row", "employee_id", "source", "period_start", "period_end", "basis", "ownership_interest",
                                   "owner_relation", pl.col("units").alias("_total")), on="_row", how="left")
    share = pl.format("{} ({}..{}: {} of {} h{})", pl.col("source"), pl.col("period_start"), pl.col("period_end"), _text(pl.col("units")),
                      _text(pl.col("_total")),
                      pl.lit("") if how == "end_month" else pl.format(", {} of {} {}", pl.col("days"), pl.col("of"), pl.lit(unit)))
    month = pl.format("{}-{}", (pl.col("month_idx") // 12).cast(pl.Utf8).str.pad_start(4, "0"),
                      (pl.col("month_idx") % 12 + 1).cast(pl.Utf8).str.pad_start(2, "0"))
    out = rows.sort("employee_id", "month_idx", "period_end", "_row").group_by("employee_id", "month_idx", maintain_order=True).agg(
        _text(pl.col("units").sum()).alias("hours"),
        pl.col("basis").last(), pl.col("ownership_interest").last(), pl.col("owner_relation").last(),
        share.str.join("; ").alias("source"),
    ).with_columns(month.alias("month")).select("employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation", "source")
    return out, found
