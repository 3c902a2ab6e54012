"""Issue 18: embedded employees of plain fields are read without a pydantic model each, and
all claims' rows make one table; any other employee is validated by ``Employee`` as before. The
problems (FORMAT.md: every distinct problem, each naming its field or row) and the
determinations must not depend on which way an employee was read. Through JSON text
(``claim_from_json``) and ``qmcredit compute --json`` as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


_words = st.sampled_from([None, "permanent", " Seasonal ", "TEMPORARY", "weekly", "spouse", " Dependant", "cousin", "", 5, True])
_employee = st.fixed_dictionaries(
    {"id": st.sampled_from(["A", " A ", "B", "C", "", " ", 7])},
    optional={"ownership_interest": st.sampled_from([None, True, False, "yes", 0]), "owner_relation": _words, "basis": _words,
              "name": st.sampled_from([None, "Ann"]), "colour": st.just("red"),
              "hours": st.one_of(st.none(), st.just([160]), st.dictionaries(
                  st.sampled_from(["2004-01", "2004-02", " 2004-03", "2004-04 "]),
                  st.sampled_from(["160", "87.5", "lots", None, Decimal("40"), Decimal("1E+2"), 12, True, 160.5]), max_size=4))})


@settings(max_examples=300, deadline=None)
@given(st.lists(_employee, max_size=5), st.sampled_from(["", "locations[1]."]))
def test_employees_read_at_once_read_as_one_by_one(employees, at):
    """Issue 18: when every employee is plain, ``_employees_table`` reads them all at once (a test
    over all of them per field); its rows, problems and people are those of reading each
    employee alone (``_each_employee``), and through the JSON door the claim is the same."""
    from qmcredit.loaders import _all_plain, _each_employee, _employees_table

    rows, problems, people = _employees_table(employees, at)
    one, one_problems, one_people = _each_employee(employees, at)
    assert rows == one and [(p.location, p.message) for p in problems] == [(p.location, p.message) for p in one_problems]
    assert (people is None) == (one_people is None) and (people is None or people.equals(one_people))
    if _all_plain(employees, at) is not None and employees:
        doc = json.loads(_claim([]))
        doc["employees"] = employees
        try:
            claim = qmcredit.claim_from_json(json.dumps(doc, default=str))
        except ClaimError as e:  # an hour that is not a number of hours ('lots'): refused at its month
            assert e.problems and all(".hours." in p.location for p in e.problems)
        else:
            assert claim.payroll.height == sum(len(e.get("hours") or {}) for e in employees)


def test_each_claims_rows_are_the_slices_or_the_partition_of_the_table():
    """``_by_claim``: the rows of a table made claim by claim are cut into slices; a table in any
    other order is partitioned; both give each claim its rows, in order, with the ``KEEP`` columns."""
    import polars as pl

    from qmcredit.loaders import KEEP, _by_claim

    rows = pl.DataFrame({"claim_id": [0, 0, 2, 2, 2, 5], **{c: [f"{c}{i}" for i in range(6)] for c in KEEP}})
    for table in (rows, rows.reverse(), rows[[2, 0, 3, 1, 4, 5]]):
        expected = table.select("claim_id", *KEEP).partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
        got = _by_claim(table)
        assert list(got) == list(expected) and all(got[k].equals(expected[k]) for k in expected)


def test_a_month_with_a_space_is_found_as_the_pattern_finds_it():
    """``_has_space`` (ASCII text by a bytes translation) finds exactly what ``\\s`` finds, in every
    ASCII character and in text beyond ASCII (a no-break space, an em space)."""
    from qmcredit.loaders import _SPACE, _has_space

    for text in [f"2004-0{chr(c)}5" for c in range(128)] + ["2004-05\u00a0", "2004\u2003-05", "é2004-05", "2004-05", ""]:
        assert _has_space(text) == (_SPACE.search(text) is not None), repr(text)
