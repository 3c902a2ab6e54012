"""Dated, cited parameter values, read from the TOML files beside this module.

Values are exact (``Decimal``); each carries the date it applies from, its source and citation,
so that a determination can say which value it used (rule B1).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class DatedValue:
    start: date
    value: Decimal
    source: str


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    description: str
    unit: str
    rule: str
    cite: str
    values: tuple[DatedValue, ...]

    def at(self, when: date) -> DatedValue:
        """The value in force on ``when``; before the first recorded date, the first value."""
        chosen = self.values[0]
        for v in self.values:
            if v.start <= when:
                chosen = v
        return chosen

    def trace(self, when: date) -> dict:
        return self.trace_value(self.at(when))

    def trace_value(self, v: DatedValue) -> dict:
        """The trace of one of its values (the value in force names its own date)."""
        return {"value": str(v.value), "unit": self.unit, "cite": self.cite, "in_force_from": v.start.isoformat(), "source": v.source}


#: The parameter files, installed beside this module (package data; read by path: importing
#: ``importlib.resources`` and the ``tempfile`` it brings was 2-3 ms of every command's start).
_FOLDER = Path(__file__).with_name("parameters")


def _read(name: str) -> dict:
    return tomllib.loads((_FOLDER / name).read_text("utf-8"))


@cache
def credit_parameters() -> dict[str, Parameter]:
    """The parameters of the credit itself (credit.toml)."""
    out = {}
    for key, body in _read("credit.toml").items():
        values = tuple(
            DatedValue(date.fromisoformat(v["from"]), Decimal(v["value"]), v["source"])
            for v in sorted(body["values"], key=lambda v: v["from"])
        )
        out[key] = Parameter(key, body["description"], body["unit"], body["rule"], body["cite"], values)
    return out


def parameter(name: str) -> Parameter:
    return credit_parameters()[name]


@dataclass(frozen=True, slots=True)
class Municipality:
    name: str
    aliases: tuple[str, ...]
    start: date
    cite: str
    source: str

    def matches(self, given: str) -> bool:
        g = " ".join(given.split()).casefold()
        return g in {n.casefold() for n in (self.name, *self.aliases)}


@cache
def qualified_municipalities() -> tuple[Municipality, ...]:
    return tuple(
        Municipality(m["name"], tuple(m.get("aliases", ())), date.fromisoformat(m["from"]), m["cite"], m["source"])
        for m in _read("municipalities.toml")["municipality"]
    )


@dataclass(frozen=True, slots=True)
class MinimumTaxSchedule:
    from_year: int
    source: str
    brackets: tuple[tuple[Decimal, Decimal], ...]  # (gross receipts from, minimum), ascending
    group_payroll_threshold: Decimal
    group_minimum: Decimal


@dataclass(frozen=True, slots=True)
class MinimumTaxParameters:
    rule: str
    cite: str
    schedules: tuple[MinimumTaxSchedule, ...]
    s_corp_from_year: int
    s_corp_share: Decimal
    s_corp_source: str
    s_corp_cite: str
    short_period: dict       # L2c: monthly_payroll_threshold (Decimal), source, cite
    combined_group: dict     # L2c: periods_ending_from (date), minimum (Decimal), source, cite
    ama: dict                # L2b: from_year, to_year, source, cite

    def schedule_for(self, year: int) -> MinimumTaxSchedule | None:
        chosen = None
        for s in self.schedules:
            if s.from_year <= year:
                chosen = s
        return chosen


@cache
def minimum_tax_parameters() -> MinimumTaxParameters:
    raw = _read("minimum_tax.toml")
    schedules = tuple(
        MinimumTaxSchedule(
            s["from_year"],
            s["source"],
            tuple(sorted((Decimal(b["bracket_from"]), Decimal(b["minimum"])) for b in s["brackets"])),
            Decimal(s["group_payroll_threshold"]),
            Decimal(s["group_minimum"]),
        )
        for s in sorted(raw["schedule"], key=lambda s: s["from_year"])
    )
    s = raw["s_corporation"]
    short = {**raw["short_period"], "monthly_payroll_threshold": Decimal(raw["short_period"]["monthly_payroll_threshold"])}
    combined = {**raw["combined_group"], "periods_ending_from": date.fromisoformat(raw["combined_group"]["periods_ending_from"]),
                "minimum": Decimal(raw["combined_group"]["minimum"])}
    return MinimumTaxParameters(raw["rule"], raw["cite"], schedules, s["from_year"], Decimal(s["share"]), s["source"], s["cite"],
                                short, combined, dict(raw["alternative_minimum_assessment"]))
