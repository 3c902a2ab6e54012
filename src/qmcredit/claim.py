"""The validated claim of docs/format.md (``qmcredit.claim/1``): a header and a payroll table.

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
from typing import Annotated, Any, Callable, Literal, NamedTuple, TypeVar

import polars as pl
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from .law import limits
from .payroll import THOUSANDS  # the number-reading rule: money's commas as hours'
from .law.options import Options, strict_flag
from .law.returns import period_length_problem
from .problems import Problem

FORMAT = "qmcredit.claim/1"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
MONEY_DIGITS = 15  # whole-dollar digits an amount may have (up to $999 trillion)
FIRST_YEAR, LAST_YEAR = 1901, 9997  # operations_began: its base period and credit years must be calendar dates
_MONEY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


_PLAIN_MONEY = re.compile(r"^\d{1,%d}(\.\d{0,2})?$" % MONEY_DIGITS)  # "1234.56": nothing to strip or check further
#: an amount's text that ``_money`` reads as ``Decimal(text)`` (ASCII digits, a point and two
#: cents), a pattern polars can run on a column: the batch's plain money (``batch.header_columns``)
PLAIN_MONEY = re.compile(r"^[0-9]{1,%d}\.[0-9]{2}$" % MONEY_DIGITS)
_CENT = Decimal("0.01")


def readings(text: str) -> tuple[str, str]:
    """A number's text read with the comma as the decimal point (points as thousands
    separators), and with the comma as a thousands separator."""
    return text.replace(".", "").replace(",", "."), text.replace(",", "")


def two_readings(text: str) -> str:
    """The two readings of a number whose comma is not a thousands separator (for the message)."""
    as_decimal, as_thousands = readings(text)
    return f"it could be read as {as_decimal} (comma as the decimal point) or as {as_thousands} (comma as a thousands separator)"


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
    text = str(v).strip() if isinstance(v, str) else None
    if text is not None and text.startswith("$"):
        text = text[1:]
    if text is not None and "," in text:
        if not THOUSANDS.match(text):
            if all(_MONEY.match(r) for r in readings(text)):
                raise ValueError(f"{v!r} is ambiguous: {two_readings(text)}; write it with a point for the cents and no other separator, e.g. \"1234.56\"")
            raise ValueError(f"expected an amount like \"1234.56\", got {v!r}")
        text = text.replace(",", "")
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


def _word(v: Any) -> Any:
    """Enumerated words are matched without regard to case or surrounding spaces ("CBT" is cbt)."""
    return v.strip().lower() if isinstance(v, str) else v


Money = Annotated[Decimal, BeforeValidator(_money)]
Day = Annotated[date, BeforeValidator(_date)]
YearMonth = Annotated[str | None, BeforeValidator(_year_month)]
Flag = Annotated[bool, BeforeValidator(strict_flag)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        """A field written as null is not given: its default applies (a required one is missing)."""
        if isinstance(data, dict) and None in data.values():
            return {k: v for k, v in data.items() if v is not None}
        return data


class Taxpayer(_Model):
    id: str = Field(min_length=1)
    name: str = ""
    tax: Annotated[str, BeforeValidator(_word)] = Field(min_length=1, description="cbt or insurance_premiums (E1); any other tax is not eligible")
    uez_benefit: Flag = False
    earlier_credit_period_start: YearMonth = None
    unitary_id: str = Field("", description="the combined group's New Jersey unitary ID, printed in Form 313's header; decides nothing")


def plausible_start(d: date) -> date:
    """``operations_began`` in the years whose base period and credit years are calendar dates."""
    if not FIRST_YEAR <= d.year <= LAST_YEAR:
        raise ValueError(f"{d} is outside the years {FIRST_YEAR} to {LAST_YEAR} this engine can place a base period and two credit years in")
    return d


class Location(_Model):
    municipality: str = Field(min_length=1)
    address: str = ""
    operations_began: Day
    operations_source: str = ""

    @field_validator("operations_began")
    @classmethod
    def _plausible(cls, d: date) -> date:
        return plausible_start(d)


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


def ordered(start: date, end: date) -> None:
    """A period's end is not before its start."""
    if end < start:
        raise ValueError(f"end {end} is before start {start}")


