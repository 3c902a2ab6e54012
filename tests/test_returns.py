"""L6, R1a, E4 across locations: hand-built returns of two and three locations, through the JSON
text a user files and through `qmcredit compute` (the CLI, as a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import qmcredit
from qmcredit import ClaimError

from .conftest import base_claim, employee, months
from .returns import period, return_claim, site

EXE = Path(sys.executable).with_name("qmcredit")
BEGAN = "2004-03-15"  # credit year one 2004-04..2005-03 (allowed in 2005), year two ..2006-03 (allowed in 2006)


def decide_text(doc: dict) -> dict:
    return qmcredit.decide(qmcredit.claim_from_json(json.dumps(doc))).to_dict()


def compute(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), "compute", *args, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "160"})


def column(d: dict, key: str) -> list[str]:
    return [p[key] for p in d["periods"]]


TWO = return_claim(
    [site("a", BEGAN, base=2, new_one=4, new_two=4), site("b", BEGAN, base=1, new_one=3, new_two=1)],
    [period(2004, "10000.00"), period(2005, "14000.00"), period(2006, "6000.00"), period(2007, "40000.00")])


def test_L6_two_locations_share_a_binding_room_in_proportion_R1a_each_refund_at_its_own_ratio():
    d = decide_text(TWO)
    a, b = d["locations"]
    assert (a["credit"], b["credit"]) == ({"year_one": "10000.00", "year_two": "5000.00"}, {"year_one": "7500.00", "year_two": "1250.00"})
    assert (a["sustained_effort_ratio"], b["sustained_effort_ratio"]) == ("1.000000", "0.333333")
    assert column(d, "room") == ["5000.00", "7000.00", "3000.00", "20000.00"]  # one room per period, the return's
    # 2005: 7,000 shared 10,000 : 7,500; 2006: 3,000 shared 6,000 : 4,500 (1714.2857 / 1285.7143, the odd cent to a)
    assert column(a, "applied") == ["0.00", "4000.00", "1714.29", "5000.00"]
    assert column(b, "applied") == ["0.00", "3000.00", "1285.71", "3392.86"]
    assert column(d, "applied") == ["0.00", "7000.00", "3000.00", "8392.86"]
    # R1a: a 4,285.71 x 1; b 3,214.29 x 1/3 = 1,071.43
    assert (a["refund"], b["refund"], d["refund"]) == ("4285.71", "1071.43", "5357.14")
    assert column(b, "carried_forward") == ["0.00", "4500.00", "3392.86", "0.00"]
    assert d["credit"] == {"year_one": "17500.00", "year_two": "6250.00"}
    assert d["average_positions"] is None and d["sustained_effort_ratio"] is None
    assert all("room" not in p for p in a["periods"])


def test_L6_slack_room_applies_every_location_in_full():
    doc = return_claim(TWO["locations"], [period(2004, "10000.00"), period(2005, "100000.00"), period(2006, "100000.00")])
    a, b = decide_text(doc)["locations"]
    assert column(a, "applied") == ["0.00", "10000.00", "5000.00"]
    assert column(b, "applied") == ["0.00", "7500.00", "1250.00"]
    assert a["refund"] == b["refund"] == "0.00"


def test_L6_three_locations_cents_by_largest_remainder_ties_to_the_first_L5_forfeit_each():
    sites = [site(s, BEGAN, base=1, new_one=1, new_two=0) for s in ("x", "y", "z")]
    doc = return_claim(sites, [period(2005, "2000.00", "0.00"), period(2006, "1000.00", "0.00")], carryforward_periods=1)
    d = qmcredit.decide(qmcredit.claim_from_dict(doc)).to_dict()  # the JSON integer option is i11's (issue 11)
    x, y, z = d["locations"]
    assert [loc["periods"][0]["applied"] for loc in (x, y, z)] == ["333.34", "333.33", "333.33"]  # the tie goes to x
    assert [loc["periods"][1]["applied"] for loc in (x, y, z)] == ["166.66", "166.67", "166.67"]
    assert [loc["periods"][1]["forfeited"] for loc in (x, y, z)] == ["2000.00", "2000.00", "2000.00"]
    assert d["periods"][1]["forfeited"] == "6000.00" and d["carried_forward"] == "0.00"


def test_L6_option_as_listed_applies_each_location_in_full_before_the_next():
    doc = {**TWO, "options": {"location_order": "as_listed"}}
    d = decide_text(doc)
    a, b = d["locations"]
    assert column(a, "applied")[:3] == ["0.00", "7000.00", "3000.00"]
    assert column(b, "applied")[:3] == ["0.00", "0.00", "0.00"]
    explained = next(e for e in d["explanation"] if e["figure"] == "periods[1].applied")
    assert "as_listed" in explained["reading"] and set(explained["inputs"]["locations"]) == {"a", "b"}


def test_E4_a_location_on_another_month_fails_alone():
    doc = return_claim(TWO["locations"] + [site("late", "2004-04-15", base=1, new_one=2, new_two=2)],
                       [period(2005, "100000.00"), period(2006, "100000.00")])
    d = decide_text(doc)
    late = d["locations"][2]
    assert late["eligible"] is False and [e["rule"] for e in late["ineligible_because"]] == ["E4"]
    assert "first listed location 'a'" in late["ineligible_because"][0]["message"]
    assert late["credit"] == {"year_one": "0.00", "year_two": "0.00"}
    assert d["eligible"] is True and d["ineligible_because"] == []
    assert d["credit"] == {"year_one": "17500.00", "year_two": "6250.00"}


def test_E4_the_taxpayers_earlier_window_fails_every_location_on_another_month():
    d = decide_text({**TWO, "taxpayer": {**TWO["taxpayer"], "earlier_credit_period_start": "2001-01"}})
    assert d["eligible"] is False
    assert [e["rule"] for e in d["ineligible_because"]] == ["E4", "E4"]
    assert d["windows"]["year_one"]["start"] == "2001-01-01"
    assert d["refund"] == "0.00" and d["credit"] == {"year_one": "0.00", "year_two": "0.00"}


def test_one_location_given_as_locations_decides_as_the_location_form():
    one = base_claim([employee("E1", {m: 160 for m in months("2004-04", 24)})])
    as_list = return_claim([{**one["location"], "id": "only", "employees": one["employees"]}], one["periods"])
    old, new = decide_text(one), decide_text(as_list)
    for k in ("credit", "refund", "carried_forward", "windows", "eligible"):
        assert new[k] == old[k], k
    for g, e in zip(new["periods"], old["periods"]):
        assert {k: g[k] for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")} == \
               {k: e[k] for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")}
    assert new["locations"][0]["average_positions"] == old["average_positions"]


def test_locations_form_is_checked_with_the_field_named():
    dup = return_claim([site("a", BEGAN, 1, 1, 1), site("a", BEGAN, 1, 1, 1)], [period(2005, "1000.00")])
    try:
        qmcredit.claim_from_json(json.dumps(dup))
        raise AssertionError("a duplicate location id must be refused")
    except ClaimError as e:
        assert any("locations[1].id 'a' is also locations[0].id" in p.message for p in e.problems)
    both = {**dup, "location": {"municipality": "Camden", "operations_began": BEGAN}, "locations": dup["locations"][:1]}
    try:
        qmcredit.claim_from_json(json.dumps(both))
        raise AssertionError("location and locations together must be refused")
    except ClaimError as e:
        assert any("not both" in p.message for p in e.problems)
    bad_row = return_claim([site("a", BEGAN, 1, 1, 1), {**site("b", BEGAN, 1, 1, 1), "employees": [{"id": "X", "hours": {"2004-13": 1}}]}],
                           [period(2005, "1000.00")])
    try:
        qmcredit.claim_from_json(json.dumps(bad_row))
        raise AssertionError("a bad month must be refused")
    except ClaimError as e:
        assert all(p.location.startswith("locations[1].employees[0]") for p in e.problems), e.problems


def test_compute_cli_decides_a_return_json_and_worksheet(tmp_path):
    path = tmp_path / "return.json"
    path.write_text(json.dumps(TWO))
    r = compute(path, "--json", "--no-explain")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = decide_text(TWO)
    assert [loc["refund"] for loc in got["locations"]] == ["4285.71", "1071.43"]
    assert got["periods"] == want["periods"] and got["refund"] == want["refund"]
    r = compute(path)
    assert r.returncode == 0, r.stderr
    assert "One room per period, shared among the locations" in r.stdout and "1714.29" in r.stdout and "1285.71" in r.stdout
    assert "the taxpayer's other locations" in r.stdout  # line 16 lists this credit of the other locations


def test_validate_and_explain_cli_on_a_return(tmp_path):
    path = tmp_path / "return.json"
    path.write_text(json.dumps(TWO))
    env = {**os.environ, "COLUMNS": "200"}
    r = subprocess.run([str(EXE), "validate", str(path)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and "valid" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(EXE), "explain", str(path), "--figure", "periods[2].applied"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "L6" in r.stdout and "'a': {'applied': '1714.29'" in r.stdout and "'b': {'applied': '1285.71'" in r.stdout
    r = subprocess.run([str(EXE), "explain", str(path), "--figure", "periods[2].refund"], capture_output=True, text=True, timeout=120, env=env)
    assert "R1a" in r.stdout and "'a': '4285.71'" in r.stdout and "'b': '1071.43'" in r.stdout


def test_B1_every_figure_of_a_return_walks_back_to_its_inputs():
    from qmcredit.explain import walk

    det = qmcredit.decide(qmcredit.claim_from_json(json.dumps(TWO)))
    for e in det.explanation:
        assert walk(det, e["figure"]), e["figure"]  # every figure it depends on is in the trace


def test_form313_pdf_of_a_return_gives_each_locations_form(tmp_path):
    """Issue 12 item 5 (brief h12f): the command once refused a return; it now writes each
    location's Form 313 under the shared room (tests/web/test_form313_locations.py checks the lines)."""
    path = tmp_path / "return.json"
    path.write_text(json.dumps(TWO))
    r = subprocess.run([str(EXE), "form313", str(path), "--period", "2005", "--out", str(tmp_path / "f.pdf")],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0 and "internal error" not in r.stderr, r.stderr
    text = subprocess.run(["pdftotext", str(tmp_path / "f.pdf"), "-"], capture_output=True, text=True, timeout=60).stdout
    assert "location a - tax period 2005" in text and "location b - tax period 2005" in text
