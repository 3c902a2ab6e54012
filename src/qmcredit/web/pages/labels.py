"""The one table of words the pages name figures by: a preparer reads "Credit, year one" and
"Period 2005-01-01 to 2005-12-31: room for the credit", never ``credit.year_one`` or
``periods[0].room``. Every page (claim, figure, drill-down, what-if, lists, exports) names a figure
through ``label``."""

from __future__ import annotations

import re

PERIOD_WORDS = {"base": "base year", "year_one": "year one", "year_two": "year two"}

FIGURES = {
    "eligible": "Eligible",
    "windows": "Base year and credit years",
    "sustained_effort_ratio": "Sustained effort ratio",
    "refund": "Refund, total",
    "carried_forward": "Carried forward, total",
    "not_yet_applied": "Credit not yet applied",
    "employee_months": "Employee-months",
    **{f"average_positions.{p}": f"Average positions, {w}" for p, w in PERIOD_WORDS.items()},
    **{f"new_positions.{p}": f"New positions, {w}" for p, w in PERIOD_WORDS.items() if p != "base"},
    **{f"credit.{p}": f"Credit, {w}" for p, w in PERIOD_WORDS.items() if p != "base"},
}

PERIOD_FIGURES = {
    "allowed": "credit allowed (L1)",
    "room": "room for the credit (L2, Form 313 line 17)",
    "applied": "credit applied (L4)",
    "refund": "refund (R1)",
    "forfeited": "forfeited (L5)",
    "carried_forward": "carried forward",
}

# the amounts the lists show, by column key
COLUMNS = {"year_one": "Credit, year one", "year_two": "Credit, year two", "applied": "Applied, all periods",
           "refund": "Refund, total"}

_PERIOD = re.compile(r"periods\[(\d+)\]\.(\w+)")


def label(figure: str, det: dict | None = None) -> str:
    """The words for a figure of the determination's explanation; a period is named by its dates
    when the determination is given, else by its place ("Period 1")."""
    if figure in FIGURES:
        return FIGURES[figure]
    m = _PERIOD.fullmatch(figure)
    if m:
        i, what = int(m[1]), m[2]
        periods = (det or {}).get("periods") or []
        name = f"Period {periods[i]['start']} to {periods[i]['end']}" if i < len(periods) else f"Period {i + 1}"
        return f"{name}: {PERIOD_FIGURES.get(what, what.replace('_', ' '))}"
    if figure.startswith("month-"):
        return f"Employees in {figure[len('month-'):]}"
    return figure.replace("_", " ").replace(".", ", ").capitalize()


def period_words(period: str | None) -> str:
    """``year_one`` -> "year one" (the employee-months' period)."""
    return PERIOD_WORDS.get(period or "", (period or "").replace("_", " "))