class Period(_Model):
    start: Day
    end: Day
    liability: Money
    minimum_tax: Money | None = None
    alternative_minimum_assessment: Money | None = None
    nj_gross_receipts: Money | None = None
    s_corporation: Flag = False
    group_payroll_5m: Flag = False
    group_payroll: Money | None = None
    combined_group_member: Flag = False
    other_credits: tuple[OtherCredit, ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> "Period":
        ordered(self.start, self.end)
        return self

    def contains(self, day: date) -> bool:
        return self.start <= day <= self.end

    @property
    def label(self) -> str:
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


def _ssn(v: Any) -> str | None:
    """An SSN: nine digits, dashes and spaces allowed (FORMAT.md, "Who the employees are")."""
    if v is None:
        return None
    digits = re.sub(r"[\s-]", "", v) if isinstance(v, str) else None
    if digits is None or not re.fullmatch(r"\d{9}", digits):
        raise ValueError("must be nine digits, e.g. \"123-45-6789\"")
    return digits


class ClaimHeader(_Model):
    format: Literal["qmcredit.claim/1"] = FORMAT
    taxpayer: Taxpayer
    location: Location | None = None  # required unless ``locations`` is given (L6): ``_one_form``
    locations: tuple[Site, ...] | None = None
    periods: tuple[Period, ...] = ()
    options: Options = Options()
    as_of: Day | None = None
    payroll: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "ClaimHeader":
        if self.location is not None and self.locations is not None:
            raise ValueError("give either \"location\" (one location) or \"locations\" (several locations of the taxpayer, L6), not both")
        # neither: ``header_problems`` names the missing field (validate_header, the one door, runs both)
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
    ssn: Annotated[str | None, BeforeValidator(_ssn)] = None
    hired: Day | None = None
    separated: Day | None = None


@dataclass(frozen=True)
class Claim:
    """A validated claim: header plus normalised payroll (see ``qmcredit.payroll.COLUMNS``)."""

    header: ClaimHeader
    payroll: pl.DataFrame
    source: str | None = None
    people: pl.DataFrame | None = None  # who the employees are: employee_id, name, ssn, hired, separated (imports.people)
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
            msg = f"unknown field {loc[-1]!r}; see docs/format.md for the fields of this object"
        elif e["type"] == "missing":
            msg = "is required but missing"
        elif e["type"] == "literal_error":
            msg = f"{msg}; got {e.get('input')!r}"
        elif e["type"] == "dict_type" and loc and loc[-1] == "hours":
            msg = "must be an object of hours keyed by calendar month, e.g. {\"2004-05\": 160}"
        where = location_of(loc)
        out.append(Problem(f"{prefix}{where}" if prefix else where, msg))
    return out


_BAD = object()  # a value its own validation refuses (reported there): the checks that need it are skipped


def _lenient(obj: Any, key: str, parse, default: Any = None) -> Any:
    """``obj[key]`` read by the field's own parser; ``default`` when absent or null, ``_BAD``
    when unreadable."""
    if not isinstance(obj, dict) or obj.get(key) is None:
        return default
    try:
        return parse(obj[key])
    except (ValueError, TypeError):
        return _BAD


class _Read(NamedTuple):
    """The fields of one period the cross-field checks read, read leniently (``_BAD`` for a
    field its own validation refuses; a validated ``Period`` has the same attributes)."""

    start: Any
    end: Any
    s_corporation: Any
    alternative_minimum_assessment: Any
    group_payroll_5m: Any
    group_payroll: Any
    minimum_tax: Any
    nj_gross_receipts: Any
    combined_group_member: Any


def _read_leniently(p: dict) -> tuple[_Read, Any]:
    """A period document's fields as ``_Read``, and its ``group_payroll_5m`` as given (None when not)."""
    flag = lambda k: _lenient(p, k, strict_flag, False)  # noqa: E731
    given = _lenient(p, "group_payroll_5m", strict_flag)
    return _Read(
        _lenient(p, "start", _date), _lenient(p, "end", _date), flag("s_corporation"), _lenient(p, "alternative_minimum_assessment", _money),
        False if given is None else given, _lenient(p, "group_payroll", _money), _lenient(p, "minimum_tax", _money),
        _lenient(p, "nj_gross_receipts", _money), flag("combined_group_member")), given


def _period_problems(i: int, tax: Any, s_group: Any, p: Period | _Read, flag: Any) -> list[Problem]:
    """The checks of one period across its fields: V1 (length), L2b (AMA), L2c (group payroll
    against ``flag``, the flag as given) and L2 (the minimum tax can be read or derived, CBT)."""
    start, end = p.start, p.end
    if not isinstance(start, date) or not isinstance(end, date) or end < start:
        return []  # the dates' own problems are reported by validation
    found = []
    why = period_length_problem(start, end)
    if why:
        found.append(Problem(f"periods[{i}].end", why))
    s_corp, ama = p.s_corporation, p.alternative_minimum_assessment
    if ama is not None and isinstance(tax, str) and s_corp is not _BAD and ama is not _BAD:
        why = limits.ama_problem(tax, start, s_corp, ama)
        if why:
            found.append(Problem(f"periods[{i}].alternative_minimum_assessment", why))
    payroll = p.group_payroll
    if isinstance(flag, bool) and isinstance(payroll, Decimal):
        member, _ = limits.group_payroll_test(start, end, False, payroll)
        if member != flag:
            found.append(Problem(f"periods[{i}].group_payroll_5m", f"is {str(flag).lower()} but group_payroll {payroll} says the group is "
                                 f"{'' if member else 'not '}a $5,000,000-payroll group (L2c); give one of them"))
    # L2: a minimum tax given is read as given; one to derive needs every field it is derived from
    if p.minimum_tax is None and tax == "cbt" and s_group in ("reduced", "full"):
        inputs = (p.nj_gross_receipts, payroll, s_corp, p.group_payroll_5m, p.combined_group_member)
        if all(v is not _BAD for v in inputs):
            try:
                limits.minimum_tax(tax, start, end, None, inputs[0], s_corp, inputs[3], payroll, inputs[4], s_group, None)  # prepare's cache entry
            except limits.MinimumTaxUnknown as e:
                found.append(Problem(f"periods[{i}].minimum_tax", str(e)))
    return found


def _checks(has_location: bool, tax: Any, s_group: Any, periods: list, flags: list) -> list[Problem]:
    """The checks of a header across its fields: a location given, the periods in date order and
    consecutive (V1), and each period's ``_period_problems``."""
    found: list[Problem] = []
    if not has_location:
        found.append(Problem("location", "is required but missing: give the location (or \"locations\", several locations of the taxpayer, L6)"))
    for i in range(1, len(periods)):
        prev_end, cur = periods[i - 1].end, periods[i].start
        if not isinstance(prev_end, date) or not isinstance(cur, date):
            continue
        if cur <= prev_end:
            found.append(Problem(f"periods[{i}].start", f"{cur} is not after periods[{i - 1}]'s end {prev_end}; list the returns in date order without overlaps"))
        elif (cur - prev_end).days != 1:
            found.append(Problem(f"periods[{i}].start", f"{cur} leaves a gap after periods[{i - 1}]'s end {prev_end}; the returns must be "
                                 "consecutive (carryforward counts periods, L5, V1): add the missing period"))
    for i, (p, flag) in enumerate(zip(periods, flags)):
        found += _period_problems(i, tax, s_group, p, flag)
    return found


_NO_PERIOD = (_Read(*(None,) * len(_Read._fields)), None)


def header_problems(doc: dict) -> list[Problem]:
    """``_checks`` of a header document that did not validate, on every field that can be read,
    so that they are reported with every other problem of the claim (``validate`` runs every
    check ``compute`` runs)."""
    tax = _lenient(doc.get("taxpayer"), "tax", _word)
    s_group = _lenient(doc.get("options"), "s_corporation_group_minimum", _word, "reduced")
    periods = doc.get("periods")
    read = [_read_leniently(p) if isinstance(p, dict) else _NO_PERIOD for p in periods] if isinstance(periods, list) else []
    return _checks(doc.get("location") is not None or doc.get("locations") is not None, tax, s_group,
                   [r for r, _ in read], [flag for _, flag in read])


def model_problems(header: ClaimHeader) -> list[Problem]:
    """``_checks`` of a validated header, on its fields as validated (they read as
    ``header_problems`` reads its document's)."""
    periods = header.periods
    flags = [p.group_payroll_5m if "group_payroll_5m" in p.__pydantic_fields_set__ else None for p in periods]  # compared only when given
    return _checks(header.location is not None or header.locations is not None, header.taxpayer.tax,
                   header.options.s_corporation_group_minimum, periods, flags)


_M = TypeVar("_M", bound=BaseModel)


def constructor(cls: type[_M]) -> Callable[[dict, set], _M]:
    """``make(fields, given)``: the model ``cls.model_validate`` makes of a document whose fields,
    read by their own parsers (``_money``, ``_date``, ``plausible_start``, ``ordered``...), are
    ``fields`` (every field, in field order, a default where not given) and whose fields given
    are ``given`` (its ``model_fields_set``). For the batch's plain cells
    (``batch.header_columns``), which validation would take as they are; its equality with
    validation is tested (tests/test_header_columns.py)."""
    new = object.__new__
    put_dict, put_given, put_extra, put_private = (  # the slots' own setters
        BaseModel.__dict__[k].__set__ for k in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"))

    def make(fields: dict, given: set) -> _M:
        m = new(cls)
        put_dict(m, fields)
        put_given(m, given)
        put_extra(m, None)
        put_private(m, None)
        return m
    return make


@lru_cache(maxsize=None)
def _constructor(cls: type[BaseModel]) -> tuple[Callable, dict, frozenset]:
    fields = cls.model_fields
    if any(f.default_factory for f in fields.values()):
        raise TypeError(f"{cls.__name__} has a default made per instance; built() gives defaults as they are")
    return constructor(cls), {k: f.default for k, f in fields.items()}, frozenset(k for k, f in fields.items() if f.is_required())


def built(cls: type[_M], values: dict) -> _M:
    """``constructor(cls)`` of the fields given, ``values``; the others take their defaults."""
    make, defaults, required = _constructor(cls)
    if not required <= values.keys():
        raise ValueError(f"{cls.__name__}: a required field is missing")
    return make({**defaults, **values}, set(values))


def validate_header(doc: dict) -> tuple[ClaimHeader | None, list[Problem]]:
    """A header document validated: the header (None when it has a problem) and every problem,
    of its fields (pydantic) and across them (``model_problems`` of the model when it validated,
    else ``header_problems`` of the document)."""
    try:
        header = ClaimHeader.model_validate(doc)
    except ValidationError as e:
        return None, problems_from_validation(e) + header_problems(doc)
    found = model_problems(header)
    return (header if not found else None), found
