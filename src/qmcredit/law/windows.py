"""W1-W3, N.J.S.A. 52:27BBB-55(e): the three measured periods of twelve calendar months.

> "Credit year one" means the first twelve calendar months following initial or expanded
> operations at a location within a qualified municipality ...
> "Credit year two" means the twelve calendar months following credit year one.
> ... the twelve-month period preceding credit year one ...
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from .options import Options
from .rule import rule

CITE = "N.J.S.A. 52:27BBB-55(e)"
PERIOD_NAMES = ("base", "year_one", "year_two")


@lru_cache(maxsize=4096)  # a run's windows share a few hundred months
def _first_of(idx: int) -> date:
    return date(idx // 12, idx % 12 + 1, 1)


@lru_cache(maxsize=4096)
def _last_before(idx: int) -> date:
    """The last day of the month before month ``idx``."""
    return _first_of(idx) - timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Window:
    name: str
    first_month: int  # month index, year * 12 + month - 1

    @property
    def months(self) -> range:
        return range(self.first_month, self.first_month + 12)

    @property
    def start(self) -> date:
        return _first_of(self.first_month)

    @property
    def end(self) -> date:
        return _last_before(self.first_month + 12)

    def to_dict(self) -> dict:
        return {"start": self.start.isoformat(), "end": self.end.isoformat()}


@dataclass(frozen=True, slots=True)
class Windows:
    base: Window
    year_one: Window
    year_two: Window

    def __iter__(self):
        return iter((self.base, self.year_one, self.year_two))

    @property
    def first_month(self) -> int:
        return self.base.first_month

    def to_dict(self) -> dict:
        return {w.name: w.to_dict() for w in self}


def year_one_first_month(operations_began: date, options: Options) -> int:
    """W1 (e): credit year one starts on the first day of the month after the month operations
    began; with option ``year_one_start = "same_month_if_first_day"``, in that month when they
    began on its first day."""
    began = operations_began.year * 12 + operations_began.month - 1
    if options.year_one_start == "same_month_if_first_day" and operations_began.day == 1:
        return began
    return began + 1


@rule("W1-W3", CITE, "credit year one: the twelve calendar months after the month operations began; year two the next twelve; base the twelve before")
def windows(operations_began: date, options: Options) -> Windows:
    """W1-W3 (e): base period = the 12 months before credit year one (W3); credit year two = the
    12 months after credit year one (W2)."""
    return windows_from(year_one_first_month(operations_began, options))


def windows_from(year_one: int) -> Windows:
    """W2-W3 (e) of a credit year one starting in month ``year_one`` (``year_one_first_month``)."""
    return Windows(Window("base", year_one - 12), Window("year_one", year_one), Window("year_two", year_one + 12))
