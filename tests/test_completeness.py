"""as_of: a return prepared before credit year two is over. Months after it are unknown, not zero;
figures that depend on them are pending, while what is decided is given."""

from __future__ import annotations

import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import load_doc, EXAMPLES


def example_cut(as_of: str, end_month: str) -> dict:
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    for e in doc["employees"]:
        e["hours"] = {m: h for m, h in e["hours"].items() if m <= end_month}
    doc["as_of"] = as_of
    return doc


def test_year_two_pending_year_one_decided_and_applied():
    d = qmcredit.decide(qmcredit.claim_from_dict(example_cut("2005-12-31", "2005-12"))).to_dict(explain=False)
    assert d["credit"] == {"year_one": "16964.29", "year_two": None}
    assert d["average_positions"]["year_two"] is None and d["sustained_effort_ratio"] is None
    assert [p["applied"] for p in d["periods"]] == ["0.00", "10000.00", None, None]
    assert d["periods"][1]["carried_forward"] == "6964.29"
    assert d["refund"] is None and d["carried_forward"] is None
    assert d["pending"]["missing_months"] == ["2006-01", "2006-02", "2006-03"]
    assert "credit.year_two" in d["pending"]["figures"] and "credit.year_one" not in d["pending"]["figures"]


def test_as_of_mid_month_leaves_that_month_unknown():
    d = qmcredit.decide(qmcredit.claim_from_dict(example_cut("2006-03-30", "2006-02"))).to_dict(explain=False)
    assert d["pending"]["missing_months"] == ["2006-03"]
    d = qmcredit.decide(qmcredit.claim_from_dict(example_cut("2006-03-31", "2006-03"))).to_dict(explain=False)
    assert d["pending"] is None and d["credit"]["year_two"] == "8750.00"


def test_hours_after_as_of_are_refused():
    doc = example_cut("2005-12-31", "2006-03")
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_dict(doc)
    assert "after as_of" in e.value.problems[0].message or "not over by as_of" in e.value.problems[0].message


def test_form_313_line_9_carries_what_is_decided_into_a_pending_period(tmp_path):
    """L4 and Form 313 line 9, through ``qmcredit form313 --format csv``: prepared as of 2005-06-30,
    the 2006 return's figures are pending, but the credit carried into it (2005's closing balance,
    decided) is 6964.29; it was printed 0.00. The 2007 return's carryover depends on 2006's, pending."""
    import csv
    import io
    import json
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "claim.json"
    path.write_text(json.dumps(example_cut("2005-06-30", "2005-06")))
    lines = {}
    for year in ("2005", "2006", "2007"):
        r = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "form313", str(path), "--period", year, "--format", "csv"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        lines[year] = {(row["part"], row["line"]): row["value"] for row in csv.DictReader(io.StringIO(r.stdout))}
    assert [lines[y][("III", "9")] for y in lines] == ["0.00", "6964.29", "pending"]
    assert [lines[y][("III", "10")] for y in lines] == ["16964.29", "pending", "pending"]
