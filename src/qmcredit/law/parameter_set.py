"""The set of parameters the rules read: the baseline (the files of ``law/parameters/``) or a
reform (the baseline overlaid with dated, named, cited changes read from a TOML file).

A set is passed to the rules explicitly (``core.prepare(..., params=)``, ``Thresholds.at``,
``limits.minimum_tax``, ``eligibility.checks``); nothing global is changed, so a baseline and
any number of reforms are decided by the same code in the same run. A set is hashed by identity:
a batch's caches are keyed by it. The reform file's format is in docs/analysis.md.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, fields, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..problems import ClaimError, Problem
from .options import Options
from .windows import windows
from .parameters import (
    DatedValue, MinimumTaxParameters, MinimumTaxSchedule, Municipality, Parameter, credit_parameters, minimum_tax_parameters,
    qualified_municipalities,
)


@dataclass(frozen=True, slots=True)
class Qualified:
    """A qualified municipality (E2), for claims whose credit year one starts within
    [``since``, ``until``) (None: unbounded; the baseline's are unbounded, as E2 reads them)."""

    municipality: Municipality
    since: date | None = None
    until: date | None = None

    def holds(self, when: date) -> bool:
        return (self.since is None or self.since <= when) and (self.until is None or when < self.until)


@dataclass(frozen=True, slots=True)
class OptionChange:
    """A reform's setting of a claim option (``law.options``) for claims whose credit year one
    starts on or after ``start``: it replaces the claim's own choice."""

    name: str
    value: Any
    start: date


@dataclass(frozen=True, slots=True)
class Change:
    """One change of a reform, as its report lists it."""

    name: str
    what: str
    start: str
    source: str
    cite: str

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.name, self.what, self.start, self.source, self.cite)


@dataclass(frozen=True, eq=False)
class ParameterSet:
    name: str
    description: str
    credit: dict[str, Parameter]
    municipalities: tuple[Qualified, ...]
    minimum_tax: MinimumTaxParameters
    options: tuple[OptionChange, ...] = ()
    changes: tuple[Change, ...] = ()

    def parameter(self, name: str) -> Parameter:
        return self.credit[name]

    def __reduce__(self):
        """Pickled (a partition's task, to a worker process) as the baseline itself, or as its
        fields with a digest of them, and unpickled as the one set of that digest in the process
        that receives it (``_received``). A set is hashed by identity: were each partition given a
        new object, every cache keyed by the set (``core._constants``, ``Thresholds.at``, the
        minimum taxes) would miss once a partition, not once a process."""
        import pickle  # here, not at the top: only a set sent to another process needs it (one claim's start-up does not)

        if self is baseline():
            return (baseline, ())
        parts = tuple(getattr(self, f.name) for f in fields(self))
        return (_received, (hashlib.sha256(pickle.dumps(parts)).hexdigest(), parts))

    def qualified(self, when: date) -> tuple[Municipality, ...]:
        """E2: the qualified municipalities for a claim whose credit year one starts ``when``."""
        return tuple(q.municipality for q in self.municipalities if q.holds(when))

    def options_for(self, options: Options, year_one_start: date) -> Options:
        """A claim's options under this set: the reform's option changes in force at the start of
        its credit year one (as its own options place it) replace its own choices. Read once per
        (set, options, start): a batch reads each claim's header under its set twice (for its
        constants, then to prepare it), and its claims share a few options and a few hundred starts."""
        return _options_under(self, options, year_one_start)

    def header_for(self, header):
        """A claim header with its options under this set (``options_for``); the header itself
        when the set changes no option that applies to it."""
        if not self.options:
            return header
        start = windows(header.location.operations_began, header.options).year_one.start
        opts = self.options_for(header.options, start)
        return header if opts == header.options else header.model_copy(update={"options": opts})


_RECEIVED: dict[str, ParameterSet] = {}  # digest of a set's fields -> the set, as this process received it


def _received(digest: str, parts: tuple) -> ParameterSet:
    """The set of ``digest`` (``ParameterSet.__reduce__``): made of ``parts`` the first time this
    process receives it, the same object every time after."""
    made = _RECEIVED.get(digest)
    if made is None:
        made = _RECEIVED[digest] = ParameterSet(*parts)
    return made


@lru_cache(maxsize=8192)
def _options_under(params: ParameterSet, options: Options, year_one_start: date) -> Options:
    """``ParameterSet.options_for``, uncached."""
    update = {c.name: c.value for c in params.options if c.start <= year_one_start}
    if not update:
        return options
    return Options.model_validate({**options.model_dump(), **update})


@cache
def baseline() -> ParameterSet:
    """The law as the files of ``law/parameters/`` record it."""
    return ParameterSet(
        "baseline", "the law as recorded in law/parameters/", credit_parameters(),
        tuple(Qualified(m) for m in qualified_municipalities()), minimum_tax_parameters(),
    )


# -- reform files ---------------------------------------------------------------------------------
_COMMON = ("name", "source", "cite")


