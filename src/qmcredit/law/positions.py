"""P1-P5, N.J.S.A. 52:27BBB-55(e): who counts, month by month, as columnar (polars) work.

> "Employee of the taxpayer" does not include an individual with an ownership interest in the
> business, that individual's spouse or dependants, or that individual's ancestors or descendants.
> "Full time position" means a position filled by an employee of the taxpayer for at least 140
> hours per month on a permanent basis, which does not include employment that is temporary or
> seasonal.
> "Part-time position" means a position filled by an employee of the taxpayer for at least 20
> hours per week for at least three months during the credit year.
> The hours of employees filling part-time positions shall be aggregated to determine the number
> of full-time position equivalents.

The same expressions serve one claim and a statewide batch: rows carry a ``claim_id`` and the
claim's constants (``base_idx``, thresholds, option) as columns, and every aggregate groups by claim.
Hours are scaled integers (``qmcredit.payroll.HOURS_SCALE``); thresholds are exact fractions
compared by cross-multiplication, so no comparison ever rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import polars as pl

from ..payroll import HOURS_SCALE
from .parameters import parameter
from .rule import rule

CITE = "N.J.S.A. 52:27BBB-55(e)"

# Classification of an employee-month (B1): status -> (rule, one-line reading)
STATUS = {
    "full_time": ("P2", "full-time: at least the full-time hours in the month, on a permanent basis"),
    "part_time_equivalent": ("P4", "part-time position in this period, not full-time this month: hours count toward full-time equivalents (at most the cap of option equivalent_hours_cap, P4a)"),
    "owner": ("P1", "not an employee of the taxpayer: has an ownership interest"),
    "owner_relative": ("P1", "not an employee of the taxpayer: spouse, dependant, ancestor or descendant of an owner"),
    "temporary_excluded": ("P3", "temporary or seasonal: excluded from part-time positions by option part_time_excludes_temporary"),
    "temporary_not_part_time": ("P2", "temporary or seasonal: never full-time, and not a part-time position in this period"),
    "not_part_time": ("P3", "below full-time this month, and fewer than the required months of 20 hours a week in this period"),
    "no_hours": ("P5", "no hours this month"),
    "outside_periods": ("W3", "outside the base period and credit years"),
}


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The hour tests of P2-P4, exact, from the parameter files in force on ``when``."""

    full_time_hours: Fraction      # P2: hours in a month that make it full-time (140)
    part_time_month_hours: Fraction  # P3: 20 hours a week as monthly hours, 20 x 52 / 12 = 86 2/3
    part_time_months: int          # P3: months meeting it in the period (3)
    trace: dict

    @classmethod
    def at(cls, when: date, params=None) -> "Thresholds":
        """``params``: the ``ParameterSet`` to read (default: the parameter files)."""
        get = parameter if params is None else params.parameter
        pars = tuple(get(n) for n in _HOUR_TESTS)
        return _thresholds(pars, tuple(p.at(when) for p in pars))  # a batch's claims start in a few hundred months, under one set of values

    def columns(self) -> dict[str, int]:
        """Per-claim constant columns: hours x den >= num compares exactly on scaled integers."""
        ft = self.full_time_hours * HOURS_SCALE
        pt = self.part_time_month_hours * HOURS_SCALE
        return {
            "ft_num": ft.numerator, "ft_den": ft.denominator,
            "pt_num": pt.numerator, "pt_den": pt.denominator,
            "pt_months": self.part_time_months,
        }


_HOUR_TESTS = ("full_time_hours_per_month", "part_time_hours_per_week", "weeks_per_year", "part_time_months")


@lru_cache(maxsize=256)
def _thresholds(pars: tuple, in_force: tuple) -> Thresholds:
    """``Thresholds.at`` of the values ``in_force`` of the parameters ``pars`` (``_HOUR_TESTS``):
    a trace names the value in force, not the day it was read for."""
    ft, wk, weeks, months = pars
    v_ft, v_wk, v_weeks, v_months = in_force
    pt = Fraction(v_wk.value) * Fraction(v_weeks.value) / 12
    return Thresholds(
        Fraction(v_ft.value), pt, int(v_months.value),
        {
            "full_time_hours_per_month": ft.trace_value(v_ft),
            "part_time_hours_per_week": wk.trace_value(v_wk),
            "weeks_per_year": weeks.trace_value(v_weeks),
            "part_time_months": months.trace_value(v_months),
            "part_time_hours_per_month": {"value": f"{pt.numerator}/{pt.denominator}" if pt.denominator != 1 else str(pt), "rule": "P3", "reading": "20 x 52 / 12"},
        },
    )


