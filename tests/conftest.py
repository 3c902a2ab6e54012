"""Shared fixtures: the worked examples of ../shared/spec/examples (the contract), a claim builder."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests judge the code, not the machine: on CI's 2 shared cores generating an example can
# be slow, which is no failure of the property (each test still sets its own number of examples).
settings.register_profile("qmcredit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("qmcredit")

ROOT = Path(__file__).resolve().parents[1]
SHARED_EXAMPLES = ROOT.parent / "shared" / "spec" / "examples"
BUNDLED_EXAMPLES = ROOT / "examples"
EXAMPLES = SHARED_EXAMPLES if SHARED_EXAMPLES.is_dir() else BUNDLED_EXAMPLES


def example_names() -> list[str]:
    """The examples, with those of the spec's ``next/`` that the project bundles (it implements them)."""
    names = sorted(p.name.removesuffix(".claim.json") for p in EXAMPLES.glob("*.claim.json"))
    if EXAMPLES == SHARED_EXAMPLES:
        names += sorted(f"next/{p.name.removesuffix('.claim.json')}" for p in (SHARED_EXAMPLES / "next").glob("*.claim.json")
                        if (BUNDLED_EXAMPLES / p.name).is_file())
    return names


def example_file(name: str, kind: str = "claim") -> Path:
    """The example ``name``'s claim or expected file (``next/NAME`` for a landed one of the spec's
    next/, which a clone without ../shared finds among the bundled examples, beside the others)."""
    if EXAMPLES == BUNDLED_EXAMPLES:
        name = name.removeprefix("next/")
    return EXAMPLES / f"{name}.{kind}.json"


def load_doc(path: Path) -> dict:
    return json.loads(path.read_text(), parse_float=Decimal)


@pytest.fixture
def example_doc():
    def get(name: str) -> dict:
        path = example_file(name)
        doc = copy.deepcopy(load_doc(path))
        if isinstance(doc.get("payroll"), str):  # a table beside the example: named wherever the doc is read
            doc["payroll"] = str(path.parent / doc["payroll"])
        return doc
    return get


def months(start: str, n: int) -> list[str]:
    y, m = int(start[:4]), int(start[5:7])
    out = []
    for _ in range(n):
        out.append(f"{y:04d}-{m:02d}")
        m += 1
        if m > 12:
            y, m = y + 1, 1
    return out


def employee(eid: str, hours: dict, basis: str = "permanent", owner: bool = False, relation=None) -> dict:
    return {"id": eid, "ownership_interest": owner, "owner_relation": relation, "basis": basis, "hours": hours}


def base_claim(employees: list[dict], periods: list[dict] | None = None, began: str = "2004-03-15", tax: str = "cbt", **options) -> dict:
    return {
        "format": "qmcredit.claim/1",
        "taxpayer": {"id": "22-0000001", "name": "Test Co", "tax": tax, "uez_benefit": False, "earlier_credit_period_start": None},
        "location": {"municipality": "Camden", "address": "1 Test St", "operations_began": began, "operations_source": "test"},
        "employees": employees,
        "periods": periods if periods is not None else [
            {"start": f"{y}-01-01", "end": f"{y}-12-31", "liability": "100000.00", "minimum_tax": "2000.00"} for y in range(2004, 2008)
        ],
        "options": options,
    }
