"""E1-E5, N.J.S.A. 52:27BBB-55(a) and (d): who may have the credit.

> a. A taxpayer engaged in the conduct of business within a qualified municipality and who is not
> receiving a benefit under the "New Jersey Urban Enterprise Zones Act," ... may apply to receive a
> tax credit against the amount of tax otherwise imposed under the "Corporation Business Tax Act
> (1945)," ... or the tax imposed on insurers ...
> d. ... No taxpayer shall be allowed more than a single 24-month continuous period in which credits
> shall be allowed ...
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from .parameters import qualified_municipalities
from .rule import rule
from .windows import Windows

TAXES = ("cbt", "insurance_premiums")


@dataclass(frozen=True, slots=True)
class Check:
    rule: str
    cite: str
    condition: str
    passed: bool
    message: str
    statute: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "cite": self.cite, "condition": self.condition, "passed": self.passed, "message": self.message, "statute": self.statute}


@lru_cache(maxsize=64)  # each check is a pure function of a few values that a batch's claims repeat
def taxpayer_pays_eligible_tax(tax: str) -> Check:
    """E1 (a): the credit is against the Corporation Business Tax or the tax on insurers only."""
    ok = tax in TAXES
    return Check(
        "E1", "52:27BBB-55(a)", "The taxpayer pays the Corporation Business Tax or the tax on insurers", ok,
        f"tax {tax!r} is {'an eligible tax' if ok else 'neither cbt nor insurance_premiums: the credit is against those taxes only'}",
        "a tax credit against the amount of tax otherwise imposed under the \"Corporation Business Tax Act (1945),\" ... or the tax imposed on insurers",
    )


@lru_cache(maxsize=1024)
def location_in_qualified_municipality(municipality: str, qualified: tuple | None = None) -> Check:
    """E2 (a): the location is within a qualified municipality (a parameter; Camden). ``qualified``:
    the municipalities of a ``ParameterSet`` (default: the parameter file's)."""
    qualified = qualified_municipalities() if qualified is None else qualified
    match = next((m for m in qualified if m.matches(municipality)), None)
    names = ", ".join(m.name for m in qualified)
    return Check(
        "E2", "52:27BBB-55(a)", "The location is within a qualified municipality", match is not None,
        f"{municipality!r} is {'the qualified municipality ' + match.name if match else 'not a qualified municipality (qualified: ' + names + ')'}",
        "A taxpayer engaged in the conduct of business within a qualified municipality",
    )


@lru_cache(maxsize=4)
def no_uez_benefit(uez_benefit: bool) -> Check:
    """E3 (a): a taxpayer receiving a benefit under the Urban Enterprise Zones Act is not eligible."""
    return Check(
        "E3", "52:27BBB-55(a)", "The taxpayer receives no benefit under the Urban Enterprise Zones Act", not uez_benefit,
        "the taxpayer receives a benefit under the Urban Enterprise Zones Act (P.L.1983, c.303)" if uez_benefit
        else "no Urban Enterprise Zones benefit",
        "who is not receiving a benefit under the \"New Jersey Urban Enterprise Zones Act,\" P.L.1983, c.303",
    )


@rule("E4", "N.J.S.A. 52:27BBB-55(d)", "one continuous 24-month credit period per taxpayer; with several locations, "
      "every location's credit year one starts on the taxpayer's window, else that location fails alone")
def single_credit_period(earlier_start: str | None, windows: Windows, window_of: str | None = None) -> Check:
    """E4 (d): one continuous 24-month credit period in the taxpayer's life; a claim for the same
    period (a recomputation) stays eligible. With several locations (L6) the window is the
    taxpayer's: ``earlier_start``, else the first listed location's (``window_of`` names it)."""
    return _NO_EARLIER if earlier_start is None else _single_credit_period(earlier_start, windows.year_one.first_month, window_of)


def _e4(ok: bool, msg: str) -> Check:
    return Check(
        "E4", "52:27BBB-55(d)", "No earlier 24-month credit period other than this one", ok, msg,
        "No taxpayer shall be allowed more than a single 24-month continuous period in which credits shall be allowed",
    )


_NO_EARLIER = _e4(True, "no earlier credit period")


@lru_cache(maxsize=4096)  # a batch's claims share a few hundred first months
def _single_credit_period(earlier_start: str, year_one: int, window_of: str | None) -> Check:
    """``single_credit_period`` with an earlier (or the taxpayer's) credit period, credit year one
    starting in month ``year_one``."""
    this = date(year_one // 12, year_one % 12 + 1, 1).strftime("%Y-%m")
    ok = earlier_start == this
    if window_of is not None:
        msg = (f"credit year one starts {this}, the taxpayer's credit window (that of its first listed location {window_of!r})" if ok else
               f"the taxpayer's credit window starts {earlier_start} (its first listed location {window_of!r}); this location's credit year one starts {this}: "
               "one taxpayer has one 24-month credit period, so every location's credit year one must start on the same month")
    elif ok:
        msg = f"the earlier credit period starting {earlier_start} is this one (a recomputation)"
    else:
        msg = f"the taxpayer already had a 24-month credit period starting {earlier_start}; this claim's starts {this}"
    return _e4(ok, msg)


def operations_began_known(operations_began: date, source: str) -> dict:
    """B2 (d): the Director sets when operations began; the engine takes the date as a fact and records its source."""
    return {"operations_began": operations_began.isoformat(), "operations_source": source or "(not given)"}


@rule("E5", "N.J.S.A. 52:27BBB-55(a), (d)", "eligible when every condition holds; every failed condition is reported")
def checks(tax: str, municipality: str, uez_benefit: bool, earlier_start: str | None, windows: Windows, window_of: str | None = None,
           qualified: tuple | None = None) -> tuple[Check, ...]:
    """E5: every condition is checked, and every failure is reported, not only the first."""
    return (
        taxpayer_pays_eligible_tax(tax),
        location_in_qualified_municipality(municipality, qualified),
        no_uez_benefit(uez_benefit),
        single_credit_period(earlier_start, windows, window_of),
    )


def eligible(checks: tuple[Check, ...]) -> bool:
    """E5, N.J.S.A. 52:27BBB-55(a), (d): the taxpayer is eligible only when every condition of
    ``checks`` holds; one failed condition is enough to refuse the credit."""
    return all([c.passed for c in checks])
