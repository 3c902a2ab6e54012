"""Issue 12 item 5, rule L6: Form 313 of a several-location return. Each location's form under the
return's one room: line 16 lists what the taxpayer's other locations take of this credit, so that
line 17 is what the room leaves the location and line 18 its share (L2a, L6); the sum of line 18
over the locations is the return's applied credit; the worksheet shows how the room was shared.
Through the command (``qmcredit form313``, PDF, CSV and JSON) and ``pdftotext`` of the PDF."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import qmcredit

from ..conftest import EXAMPLES, example_file
from ..returns import period, return_claim, site
from ..strategies import json_text, returns
from .conftest import pdf_text

EXE = Path(sys.executable).parent / "qmcredit"
EXAMPLE_07 = example_file("next/07-two-locations-shared-room")
FOOTER = re.compile(r"Form 313 \(\S+ layout\) - .* - location (\S+) - tax period (\S+) to (\S+)\s+Page \d+")


def run(*args):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=300)


def expected_lines(det: dict) -> dict[tuple[str, str], dict[str, str]]:
    """An independent reading of each location's Part IV from the determination (RULES.md L2, L6,
    Form 313 lines 11-18): line 16 = the credits before this one + the other locations' applied
    credit; line 17 = the return's room less the other locations' applied credit; line 18 = the
    location's own applied credit."""
    out = {}
    for k, p in enumerate(det["periods"]):
        for loc in det["locations"]:
            lp = loc["periods"][k]
            if lp["applied"] is None:
                continue
            others = sum(Decimal(o["periods"][k]["applied"]) for o in det["locations"] if o["id"] != loc["id"])
            d = p["detail"]
            lines = {"11": d["liability"], "16": str(Decimal(d["other_credits_before"]) + others),
                     "17": str(max(Decimal(p["room"]) - others, Decimal("0.00"))), "18": lp["applied"]}
            if d.get("cap_50_percent") is not None:
                lines |= {"12": d["cap_50_percent"], "13": d["floor"], "14": d["liability_above_floor"]}
            out[(loc["id"], p["start"])] = lines
    return out


