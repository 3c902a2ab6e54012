"""W1-W3 and P5: a location whose payroll records no hours in any month of its windows gets every
average, new position and credit zero; the determination says so in a warning (a date written
wrong, operations_began or the payroll's months, gave $0 silently), through ``compute --json``
and the worksheet. A claim with hours in its windows, or whose months are unknown (``as_of``
before them: figures pending, not zero), gets none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, example_names, load_doc

EXE = Path(sys.executable).parent / "qmcredit"
WARNING = ("no hours are recorded in any month from {} to {} (the base year and credit years one and two, W1-W3): every average, "
           "new position and credit is zero; check the payroll's months and operations_began")


def _compute(doc: dict, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(doc))
    return subprocess.run([str(EXE), "compute", *args, str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("change", ["operations began in 2099", "no employees"])
def test_no_hours_in_the_windows_is_said(tmp_path, change):
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    if change == "no employees":
        doc["employees"], start, end = [], "2003-04-01", "2006-03-31"
    else:
        doc["location"]["operations_began"], start, end = "2099-03-15", "2098-04-01", "2101-03-31"
    r = _compute(doc, tmp_path, "--json")
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["credit"] == {"year_one": "0.00", "year_two": "0.00"}
    assert d["warnings"] == [WARNING.format(start, end)]
    sheet = _compute(doc, tmp_path)
    assert "no hours are recorded in any month" in " ".join(sheet.stdout.split())


@pytest.mark.parametrize("name", example_names())
def test_a_claim_with_hours_in_its_windows_gets_no_such_warning(name):
    from .conftest import example_file

    r = subprocess.run([str(EXE), "compute", "--json", example_file(name)], capture_output=True, text=True, timeout=120)
    assert all("no hours are recorded" not in w for w in json.loads(r.stdout)["warnings"])


def test_months_unknown_are_pending_not_warned(tmp_path):
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    for e in doc["employees"]:
        e["hours"] = {}
    doc["as_of"] = "2003-01-31"  # before the base year: every month of the windows unknown
    d = json.loads(_compute(doc, tmp_path, "--json").stdout)
    assert d["pending"] is not None and d["warnings"] == []


def test_a_location_without_hours_in_its_windows_is_named(tmp_path):
    """L6: in a several-location return, the warning names the location whose payroll has no hours
    in the windows (the others' figures stand)."""
    doc = load_doc(Path(__file__).resolve().parents[1] / "examples" / "07-two-locations-shared-room.claim.json")
    second = doc["locations"][1]
    second["employees"] = []
    d = json.loads(_compute(doc, tmp_path, "--json").stdout)
    assert d["warnings"] == [f"location {second['id']}: " + WARNING.format("2009-06-01", "2012-05-31")]
    assert d["credit"]["year_one"] != "0.00"
