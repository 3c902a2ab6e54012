"""Issue 18: embedded employees of plain fields are read without a pydantic model each, and
all claims' rows make one table; any other employee is validated by ``Employee`` as before. The
problems (FORMAT.md: every distinct problem, each naming its field or row) and the
determinations must not depend on which way an employee was read. Through JSON text
(``claim_from_json``) and ``qmcredit compute --json`` as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import base_claim, employee, months

EXE = Path(sys.executable).parent / "qmcredit"


def _claim(extra: list[dict]) -> str:
    doc = base_claim([employee("A", {m: "160" for m in months("2003-04", 36)})])
    doc["employees"] += extra
    return json.dumps(doc)


def test_each_employee_problem_reads_as_employee_words_it():
    """Every bad employee named by its index and field, beside plain ones (FORMAT.md)."""
    text = _claim([{"id": 5, "hours": {}}, {"id": "B", "basis": "weekly"}, {"id": " A ", "hours": {"2004-05": "10"}},
                   {"id": "C", "colour": "red"}, {"id": "D", "ownership_interest": "yes"}, {"id": "E", "hours": [160]},
                   {"id": "F", "ssn": "12"}, {"id": "  "}, {"id": "G", "hours": {"2004-05": "lots"}}])
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_json(text)
    got = [(p.location, p.message) for p in e.value.problems]
    assert got[:8] == [
        ("employees[1].id", "Input should be a valid string"),
        ("employees[2].basis", "Input should be 'permanent', 'temporary' or 'seasonal'; got 'weekly'"),
        ("employees[3].id", "'A' is also employees[0]; each employee once, with all months"),
        ("employees[4].colour", "unknown field 'colour'; see docs/format.md for the fields of this object"),
        ("employees[5].ownership_interest", "expected true or false, got 'yes'"),
        ("employees[6].hours", 'must be an object of hours keyed by calendar month, e.g. {"2004-05": 160}'),
        ("employees[7].ssn", 'must be nine digits, e.g. "123-45-6789"'),
        ("employees[8].id", "String should have at least 1 character"),
    ]
    assert len(got) == 9 and got[8][0] == "employees[9].hours.2004-05" and "'lots'" in got[8][1]


def test_binary_float_hours_named_by_row():
    """A Python document's float hours: refused, each month named (B1's exactness)."""
    doc = json.loads(_claim([{"id": "B", "hours": {"2004-05": 160.5, "2004-06": "160"}}]))
    doc["employees"][1]["hours"]["2004-05"] = 160.5
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_dict(doc)
    assert [(p.location, p.message) for p in e.value.problems] == [
        ("employees[1].hours.2004-05", "the binary float 160.5; give hours as a decimal")]


def test_plain_and_converted_employees_decide_alike(tmp_path):
    """The same employees written plainly and in forms ``Employee`` converts (spaces, case,
    nulls, a name) give the same determination from ``qmcredit compute --json``."""
    hours = {m: ("160" if k % 3 else "87.5") for k, m in enumerate(months("2003-04", 36))}
    plain = [{"id": "A", "hours": hours}, {"id": "B", "basis": "seasonal", "owner_relation": "spouse", "ownership_interest": False,
                                            "hours": {m: "40" for m in months("2004-01", 20)}}]
    other = [{"id": " A ", "hours": {f" {m}": h for m, h in hours.items()}, "name": "Ann", "ssn": None},
             {"id": "B", "basis": " Seasonal ", "owner_relation": "SPOUSE", "ownership_interest": None, "hired": None,
              "hours": {m: "40" for m in months("2004-01", 20)}}]
    out = []
    for name, emps in (("plain", plain), ("other", other)):
        doc = json.loads(_claim([]))
        doc["employees"] = emps
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        run = subprocess.run([str(EXE), "compute", "--json", str(path)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        out.append(json.loads(run.stdout))
    a, b = out
    for d in (a, b):
        d.pop("source", None)
    assert json.dumps(a, sort_keys=True).replace("plain.json", "X") == json.dumps(b, sort_keys=True).replace("other.json", "X")
