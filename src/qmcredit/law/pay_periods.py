"""RULES.md P6: hours reported per pay period, allocated to the calendar months the period spans.

A pay period's hours go to its months in proportion to the weekdays (Monday to Friday) of the
period in each month (option ``pay_period_allocation``: ``"weekdays"``, ``"calendar_days"``, or
``"end_month"``: all to the month of the period's last day), in hundredths of an hour by largest
remainder, so that the months' shares add up to the period's total exactly; equal remainders go
to the earlier month. A period without a weekday (a weekend) is shared by calendar days, which is
the only proportion it has. Rows of one employee whose periods overlap are refused (``overlaps``).

Columnar: each period is exploded into its months (one or two for weekly to semi-monthly
periods), and the shares are integer arithmetic on day numbers.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

CITE = "RULES.md P6 (N.J.S.A. 52:27BBB-55(e): positions are measured per calendar month)"
Allocation = Literal["weekdays", "calendar_days", "end_month"]

# Day numbers shifted so that day 0 is a Monday far in the past: 1970-01-05 was a Monday, and the
# shift (a multiple of 7) keeps every date from year 1 on non-negative.
_MONDAY_SHIFT = -4 + 7 * 120_000


def _weekdays_before(day: pl.Expr) -> pl.Expr:
    """Weekdays from the epoch Monday up to, not including, ``day`` (an Int64 day number)."""
    n = day + _MONDAY_SHIFT
    return (n // 7) * 5 + pl.min_horizontal(n % 7, pl.lit(5, dtype=pl.Int64))


def _day(month_idx: pl.Expr) -> pl.Expr:
    """The first day of a month index (year * 12 + month - 1) as an Int64 day number."""
    return pl.date(month_idx // 12, month_idx % 12 + 1, 1).cast(pl.Int64)


def allocate(periods: pl.DataFrame, how: Allocation = "weekdays") -> pl.DataFrame:
    """``periods``: ``_row`` (any id of the pay-period row), ``period_start``, ``period_end``
    (Date, start <= end) and ``units`` (Int64 hundredths of an hour, >= 0). Gives one row per
    pay-period row and month it spans (the months in order): ``_row``, ``month_idx`` (year * 12
    + month - 1), ``units`` (its share, hundredths), ``days`` and ``of`` (the share's weight: the
    period's weekdays or days in the month, of the period's)."""
    start, end = pl.col("period_start"), pl.col("period_end")
    first = (start.dt.year().cast(pl.Int32) * 12 + start.dt.month().cast(pl.Int32) - 1)
    last = (end.dt.year().cast(pl.Int32) * 12 + end.dt.month().cast(pl.Int32) - 1)
    if how == "end_month":
        first = last
    rows = periods.lazy().select(
        "_row", "units", start.cast(pl.Int64).alias("_a"), (end.cast(pl.Int64) + 1).alias("_b"),
        pl.int_ranges(first, last + 1, dtype=pl.Int32).alias("month_idx"),
    ).explode("month_idx", empty_as_null=True)
    lo = pl.max_horizontal(pl.col("_a"), _day(pl.col("month_idx")))
    hi = pl.min_horizontal(pl.col("_b"), _day(pl.col("month_idx") + 1))
    calendar = (hi - lo).alias("_cal")
    weekdays = (_weekdays_before(hi) - _weekdays_before(lo)).alias("_wd")
    rows = rows.with_columns(calendar, weekdays)
    if how == "weekdays":
        no_weekday = pl.col("_wd").sum().over("_row") == 0
        rows = rows.with_columns(pl.when(no_weekday).then(pl.col("_cal")).otherwise(pl.col("_wd")).alias("days"))
    elif how == "calendar_days":
        rows = rows.with_columns(pl.col("_cal").alias("days"))
    else:
        rows = rows.with_columns(pl.lit(1, dtype=pl.Int64).alias("days"))
    of = pl.col("days").sum().over("_row")
    rows = rows.with_columns(of.alias("of")).with_columns(
        (pl.col("units") * pl.col("days") // pl.col("of")).alias("_floor"),
        (pl.col("units") * pl.col("days") % pl.col("of")).alias("_rem"),
    )
    left = pl.col("units").first().over("_row") - pl.col("_floor").sum().over("_row")
    # largest remainder first; equal remainders: the earlier month first
    rank = pl.struct((-pl.col("_rem")).alias("r"), pl.col("month_idx").alias("m")).rank("ordinal").over("_row")
    share = pl.col("_floor") + pl.when(rank <= left).then(1).otherwise(0)
    return rows.select("_row", "month_idx", share.cast(pl.Int64).alias("units"), "days", "of").collect()


def overlaps(periods: pl.DataFrame) -> pl.DataFrame:
    """Pay-period rows of one employee that overlap an earlier one: ``employee_id``, ``_row``,
    ``_earlier`` (the row it overlaps: the one that reaches furthest among those before it)."""
    ordered = periods.lazy().select("employee_id", "_row", "period_start", "period_end").sort("employee_id", "period_start", "period_end", "_row")
    reach = pl.col("period_end").cum_max().over("employee_id").alias("_cm")
    holder = pl.when(pl.col("period_end") == pl.col("_cm")).then(pl.col("_row")).forward_fill().shift(1).over("employee_id")
    return ordered.with_columns(reach).with_columns(
        pl.col("_cm").shift(1).over("employee_id").alias("_reach"), holder.alias("_earlier")).filter(
        pl.col("_reach").is_not_null() & (pl.col("period_start") <= pl.col("_reach"))
    ).select("employee_id", "_row", "_earlier").collect()
