"""L2a: other credits named by their place in the Director's list (N.J.A.C. 18:7-3.17(a)), the
order derived under both readings (credit_order), through JSON text and the compute CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import base_claim, employee, months

EXE = Path(sys.executable).with_name("qmcredit")


def claim(credits: list[dict], start_year: int = 2018, **options) -> dict:
    """Credit year one 2018-04..2019-03, allowed in the 2019 period (liability 10,000: room 5,000
    less the other credits before this one)."""
    doc = base_claim([employee("E1", {m: 160 for m in months("2018-04", 24)})], began="2018-03-15", **options)
    doc["periods"] = [{"start": f"{y}-01-01", "end": f"{y}-12-31", "liability": "10000.00", "minimum_tax": "500.00"}
                      for y in range(start_year, 2021)]
    doc["periods"][2019 - start_year]["other_credits"] = credits
    return doc


def room_2019(doc: dict) -> tuple[str, dict]:
    det = qmcredit.decide(qmcredit.claim_from_json(json.dumps(doc)))
    i = [start.year for start, _ in det.ledger.dates].index(2019)
    return det.to_dict()["periods"][i]["room"], det.figure(f"periods[{i}].room")


@pytest.mark.parametrize("credit, form_313, regulation", [
    ({"name": "Angel Investor Credit", "amount": "1000.00"}, "4000.00", "5000.00"),            # number 19: after it
    ({"name": "angel investor CREDIT", "amount": "1000.00"}, "4000.00", "5000.00"),            # names match without regard to case
    ({"name": "R&D", "code": 5, "amount": "1000.00"}, "4000.00", "4000.00"),                   # number 5: before it
    ({"name": "Sheltered workshop", "code": 15, "amount": "1000.00"}, "4000.00", "5000.00"),   # number 15: after it
    ({"name": "Grow NJ", "code": 18, "amount": "1000.00", "order": "before"}, "4000.00", "4000.00"),  # a given order stands
    ({"name": "Research and Development Tax Credit", "amount": "1000.00", "order": "after"}, "5000.00", "5000.00"),
])
def test_L2a_order_under_both_readings(credit, form_313, regulation):
    got, entry = room_2019(claim([credit]))
    assert got == form_313
    placed = entry["inputs"]["other_credits"][0]
    assert placed["order_from"] == ("given" if "order" in credit else "form_313")
    got, entry = room_2019(claim([credit], credit_order="regulation"))
    assert got == regulation
    placed = entry["inputs"]["other_credits"][0]
    assert placed["order_from"] == ("given" if "order" in credit else "regulation")
    if "order" in credit:
        assert "stands" in placed["reading"]


def test_L2a_an_unlisted_credit_without_order_counts_before_by_default_and_is_refused_under_regulation(tmp_path):
    unlisted = {"name": "Recycling Equipment", "amount": "1000.00"}
    assert room_2019(claim([unlisted]))[0] == "4000.00"
    with pytest.raises(ClaimError) as e:
        room_2019(claim([unlisted], credit_order="regulation"))
    (p,) = e.value.problems
    assert p.location == "periods[1].other_credits[0]" and "'Recycling Equipment' is not in the Director's list" in p.message
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(claim([unlisted], credit_order="regulation")))
    r = subprocess.run([str(EXE), "compute", str(path)], capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode != 0 and "periods[1].other_credits[0]" in r.stderr and "Traceback" not in r.stderr


def test_L2a_this_credit_is_not_another_credit():
    with pytest.raises(ClaimError) as e:
        room_2019(claim([{"name": "x", "code": 14, "amount": "1.00"}]))
    assert "locations" in e.value.problems[0].message


def test_L2a_a_code_outside_the_list_is_refused_naming_the_field():
    with pytest.raises(ClaimError) as e:
        room_2019(claim([{"name": "x", "code": 21, "amount": "1.00"}]))
    assert e.value.problems[0].location == "periods[1].other_credits[0].code"


def test_L2a_a_period_before_the_recorded_list_warns_that_an_earlier_version_was_in_force():
    doc = claim([{"name": "R&D", "code": 5, "amount": "1000.00"}], start_year=2016)
    doc["periods"][0]["other_credits"] = [{"name": "R&D", "code": 5, "amount": "10.00"}]
    det = qmcredit.decide(qmcredit.claim_from_json(json.dumps(doc)))
    assert any("2016-01-01" in w and "earlier version" in w for w in det.warnings)
    assert not any("2019-01-01" in w for w in det.warnings)