def printed_lines(text: str) -> dict[tuple[str, str], dict[str, str]]:
    """Each location's and period's numbered Part IV lines as ``pdftotext -layout`` reads them:
    ``NN.  text ...  NN  value`` (the number printed before the text and beside the box)."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for page in text.split("\f"):
        m = FOOTER.search(page)
        if not m:
            continue
        got = out.setdefault((m.group(1), m.group(2)), {})
        for no in ("11", "12", "13", "14", "15", "16", "17", "18"):
            for row in re.finditer(rf"^\s*{no}\.\s.*\s{no}\s+(-?\d+\.\d\d|pending|n/a)\s*$", page, re.M):
                got[no] = row.group(1)
    return out


def assert_form_matches(det: dict, text: str) -> None:
    expected, printed = expected_lines(det), printed_lines(text)
    assert set(printed) >= set(expected), "every location's form for every period"
    for key, lines in expected.items():
        for no, value in lines.items():
            assert printed[key].get(no) == value, (key, no, printed[key].get(no), value)
    for k, p in enumerate(det["periods"]):
        if p["applied"] is not None:
            share = sum(Decimal(printed[(loc["id"], p["start"])]["18"]) for loc in det["locations"])
            assert share == Decimal(p["applied"]), ("L6: line 18 over the locations is the return's applied credit", p["start"])


def test_example_07_every_locations_form_under_the_shared_room(tmp_path):
    """Example 07 (L6: the 2011 room 6,000.00 shared 3,428.57 / 2,571.43): one PDF with both
    locations' forms for every period; line 16 names the other location's credit."""
    out = tmp_path / "07.pdf"
    r = run("form313", EXAMPLE_07, "--all", "--out", out, "--worksheet")
    assert r.returncode == 0, r.stderr
    text = pdf_text(out.read_bytes(), tmp_path)
    det = qmcredit.decide(qmcredit.load_claim(EXAMPLE_07)).to_dict(explain=False)
    assert_form_matches(det, text)
    p2011 = printed_lines(text)
    assert p2011[("federal", "2011-01-01")]["18"] == "3428.57" and p2011[("admiral", "2011-01-01")]["18"] == "2571.43"
    flat = " ".join(text.split())
    assert "Economic Recovery Tax Credit taken on this return for the taxpayer's location admiral" in flat
    worksheet = " ".join(pdf_text((tmp_path / "07.worksheet.pdf").read_bytes(), tmp_path).split())
    assert "How the room of each period was shared (rule L6)" in worksheet
    assert 'location_order = "proportional"' in worksheet
    for figure in ("10000.00 57.14% 3428.57", "7500.00 42.86% 2571.43"):  # 2011: balances, shares, applied
        assert figure in worksheet, figure


def test_one_location_of_the_return(tmp_path):
    out = tmp_path / "admiral.pdf"
    r = run("form313", EXAMPLE_07, "--period", "2011", "--location", "admiral", "--out", out)
    assert r.returncode == 0, r.stderr
    printed = printed_lines(pdf_text(out.read_bytes(), tmp_path))
    assert list(printed) == [("admiral", "2011-01-01")]
    lines = printed[("admiral", "2011-01-01")]
    assert (lines["16"], lines["17"], lines["18"]) == ("3428.57", "2571.43", "2571.43")


def test_unknown_location_names_the_locations(tmp_path):
    r = run("form313", EXAMPLE_07, "--all", "--location", "harbour", "--out", tmp_path / "x.pdf")
    assert r.returncode == 2 and "federal, admiral" in r.stderr and "Traceback" not in r.stderr
    r = run("form313", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--all", "--location", "federal", "--out", tmp_path / "x.pdf")
    assert r.returncode == 2 and "one location" in r.stderr


RETURNS = {
    "binding, three locations": return_claim(
        [site("north", "2010-05-10", 4, 4, 4), site("south", "2010-05-10", 2, 3, 1), site("east", "2010-05-10", 1, 2, 2)],
        [period(2010, "10000.00"), period(2011, "9000.00"), period(2012, "6000.00"), period(2013, "40000.00")]),
    "slack, two locations": return_claim(
        [site("north", "2010-05-10", 4, 2, 2), site("south", "2010-05-10", 2, 1, 0)],
        [period(2010, "90000.00"), period(2011, "90000.00"), period(2012, "90000.00")]),
    "as listed, other credits": return_claim(
        [site("north", "2010-05-10", 4, 4, 2), site("south", "2010-05-10", 2, 3, 3)],
        [period(2010, "10000.00"), period(2011, "12000.00", other_credits=[{"name": "Angel Investor Credit", "amount": "1500.00"}]),
         period(2012, "8000.00"), period(2013, "8000.00")], location_order="as_listed"),
}


@pytest.mark.parametrize("name", list(RETURNS))
def test_generated_returns_print_the_determinations_lines(name, tmp_path):
    """Two and three locations, binding and slack rooms, the as-listed order and a line 16 credit:
    through the command, each line's figure under its number; the e-file rows agree."""
    src = tmp_path / "claim.json"
    src.write_text(json.dumps(RETURNS[name]))
    out = tmp_path / "f.pdf"
    r = run("form313", src, "--all", "--out", out)
    assert r.returncode == 0, r.stderr
    det = qmcredit.decide(qmcredit.load_claim(src)).to_dict(explain=False)
    assert_form_matches(det, pdf_text(out.read_bytes(), tmp_path))
    r = run("form313", src, "--all", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(rows[0])[:2] == ["location", "period_start"]
    keys = [(x["location"], x["period_start"], x["part"], x["line"]) for x in rows]
    assert len(keys) == len(set(keys)), "one row per location, line and period"
    for (loc, start), lines in expected_lines(det).items():
        got = {x["line"]: x["value"] for x in rows if x["location"] == loc and x["period_start"] == start and x["part"] == "IV"}
        assert {no: got[no] for no in lines} == lines, (loc, start)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(returns())
def test_generated_returns_line_18_sums_to_the_returns_applied(doc):
    """Property (L6): for generated returns of two or three locations (one may fail E4 alone), the
    JSON export's line 18 summed over the locations is the return's applied credit in every period,
    and line 17 is the room less the other locations' credit."""
    claim = qmcredit.claim_from_dict(json.loads(json_text(doc), parse_float=Decimal))
    det = qmcredit.decide(claim)
    from qmcredit.web import efile
    from qmcredit.web.form import return_forms

    rows = json.loads(efile.to_json(return_forms(claim, det)))
    d = det.to_dict(explain=False)
    for (loc, start), lines in expected_lines(d).items():
        got = {x["line"]: x["value"] for x in rows if x["location"] == loc and x["period_start"] == start and x["part"] == "IV"}
        assert {no: got[no] for no in lines} == lines, (loc, start)
    for p in d["periods"]:
        if p["applied"] is not None:
            total = sum(Decimal(x["value"]) for x in rows if x["period_start"] == p["start"] and x["part"] == "IV" and x["line"] == "18")
            assert total == Decimal(p["applied"])


def test_a_pending_period_leaves_lines_16_to_18_pending(tmp_path):
    """Example 07 as of 2011-12-31: 2012's payroll is not known, so neither is what the other
    location takes of the room; lines 16-18 say pending, the decided periods print as before."""
    doc = json.loads(EXAMPLE_07.read_text())
    doc["as_of"] = "2011-12-31"
    for loc in doc["locations"]:
        for e in loc["employees"]:
            e["hours"] = {m: h for m, h in e["hours"].items() if m <= "2011-12"}
    src = tmp_path / "pending.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "p.pdf"
    r = run("form313", src, "--all", "--out", out)
    assert r.returncode == 0, r.stderr
    printed = printed_lines(pdf_text(out.read_bytes(), tmp_path))
    det = qmcredit.decide(qmcredit.load_claim(src)).to_dict(explain=False)
    assert_form_matches(det, pdf_text(out.read_bytes(), tmp_path))
    for loc in ("federal", "admiral"):
        assert [printed[(loc, "2012-01-01")][no] for no in ("16", "17", "18")] == ["pending"] * 3
