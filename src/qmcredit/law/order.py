"""L2a, N.J.S.A. 52:27BBB-55(b)(3) with N.J.A.C. 18:7-3.17: which other credits come before this
one, and so reduce its room.

> (a) The following are credits permitted against the corporation business tax ... (b) ...
> carryovers ... shall be applied in the sequence listed ...

The Director's list is a dated, cited parameter (``parameters/directors_list.toml``). An other
credit is named by its number in the list (``code``) or by its listed name (without regard to
case); a given ``order`` stands; else it is derived by option ``credit_order``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from functools import cache, lru_cache
from importlib import resources
from typing import NamedTuple

from .rule import rule

CITE = "N.J.S.A. 52:27BBB-55(b)(3); N.J.A.C. 18:7-3.17(a)"


@dataclass(frozen=True, slots=True)
class Listed:
    number: int
    name: str
    statute: str


@dataclass(frozen=True, slots=True)
class DirectorsList:
    cite: str
    source: str
    start: date
    this_credit: int
    credits: tuple[Listed, ...]
    by_name: dict[str, Listed]  # casefolded name -> its entry

    def find(self, code: int | None, name: str) -> Listed | None:
        """The listed credit of ``code``, else of ``name`` (case and spacing aside)."""
        if code is not None:
            return self.credits[code - 1]
        return self.by_name.get(" ".join(name.split()).casefold())

    def trace(self) -> dict:
        return {"cite": self.cite, "source": self.source, "in_force_from": self.start.isoformat(), "this_credit": self.this_credit}


@cache
def directors_list() -> DirectorsList:
    raw = tomllib.loads(resources.files(__package__).joinpath("parameters", "directors_list.toml").read_text("utf-8"))
    credits = tuple(Listed(c["number"], c["name"], c["statute"]) for c in sorted(raw["credit"], key=lambda c: c["number"]))
    return DirectorsList(raw["cite"], raw["source"], date.fromisoformat(raw["from"]), raw["this_credit"], credits,
                         {c.name.casefold(): c for c in credits})


class Placed(NamedTuple):
    """An other credit placed before or after this one, and why."""

    order: str             # "before" or "after"
    basis: str             # "given", "form_313" or "regulation"
    listed: Listed | None  # its entry in the Director's list, when named there


class CreditNotPlaced(ValueError):
    """An other credit whose place in the order cannot be derived."""


FORM_313 = "Form 313 Part IV line 16 subtracts every credit taken on the return: it counts before this one"
REGULATION = "by its place in the Director's list (N.J.A.C. 18:7-3.17(a)): numbers 1-13 before this credit (14), 15 and on after it"


@rule("L2a", CITE, "a given order stands; else, by option credit_order, every other credit counts before this one (\"form_313\", "
      "line 16 of Form 313) or the credits listed ahead of number 14 count before it and those behind after it (\"regulation\")")
@lru_cache(maxsize=8192)  # a batch's credits repeat a few names and codes
def place(code: int | None, name: str, given: str | None, credit_order: str) -> Placed:
    """L2a: the place of one other credit. Raises ``CreditNotPlaced`` for this credit itself, and,
    under ``"regulation"``, for a credit neither in the list nor given an ``order``."""
    dl = directors_list()
    listed = dl.find(code, name)
    if listed is not None and listed.number == dl.this_credit:
        raise CreditNotPlaced(f"{listed.name} (number {dl.this_credit}) is this credit, not another one; give the taxpayer's other "
                              "locations under \"locations\" (L6), where they share one room")
    if given is not None:
        return Placed(given, "given", listed)
    if credit_order == "form_313":
        return Placed("before", "form_313", listed)
    if listed is None:
        raise CreditNotPlaced(f"{name!r} is not in the Director's list ({dl.cite}) by name, and has no code or order: under "
                              "credit_order = \"regulation\" give its \"code\" (1-20) or its \"order\" (\"before\" or \"after\")")
    return Placed("before" if listed.number < dl.this_credit else "after", "regulation", listed)


def earlier_version(period_start: date) -> str | None:
    """L2a: the warning for a period beginning before the recorded list was in force."""
    dl = directors_list()
    if period_start >= dl.start:
        return None
    return (f"the period beginning {period_start} began before {dl.start}, when the recorded list ({dl.source}) came into force: "
            "an earlier version of N.J.A.C. 18:7-3.17 was in force, and the recorded list is used")


@rule("L2", "N.J.S.A. 52:27BBB-55(b)(3)", "the other credits applied before this one reduce its room; those after it do not")
def sums(amounts: list[int], placed: list[Placed]) -> tuple[int, int]:
    """L2: a period's other credits before this one and after it, in cents."""
    before = sum(a for a, p in zip(amounts, placed) if p.order == "before")
    return before, sum(amounts) - before