def load_reform(path: Path, base: ParameterSet | None = None) -> ParameterSet:
    """A reform file read over ``base`` (the baseline). Every problem of the file is reported at
    once, each naming its change (``change[2].value``) and the fix."""
    where = str(path)
    try:
        text = path.read_text("utf-8")
    except OSError as e:
        raise ClaimError([Problem(where, f"cannot read the reform file: {e.strerror}")]) from None
    except UnicodeDecodeError as e:
        raise ClaimError([Problem(where, f"not UTF-8 text ({e.reason} at byte {e.start})")]) from None
    return parse_reform(text, where, base)


def parse_reform(text: str, where: str = "reform", base: ParameterSet | None = None) -> ParameterSet:
    """A reform file's text (``load_reform``'s, or an upload's) read over ``base``."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ClaimError([Problem(where, f"not valid TOML: {e}")]) from None
    return reform_from_dict(doc, where, base)


def reform_from_dict(doc: dict, where: str = "reform", base: ParameterSet | None = None) -> ParameterSet:
    base = base or baseline()
    problems: list[Problem] = []
    unknown = sorted(set(doc) - {"name", "description", "change"})
    if unknown:
        problems.append(Problem(where, f"unknown key(s) {', '.join(unknown)}; a reform has name, description and [[change]] tables"))
    name = doc.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) or name == "baseline":
        problems.append(Problem(f"{where}: name", "give the reform a name of letters, digits, _ . - (not 'baseline'): it names its rows in every table"))
    credit, munis, mt, options, changes = dict(base.credit), list(base.municipalities), base.minimum_tax, list(base.options), []
    raw = doc.get("change", [])
    if not isinstance(raw, list) or not raw:
        problems.append(Problem(f"{where}: change", "give at least one [[change]] table"))
        raw = []
    for i, ch in enumerate(raw):
        at = f"{where}: change[{i}]"
        found: list[Problem] = []
        if not isinstance(ch, dict):
            problems.append(Problem(at, "each change is a table ([[change]])"))
            continue
        for k in _COMMON:
            if not isinstance(ch.get(k), str) or not ch[k].strip():
                found.append(Problem(f"{at}.{k}", f"give the change's {k} (text): a change is named and cited like a parameter"))
        try:
            if "option" in ch:
                options.append(_option(ch, at, found))
                what = f"option {ch['option']} = {ch.get('value')!r}"
            elif ch.get("parameter") == "municipalities":
                munis = _municipalities(ch, at, munis, found)
                what = f"municipalities: add {[m.get('name') for m in ch.get('add', [])]}, remove {ch.get('remove', [])}"
            elif ch.get("parameter") == "minimum_tax.schedule":
                mt = _schedule(ch, at, mt, found)
                what = f"minimum-tax schedule from {ch.get('from_year')}"
            elif ch.get("parameter") == "minimum_tax.s_corporation":
                mt = _s_corporation(ch, at, mt, found)
                what = f"S corporation minimum tax: {ch.get('share')} from {ch.get('from_year')}"
            elif ch.get("parameter") in credit:
                credit[ch["parameter"]] = _dated(ch, at, credit[ch["parameter"]], found)
                what = f"{ch['parameter']} = {ch.get('value')}"
            else:
                known = ", ".join([*base.credit, "minimum_tax.schedule", "minimum_tax.s_corporation", "municipalities"])
                found.append(Problem(f"{at}.parameter", f"give a parameter ({known}) or an option ({', '.join(Options.model_fields)})"))
                what = ""
        except _Bad:
            what = ""
        problems += found
        if not found:
            start = str(ch.get("from", ch.get("from_year", "")))
            changes.append(Change(ch["name"], what, start, ch["source"], ch["cite"]))
    if problems:
        raise ClaimError(problems, where)
    return ParameterSet(name, str(doc.get("description", "")), credit, tuple(munis), mt, tuple(options), tuple(changes))


class _Bad(Exception):
    """A change whose problems are recorded."""


def _get(ch: dict, key: str, at: str, found: list[Problem], parse, hint: str):
    if key not in ch:
        found.append(Problem(f"{at}.{key}", f"missing: give {hint}"))
        raise _Bad
    try:
        return parse(ch[key])
    except (ValueError, TypeError, InvalidOperation):
        found.append(Problem(f"{at}.{key}", f"{ch[key]!r} is not {hint}"))
        raise _Bad from None


def _decimal(v) -> Decimal:
    if not isinstance(v, str):
        raise TypeError("amounts are decimal text")
    d = Decimal(v)
    if not d.is_finite() or d < 0:
        raise ValueError(v)
    return d


def _day(v) -> date:
    return v if isinstance(v, date) else date.fromisoformat(v)


def _year(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(v)
    return v


def _label(ch: dict) -> str:
    return f"{ch['name']}: {ch['source']} ({ch['cite']})"


def _dated(ch: dict, at: str, par: Parameter, found: list[Problem]) -> Parameter:
    """A credit.toml parameter with the change's value from its date on (values the baseline
    records from that date on are replaced)."""
    start = _get(ch, "from", at, found, _day, "a date, YYYY-MM-DD")
    value = _get(ch, "value", at, found, _decimal, 'a decimal number as text, e.g. "5000.00"')
    if found:
        raise _Bad
    kept = tuple(v for v in par.values if v.start < start)
    return replace(par, values=(*kept, DatedValue(start, value, _label(ch))))


def _option(ch: dict, at: str, found: list[Problem]) -> OptionChange:
    name = ch["option"]
    if name not in Options.model_fields:
        found.append(Problem(f"{at}.option", f"unknown option {name!r}; options: {', '.join(Options.model_fields)}"))
        raise _Bad
    start = _get(ch, "from", at, found, _day, "a date, YYYY-MM-DD (claims whose credit year one starts on or after it)")
    if "value" not in ch:
        found.append(Problem(f"{at}.value", "missing: give the option's value"))
        raise _Bad
    try:
        Options.model_validate({name: ch["value"]})
    except ValidationError as e:
        found.append(Problem(f"{at}.value", f"{ch['value']!r} is not a value of option {name}: {e.errors()[0]['msg']}"))
        raise _Bad from None
    if found:
        raise _Bad
    return OptionChange(name, ch["value"], start)


def _municipalities(ch: dict, at: str, munis: list[Qualified], found: list[Problem]) -> list[Qualified]:
    """Municipalities added (qualified from ``from``) or removed (no longer qualified from it)."""
    start = _get(ch, "from", at, found, _day, "a date, YYYY-MM-DD (claims whose credit year one starts on or after it)")
    out = list(munis)
    for name in ch.get("remove", []):
        hits = [k for k, q in enumerate(out) if isinstance(name, str) and q.municipality.matches(name)]
        if not hits:
            found.append(Problem(f"{at}.remove", f"{name!r} is not a qualified municipality to remove"))
        for k in hits:
            q = out[k]
            out[k] = replace(q, until=start if q.until is None or start < q.until else q.until)
    for k, m in enumerate(ch.get("add", [])):
        if not isinstance(m, dict) or not isinstance(m.get("name"), str) or not m["name"].strip():
            found.append(Problem(f"{at}.add[{k}]", 'give each municipality as { name = "...", aliases = ["..."] }'))
            continue
        out.append(Qualified(Municipality(m["name"].strip(), tuple(m.get("aliases", ())), start, ch["cite"], _label(ch)), since=start))
    unknown = sorted(set(ch) - {*_COMMON, "parameter", "from", "add", "remove"})
    if unknown:
        found.append(Problem(at, f"unknown key(s) {', '.join(unknown)}; a municipalities change has from, add, remove"))
    if found:
        raise _Bad
    return out


def _schedule(ch: dict, at: str, mt: MinimumTaxParameters, found: list[Problem]) -> MinimumTaxParameters:
    """A minimum-tax schedule for privilege periods beginning in ``from_year`` and after (the
    baseline's from that year on are replaced)."""
    year = _get(ch, "from_year", at, found, _year, "a year (privilege periods beginning in it and after)")
    rows = ch.get("brackets")
    if not isinstance(rows, list) or not rows:
        found.append(Problem(f"{at}.brackets", 'give the brackets: [{ bracket_from = "0", minimum = "500.00" }, ...]'))
        raise _Bad
    brackets = []
    for k, b in enumerate(rows):
        brackets.append((_get(b, "bracket_from", f"{at}.brackets[{k}]", found, _decimal, "decimal text"),
                         _get(b, "minimum", f"{at}.brackets[{k}]", found, _decimal, "decimal text")))
    if min(lo for lo, _ in brackets) != 0:
        found.append(Problem(f"{at}.brackets", 'the first bracket must start at "0" (every receipt falls in one)'))
    last = mt.schedule_for(year) or mt.schedules[0]
    threshold = _get(ch, "group_payroll_threshold", at, found, _decimal, "decimal text") if "group_payroll_threshold" in ch else last.group_payroll_threshold
    group = _get(ch, "group_minimum", at, found, _decimal, "decimal text") if "group_minimum" in ch else last.group_minimum
    if found:
        raise _Bad
    new = MinimumTaxSchedule(year, _label(ch), tuple(sorted(brackets)), threshold, group)
    return replace(mt, schedules=(*(s for s in mt.schedules if s.from_year < year), new))


def _s_corporation(ch: dict, at: str, mt: MinimumTaxParameters, found: list[Problem]) -> MinimumTaxParameters:
    year = _get(ch, "from_year", at, found, _year, "a year (privilege periods beginning in it and after)")
    share = _get(ch, "share", at, found, _decimal, 'a share as decimal text, e.g. "0.75"')
    if found:
        raise _Bad
    return replace(mt, s_corp_from_year=year, s_corp_share=share, s_corp_source=_label(ch), s_corp_cite=ch["cite"])