CLAIM_COLUMNS = {
    "base_idx": pl.Int32, "excl_temp": pl.Boolean, "eq_cap": pl.Int64,
    "ft_num": pl.Int64, "ft_den": pl.Int64, "pt_num": pl.Int64, "pt_den": pl.Int64, "pt_months": pl.Int32,
}


def classify(rows: pl.DataFrame) -> pl.LazyFrame:
    """Classify each employee-month (P1-P4). Input: normalised payroll rows with ``claim_id`` and
    the ``CLAIM_COLUMNS``. Adds ``period`` (0 base, 1 year one, 2 year two, null outside),
    ``full_time``, ``equivalent``, ``counted_hours`` (the hours it counts toward equivalents),
    ``period_20h_months`` (in a period: the employee's months in it of at least 20 hours a week)
    and ``status`` (a key of ``STATUS``)."""
    rel = pl.col("month_idx") - pl.col("base_idx")
    period = pl.when((rel >= 0) & (rel < 36)).then((rel // 12).cast(pl.Int8))
    # P1 (e): owners and their relatives are not employees of the taxpayer; their hours count nowhere.
    owner = pl.col("ownership_interest")
    relative = pl.col("owner_relation").is_not_null()
    employee = ~owner & ~relative
    permanent = pl.col("basis") == "permanent"
    # P2 (e): full-time = at least 140 hours in the month on a permanent basis.
    full_time = employee & permanent & (pl.col("hours") * pl.col("ft_den") >= pl.col("ft_num"))
    # P3 (e): a month of at least 20 hours a week (86 2/3 hours); temporary work counts unless the option excludes it.
    may_be_part_time = employee & (permanent | ~pl.col("excl_temp"))
    meets_20h = may_be_part_time & (pl.col("hours") * pl.col("pt_den") >= pl.col("pt_num"))
    df = rows.lazy().with_columns(period.alias("period"), full_time.alias("full_time"), meets_20h.alias("_meets")).collect()
    in_period = pl.col("period").is_not_null()
    pt_months = pl.when(in_period).then(_per_employee_period(df, "_meets"))
    # P3: a part-time position in the period = at least three such months in it (any three).
    part_time_position = may_be_part_time & (pt_months >= pl.col("pt_months"))
    # P4 (e): equivalents = hours of part-time positions in months they are not full-time.
    equivalent = in_period & part_time_position & ~pl.col("full_time")
    # P4a (option equivalent_hours_cap): an employee-month counts at most the cap's hours (null: not capped).
    cap = pl.col("eq_cap")
    counted = pl.when(~equivalent).then(0).when(cap.is_not_null() & (pl.col("hours") > cap)).then(cap).otherwise(pl.col("hours"))
    status = (
        pl.when(pl.col("period").is_null()).then(pl.lit("outside_periods"))
        .when(owner).then(pl.lit("owner"))
        .when(relative).then(pl.lit("owner_relative"))
        .when(pl.col("full_time")).then(pl.lit("full_time"))
        .when(~permanent & pl.col("excl_temp")).then(pl.lit("temporary_excluded"))
        .when(equivalent).then(pl.lit("part_time_equivalent"))
        .when(pl.col("hours") == 0).then(pl.lit("no_hours"))
        .when(~permanent).then(pl.lit("temporary_not_part_time"))
        .otherwise(pl.lit("not_part_time"))
    )
    return df.lazy().with_columns(
        equivalent.alias("equivalent"), counted.cast(pl.Int64).alias("counted_hours"), pt_months.alias("period_20h_months"), status.alias("status")
    ).drop("_meets")


_EMPLOYEE_PERIOD = ["claim_id", "employee_id", "period"]


def _per_employee_period(df: pl.DataFrame, flag: str) -> pl.Series:
    """Each row's count of ``flag`` over the rows of its employee in its period (P3 counts an
    employee's months in a period). Counted run by run first (a run: consecutive rows of one
    employee and period; a payroll export lists an employee's months together, so runs are about
    a seventh of the rows, as cumulative sums at their ends), then over the runs of each employee and
    period (a window over the runs, not the rows): exact in any order of rows. A null counts 0."""
    runs = df.select(pl.struct(_EMPLOYEE_PERIOD).rle_id().alias("_run"), pl.col(flag).fill_null(False).cast(pl.Int32).cum_sum().alias("_n"),
                     *_EMPLOYEE_PERIOD)
    n, run = pl.col("_n"), pl.col("_run")
    ends = runs.filter((run != run.shift(-1)).fill_null(True)).with_columns(n - n.shift(1, fill_value=0))  # one row a run: its count
    return ends.select(n.sum().over(_EMPLOYEE_PERIOD)).to_series().gather(runs.get_column("_run"))


def monthly(classified: pl.LazyFrame) -> pl.LazyFrame:
    """P4-P5 per claim and month (with its ``period``): full-time positions and the hours that
    make equivalents."""
    return (
        classified.filter(pl.col("period").is_not_null())
        .group_by("claim_id", "month_idx")
        .agg(
            pl.col("period").first(),
            pl.col("full_time").cast(pl.Int64).sum().alias("full_time"),  # as integers: a sum of booleans is slower by group
            pl.col("counted_hours").sum().cast(pl.Int64).alias("equivalent_hours"),
        )
    )


class Month(NamedTuple):
    """One of a claim's 36 months (P5): its full-time positions and equivalent hours (a named
    tuple: a determination has 36)."""

    idx: int
    full_time: int
    equivalent_hours: int  # scaled by HOURS_SCALE
    known: bool = True

    def equivalents(self, full_time_hours: Fraction) -> Fraction:
        """P4: the month's part-time hours divided by the full-time hours (140)."""
        return Fraction(self.equivalent_hours, HOURS_SCALE) / full_time_hours

    def positions(self, full_time_hours: Fraction) -> Fraction:
        return self.full_time + self.equivalents(full_time_hours)


def period_sums(per_month: pl.DataFrame) -> pl.DataFrame:
    """P5 (e): for each claim with hours in its periods and each period k (0 base, 1 year one, 2
    year two), the full-time positions ``full_time_k`` and the equivalent hours
    ``equivalent_hours_k`` summed over its twelve months (``monthly``); a month with no hours
    recorded counts as zero."""
    return per_month.group_by("claim_id").agg(
        *(pl.col("full_time").filter(pl.col("period") == k).sum().cast(pl.Int128).alias(f"full_time_{k}") for k in range(3)),
        *(pl.col("equivalent_hours").filter(pl.col("period") == k).sum().cast(pl.Int128).alias(f"equivalent_hours_{k}") for k in range(3)),
    )


def average_numerator(full_time: int, equivalent_hours: int, ft_num: int, ft_den: int) -> int:
    """P5 (e): a period's average number of positions, (full-time positions + equivalent hours /
    full-time hours) summed over its twelve months / 12, as a numerator over
    ``average_denominator``: with full-time hours x 10^9 = ``ft_num`` / ``ft_den``, it is
    (full_time x ft_num + equivalent_hours x ft_den) / (12 x ft_num)."""
    return full_time * ft_num + equivalent_hours * ft_den


def average_denominator(ft_num: int) -> int:
    return 12 * ft_num


@rule("P5", "N.J.S.A. 52:27BBB-55(e)", "sum over the period's twelve months of (full-time positions + part-time hours / full-time hours), divided by 12")
def average(period: int, first_month: int, full_time: int, equivalent_hours: int, ft_num: int, ft_den: int, cut: int | None) -> int | None:
    """P5 (e): the average of measured period ``period`` (0 base, 1 year one, 2 year two) as
    ``average_numerator``, once its twelve months are known (``cut``: the first month after
    ``as_of``); None before."""
    if cut is not None and first_month + 12 * (period + 1) > cut:
        return None
    return average_numerator(full_time, equivalent_hours, ft_num, ft_den)
