"""The validated claim of FORMAT.md (``qmcredit.claim/1``): a header and a payroll table.

The header (taxpayer, location, periods, options) is a frozen pydantic model. The payroll is a
polars table, one row per employee and month, normalised and checked by ``qmcredit.payroll``, the
same code the batch engine runs. Money, hours and dates are exact: JSON is parsed with ``Decimal``
and a binary float is never accepted as money.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Annotated, Any, Literal

import polars as pl
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from .law.options import Options
from .problems import Problem

FORMAT = "qmcredit.claim/1"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
MONEY_DIGITS = 15  # whole-dollar digits an amount may have (up to $999 trillion)
FIRST_YEAR, LAST_YEAR = 1901, 9997  # operations_began: its base period and credit years must be calendar dates
_MONEY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


_PLAIN_MONEY = re.compile(r"^\d{1,%d}(\.\d{0,2})?$" % MONEY_DIGITS)  # "1234.56": nothing to strip or check further
_CENT = Decimal("0.01")


def _money(v: Any) -> Decimal:
    if type(v) is str:
        if v[-3:-2] == "." and len(v) <= MONEY_DIGITS + 3 and v.replace(".", "", 1).isdecimal():
            return Decimal(v)  # "1234.56" (\d is isdecimal): in cents already, nothing to quantize
        if _PLAIN_MONEY.match(v):
            return Decimal(v).quantize(_CENT)
    if isinstance(v, bool) or v is None:
        raise ValueError(f"expected an amount like \"1234.56\", got {v!r}")
    if isinstance(v, float):
        raise ValueError(f"got the binary float {v!r}; give money as a decimal string like \"1234.56\"")
    text = str(v).strip().replace(",", "") if isinstance(v, str) else None
    if text is not None and text.startswith("$"):
        text = text[1:]
    try:
        d = Decimal(text) if text is not None else Decimal(v)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"expected an amount like \"1234.56\", got {v!r}") from None
    if text is not None and not _MONEY.match(text) or not d.is_finite():
        raise ValueError(f"expected an amount like \"1234.56\", got {v!r}")
    if d.adjusted() >= MONEY_DIGITS:
        raise ValueError(f"amount {v!r} is too large; amounts are below $10^{MONEY_DIGITS}")
    if d < 0:
        raise ValueError(f"amount {v!r} is negative; amounts are zero or more")
    if d.as_tuple().exponent < -2 and d != d.quantize(Decimal("0.01")):
        raise ValueError(f"amount {v!r} has fractions of a cent; give dollars and cents")
    return d.quantize(Decimal("0.01"))


def _date(v: Any) -> date:
    if isinstance(v, str):
        return _date_text(v)
    if isinstance(v, date):
        return v
    raise ValueError(f"expected a date YYYY-MM-DD, got {v!r}")


@lru_cache(maxsize=8192)  # a batch's periods share few dates; a bad date is not cached, so it raises each time
def _date_text(v: str) -> date:
    if not _DATE.match(v.strip()):
        raise ValueError(f"expected a date YYYY-MM-DD, got {v!r}")
    try:
        return date.fromisoformat(v.strip())
    except ValueError:
        raise ValueError(f"{v!r} is not a calendar date") from None


def _year_month(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not _MONTH.match(v.strip()):
        raise ValueError(f"expected a month YYYY-MM, got {v!r}")
    return v.strip()


def _strict_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise ValueError(f"expected true or false, got {v!r}")


def _word(v: Any) -> Any:
    """Enumerated words are matched without regard to case or surrounding spaces ("CBT" is cbt)."""
    return v.strip().lower() if isinstance(v, str) else v


Money = Annotated[Decimal, BeforeValidator(_money)]
Day = Annotated[date, BeforeValidator(_date)]
YearMonth = Annotated[str | None, BeforeValidator(_year_month)]
Flag = Annotated[bool, BeforeValidator(_strict_bool)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class Taxpayer(_Model):
    id: str = Field(min_length=1)
    name: str = ""
    tax: Annotated[str, BeforeValidator(_word)] = Field(min_length=1, description="cbt or insurance_premiums (E1); any other tax is not eligible")
    uez_benefit: Flag = False
    earlier_credit_period_start: YearMonth = None


class Location(_Model):
    municipality: str = Field(min_length=1)
    address: str = ""
    operations_began: Day
    operations_source: str = ""

    @field_validator("operations_began")
    @classmethod
    def _plausible(cls, d: date) -> date:
        if not FIRST_YEAR <= d.year <= LAST_YEAR:
            raise ValueError(f"{d} is outside the years {FIRST_YEAR} to {LAST_YEAR} this engine can place a base period and two credit years in")
        return d


class Site(Location):
    """One location of a several-location claim (L6): the fields of ``location``, an ``id``
    unique in the claim, and its own payroll table (its ``employees`` are read by the loader)."""

    id: str = Field(min_length=1)
    payroll: str | None = None

    def location(self) -> Location:
        return Location(municipality=self.municipality, address=self.address, operations_began=self.operations_began,
                        operations_source=self.operations_source)


class OtherCredit(_Model):
    name: str = Field(min_length=1)
    amount: Money
    code: int | None = Field(None, ge=1, le=20, description="its number in the Director's list, N.J.A.C. 18:7-3.17(a) (L2a)")
    order: Literal["before", "after"] | None = None


class Period(_Model):
    start: Day
    end: Day
    liability: Money
    minimum_tax: Money | None = None
    alternative_minimum_assessment: Money | None = None
    nj_gross_receipts: Money | None = None
    s_corporation: Flag = False
    group_payroll_5m: Flag = False
    other_credits: tuple[OtherCredit, ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> "Period":
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        return self

    def contains(self, day: date) -> bool:
        return self.start <= day <= self.end

    @property
    def label(self) -> str:
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


class ClaimHeader(_Model):
    format: Literal["qmcredit.claim/1"] = FORMAT
    taxpayer: Taxpayer
    location: Location | None  # required unless ``locations`` is given (L6)
    locations: tuple[Site, ...] | None = None
    periods: tuple[Period, ...] = ()
    options: Options = Options()
    as_of: Day | None = None
    payroll: str | None = None

    @field_validator("periods")
    @classmethod
    def _consecutive(cls, periods: tuple[Period, ...]) -> tuple[Period, ...]:
        for i in range(1, len(periods)):
            prev, cur = periods[i - 1], periods[i]
            if cur.start <= prev.end:
                raise ValueError(
                    f"periods[{i}] ({cur.label}) overlaps or comes before periods[{i - 1}] ({prev.label}); "
                    "list the returns in date order without overlaps"
                )
            if (cur.start - prev.end).days != 1:
                raise ValueError(
                    f"periods[{i}] starts {cur.start} but periods[{i - 1}] ends {prev.end}; the returns must be "
                    "consecutive (carryforward counts periods, L5): add the missing period"
                )
        return periods

    @model_validator(mode="before")
    @classmethod
    def _sites(cls, data: Any) -> Any:
        if isinstance(data, dict) and "locations" in data and "location" not in data:
            return {**data, "location": None}
        return data

    @model_validator(mode="after")
    def _one_form(self) -> "ClaimHeader":
        if (self.location is None) == (self.locations is None):
            raise ValueError("give either \"location\" (one location) or \"locations\" (several locations of the taxpayer, L6), not both or neither")
        if self.locations is not None:
            if not self.locations:
                raise ValueError("\"locations\" is empty: give at least one location")
            seen: dict[str, int] = {}
            for i, site in enumerate(self.locations):
                if site.id in seen:
                    raise ValueError(f"locations[{i}].id {site.id!r} is also locations[{seen[site.id]}].id; give each location a unique id")
                seen[site.id] = i
        return self

    def part(self, site: Site) -> "ClaimHeader":
        """The one-location header of ``site`` (its return's taxpayer, periods and options)."""
        return self.model_copy(update={"location": site.location(), "locations": None, "payroll": site.payroll})


class Employee(_Model):
    id: str = Field(min_length=1)
    ownership_interest: Flag = False
    owner_relation: Annotated[Literal["spouse", "dependant", "ancestor", "descendant"] | None, BeforeValidator(_word)] = None
    basis: Annotated[Literal["permanent", "temporary", "seasonal"], BeforeValidator(_word)] = "permanent"
    hours: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class Claim:
    """A validated claim: header plus normalised payroll (see ``qmcredit.payroll.COLUMNS``)."""

    header: ClaimHeader
    payroll: pl.DataFrame
    source: str | None = None
    parts: tuple["Claim", ...] = ()  # a several-location claim (L6): one one-location claim per location, in order
    location_id: str | None = None   # the id of the location of a part

    @property
    def locations(self) -> tuple["Claim", ...]:
        """The return's locations as one-location claims: a one-location claim is its own."""
        return self.parts or (self,)

    @property
    def taxpayer(self) -> Taxpayer:
        return self.header.taxpayer

    @property
    def periods(self) -> tuple[Period, ...]:
        return self.header.periods

    @property
    def options(self) -> Options:
        return self.header.options


def location_of(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "claim"


def problems_from_validation(err: ValidationError, prefix: str = "") -> list[Problem]:
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if p not in ("function-before[_money(), decimal]",))
        msg = e["msg"]
        for junk in ("Value error, ", "Assertion failed, "):
            if msg.startswith(junk):
                msg = msg[len(junk):]
        if e["type"] == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}; see FORMAT.md for the fields of this object"
        elif e["type"] == "missing":
            msg = "is required but missing"
        elif e["type"] == "literal_error":
            msg = f"{msg}; got {e.get('input')!r}"
        elif e["type"] == "dict_type" and loc and loc[-1] == "hours":
            msg = "must be an object of hours keyed by calendar month, e.g. {\"2004-05\": 160}"
        where = location_of(loc)
        out.append(Problem(f"{prefix}{where}" if prefix else where, msg))
    return out
