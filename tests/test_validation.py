"""Malformed claims, as a new user writes them: one clear problem each, at the exact location,
never a traceback and never a partial result."""

from __future__ import annotations

import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import base_claim, employee, months


def problems(doc) -> list[tuple[str, str]]:
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_dict(doc)
    return [(p.location, p.message) for p in e.value.problems]


def good():
    return base_claim([employee("A", {m: 160 for m in months("2004-04", 24)})])


def with_(path, value):
    doc = good()
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


CASES = [
    (("employees", 0, "hours", "2004-13"), 10, "employees[0].hours.2004-13", "not a calendar month"),
    (("employees", 0, "hours", "May 2004"), 10, "employees[0].hours.May 2004", "YYYY-MM"),
    (("employees", 0, "hours", "2004-04"), "-5", "employees[0].hours.2004-04", "negative"),
    (("employees", 0, "hours", "2004-02"), "697", "employees[0].hours.2004-02", "more than the 696 hours"),
    (("employees", 0, "hours", "2004-04"), "ten", "employees[0].hours.2004-04", "not a number"),
    (("employees", 0, "hours", "2004-04"), "1.1234567891", "employees[0].hours.2004-04", "more than 9 decimals"),
    (("employees", 0, "basis"), "contract", "employees[0].basis", "permanent"),
    (("employees", 0, "owner_relation"), "cousin", "employees[0].owner_relation", "spouse"),
    (("employees", 0, "ownership_interest"), "maybe", "employees[0].ownership_interest", "true or false"),
    (("periods", 0, "liability"), "12,34.5.6", "periods[0].liability", "amount"),
    (("periods", 0, "liability"), "100.005", "periods[0].liability", "fractions of a cent"),
    (("periods", 0, "liability"), "-1", "periods[0].liability", "negative"),
    (("periods", 0, "liability"), __import__("decimal").Decimal("1e300"), "periods[0].liability", "too large"),
    (("location", "operations_began"), "0001-01-01", "location.operations_began", "outside the years"),
    (("periods", 0, "start"), "2004/01/01", "periods[0].start", "YYYY-MM-DD"),
    (("periods", 0, "end"), "2004-02-30", "periods[0].end", "not a calendar date"),
    (("location", "operations_began"), "March 2004", "location.operations_began", "YYYY-MM-DD"),
    (("taxpayer", "earlier_credit_period_start"), "2003", "taxpayer.earlier_credit_period_start", "YYYY-MM"),
    (("options", "whole_position"), True, "options.whole_position", "unknown field"),
    (("options", "carryforward_periods"), -1, "options.carryforward_periods", "whole number"),
    (("options", "year_one_start"), "same_month", "options.year_one_start", "same_month_if_first_day"),
]


@pytest.mark.parametrize("path,value,location,words", CASES, ids=[c[2] + ":" + str(c[1]) for c in CASES])
def test_one_clear_problem(path, value, location, words):
    found = problems(with_(path, value))
    assert len(found) == 1, found
    assert found[0][0] == location
    assert words in found[0][1], found[0][1]


def test_period_without_liability():
    doc = good()
    del doc["periods"][1]["liability"]
    assert problems(doc) == [("periods[1].liability", "is required but missing")]


def test_overlapping_unordered_and_gapped_periods():
    doc = good()
    doc["periods"][1]["start"] = "2004-12-01"
    assert "overlaps" in problems(doc)[0][1]
    doc = good()
    doc["periods"][0], doc["periods"][1] = doc["periods"][1], doc["periods"][0]
    assert "date order" in problems(doc)[0][1]
    doc = good()
    del doc["periods"][1]
    assert "consecutive" in problems(doc)[0][1]


def test_every_problem_is_reported_at_once():
    doc = good()
    doc["employees"][0]["hours"]["2004-13"] = 1
    doc["employees"].append(employee("A", {}))
    doc["periods"][0]["liability"] = "abc"
    doc["taxpayer"]["tax"] = ""
    locs = {p[0] for p in problems(doc)}
    assert locs == {"employees[0].hours.2004-13", "employees[1].id", "periods[0].liability", "taxpayer.tax"}


def test_binary_float_money_is_refused():
    doc = with_(("periods", 0, "liability"), 100.5)
    assert "binary float" in problems(doc)[0][1]


def test_missing_employees_and_not_an_object():
    doc = good()
    del doc["employees"]
    assert problems(doc)[0][0] == "employees"
    with pytest.raises(ClaimError):
        qmcredit.claim_from_dict(["not", "a", "claim"])


def test_bad_json_names_line_and_column():
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_json('{"format": "qmcredit.claim/1",\n "taxpayer": }')
    assert e.value.problems[0].location == "line 2 column 14"


def test_enumerated_words_ignore_case_and_hours_must_be_keyed_by_month():
    doc = good()
    doc["taxpayer"]["tax"] = " CBT "
    doc["employees"][0]["basis"] = "Permanent"
    assert qmcredit.decide(qmcredit.claim_from_dict(doc)).eligible
    assert problems(with_(("employees", 0, "hours"), [160, 160])) == [
        ("employees[0].hours", "must be an object of hours keyed by calendar month, e.g. {\"2004-05\": 160}")]
