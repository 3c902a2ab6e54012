"""Issue 16: Form 313 as the Division prints it: its parts, questions and lines and no others, the
dated layouts, line 16 by the credits' names (L2a), Part II with a rider, the people excluded on the
worksheet (P1-P4), embedded fonts, legible charts, and the command's --all and e-file exports."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

import qmcredit
from qmcredit.claim import Claim
from qmcredit.imports.people import SCHEMA as PEOPLE
from qmcredit.web.form import employee_identities, form_for_period, version_for
from qmcredit.web.layout import Group, Rect, Text, ledger_layout, monthly_layout
from qmcredit.web.pdf import FRAME_WIDTH, form313_pdf, worksheet_pdf

from ..conftest import EXAMPLES
from .conftest import binary, decided, pdf_text

EXE = Path(sys.executable).parent / "qmcredit"
ALL = ["01-expansion-cap-carryforward", "02-refund-sustained-effort", "03-part-time-equivalents", "04-insurer",
       "05-ineligible", "06-forfeiture-ama"]
DIVISION_LINES = {
    "I": ["1", "2", "3", "4", "5", "6"],
    "III": ["7", "8", "9", "10"],
    "IV": ["11", "12", "13", "14", "15", "", *(f"{k})" for k in "abcdefghijk"), "16", "17", "18"],  # "": line 16's caption
}


def run(*args):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("name", ALL)
def test_the_lines_are_the_divisions_and_no_others(name, tmp_path):
    """Parts I-V with the form's numbers only: no 6a-6c, 19, 20, no checks table, no averages; Part V's
    rows are lines 1, 2(a)-(f), 3 and line 4, each once."""
    claim, det = decided(name)
    for i in range(len(det.ledger.dates)):
        f = form_for_period(claim, det, i)
        assert [p.number for p in f.parts] == ["I", "II", "III", "IV", "V"]
        for part in f.parts:
            if part.number in DIVISION_LINES:
                assert [ln.no for ln in part.lines] == DIVISION_LINES[part.number], (name, i, part.number)
                numbered = [ln.no for ln in part.lines if ln.no]
                assert len(numbered) == len(set(numbered)), "no line number twice"
        v = f.parts[4]
        assert [ln.no for ln in v.after] == ["4"]
        labels = [row[0].split(" ")[0] for row in v.table[1:]]
        assert labels == (["1.", *(f"2({k})" for k in "abcdef"[: len(labels) - 2]), "3."] if labels else [])
    text = pdf_text(form313_pdf(claim, det, 0), tmp_path)
    for absent in ("6a", "6b", "6c", "19.", "20.", "Average full-time", "E1 ", "passed", "year of origin"):
        assert absent not in text, absent


def test_line_16_lists_the_credits_by_name():
    """L2a: Research and development is line 16 j) on the 2013 form; the total is what L2 subtracts."""
    claim, det = decided("01-expansion-cap-carryforward")
    iv = {ln.no: ln for ln in form_for_period(claim, det, 2).parts[3].lines}
    assert iv["j)"].text == "Research and Development Tax Credit" and iv["j)"].value == "4000.00"
    assert all(iv[f"{k})"].value == "" for k in "abcdefghik")
    totals = [ln for ln in form_for_period(claim, det, 2).parts[3].lines if ln.no == "16" and ln.value]
    assert [t.value for t in totals] == [det.to_dict()["periods"][2]["detail"]["other_credits_before"]]


def test_layout_versions_are_dated():
    """The version each period's form follows: the CBT form year (periods ending July 31 to June 30)."""
    assert version_for(date(2006, 12, 31))["id"] == "2013"
    assert version_for(date(2022, 12, 31))["id"] == "2022"
    assert version_for(date(2023, 6, 30))["id"] == "2022"  # form year 2022
    assert version_for(date(2024, 12, 31))["id"] == "2023"
    assert not version_for(date(2010, 12, 31))["unitary_id"] and version_for(date(2023, 12, 31))["combined_return_oval"]


def test_before_2013_the_2013_layout_with_a_warning(tmp_path):
    """Pre-2013 form years follow the 2013 print (the earliest recorded, form313_versions.toml's
    print_year); the form's note and the worksheet warn that the Division's earlier layout was not
    recorded; 2013 itself does not warn, nor does the e-file header."""
    for end, warned in ((date(2004, 12, 31), True), (date(2012, 12, 31), True), (date(2013, 12, 31), False), (date(2018, 12, 31), False),
                        (date(2020, 12, 31), True), (date(2022, 12, 31), False)):
        v = version_for(end)
        assert bool(v["warning"]) == warned, end
        if warned:
            assert f"form year {end.year} is not recorded" in v["warning"] and f"follows the {v['id']} print" in v["warning"]
    claim, det = decided("01-expansion-cap-carryforward")  # periods 2004-2007
    form = " ".join(pdf_text(form313_pdf(claim, det, "2006"), tmp_path).split())
    assert "the Division's layout for form year 2006 is not recorded (see the worksheet)" in form
    sheet = " ".join(pdf_text(worksheet_pdf(claim, det), tmp_path).split())
    assert "The Division's layout of Form 313 for form years 2004, 2005, 2006, 2007 is not recorded: these forms follow the 2013 print" in sheet
    r = run("form313", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--period", "2006", "--format", "csv")
    assert [x["line"] for x in csv.DictReader(io.StringIO(r.stdout)) if x["part"] == "header"][:3] == ["form_version", "form_year", "layout_warning"]


def test_2023_layout_has_the_unitary_id_and_the_combined_return_oval(tmp_path):
    doc = json.loads((EXAMPLES / "01-expansion-cap-carryforward.claim.json").read_text())
    doc["periods"] = [{"start": "2023-01-01", "end": "2023-12-31", "liability": "9000.00", "minimum_tax": "2000.00"}]
    claim = qmcredit.claim_from_dict(doc)
    text = pdf_text(form313_pdf(claim, qmcredit.decide(claim), 0), tmp_path)
    assert "Unitary ID Number, if applicable" in text and "Combined Return" in text and "Fill in oval if member is not" in text
    assert "Form 313 (2023)" in text


def test_question_5_does_not_repeat_the_town():
    claim, det = decided("06-forfeiture-ama")
    q5 = form_for_period(claim, det, 0).parts[0].lines[4]
    assert q5.value == "1500 Haddon Ave, Camden"  # the claim's address "1500 Haddon Ave" and municipality "Camden"
    claim, det = decided("01-expansion-cap-carryforward")
    assert form_for_period(claim, det, 0).parts[0].lines[4].value.count("Camden") == 1


def test_part_ii_rider_when_more_than_five_qualify(tmp_path):
    claim, det = decided("06-forfeiture-ama")
    f = form_for_period(claim, det, 8)
    on_form = [r for r in f.parts[1].table[1:]]
    assert len(on_form) == 5 and len(f.rider) - 1 == 7
    text = pdf_text(form313_pdf(claim, det, 8), tmp_path)
    assert "Rider to Form 313, Part II" in text and "7 more on the attached rider" in text
    for row in f.rider[1:]:
        assert row[2] in text


def test_part_ii_names_and_last_four_of_the_ssn(tmp_path):
    """FORMAT.md "Who the employees are": the claim's people (name, ssn, hired, separated, from the
    payroll's columns or a roster); only the SSN's last four are shown."""
    claim, det = decided("02-refund-sustained-effort")
    ids = claim.payroll.get_column("employee_id").unique().sort().to_list()
    who = pl.DataFrame({"employee_id": ids, "name": [f"Person {e}" for e in ids], "ssn": [f"12345{k:04d}" for k in range(len(ids))],
                        "hired": [date(2006, 2, 1)] * len(ids), "separated": [None] * len(ids)}, schema=PEOPLE)
    named = Claim(claim.header, claim.payroll, claim.source, people=who)  # as qmcredit.imports.people reads them
    assert employee_identities(named)[ids[1]].ssn == "XXX-XX-0001"
    text = pdf_text(form313_pdf(named, det, "2010"), tmp_path)
    assert "Person " in text and "XXX-XX-000" in text and "123-45-" not in text and "2006-02-01" in text


def test_worksheet_names_the_people_excluded_and_why(tmp_path):
    """Part I questions 3 and 4: the owner (P1) and the temporary worker counted part-time only."""
    claim, det = decided("01-expansion-cap-carryforward")
    text = " ".join(pdf_text(worksheet_pdf(claim, det), tmp_path).split())
    assert re.search(r"OWNER P1 not an employee of the taxpayer: has an ownership interest", text)
    assert re.search(r"T1 P3, P4 temporary: counted as a part-time position", text)
    assert "Credit year one (W1)" in text and "Earlier 24-month credit period" in text  # once lines 6a-6c


@pytest.mark.parametrize("make", [lambda c, d: form313_pdf(c, d, "2006"), lambda c, d: worksheet_pdf(c, d)])
def test_fonts_are_embedded(make, tmp_path):
    exe = binary("pdffonts")
    claim, det = decided("01-expansion-cap-carryforward")
    src = tmp_path / "x.pdf"
    src.write_bytes(make(claim, det))
    rows = subprocess.run([exe, str(src)], check=True, capture_output=True, text=True, timeout=60).stdout.splitlines()[2:]
    assert rows and all(r.split()[-5] == "yes" for r in rows), rows  # the "emb" column


@pytest.mark.parametrize("name", ["01-expansion-cap-carryforward", "04-insurer"])
def test_pages_are_balanced(name, tmp_path):
    """Page 1 carries Parts I to IV's start; the form proper takes two pages, the rider its own."""
    claim, det = decided(name)
    pages = pdf_text(form313_pdf(claim, det, 1), tmp_path).split("\f")
    assert "Calculation of the Allowable Credit Amount" in pages[0]
    assert len([p for p in pages if p.strip() and "Rider to Form 313" not in p]) == 2


@pytest.mark.parametrize("layout", [monthly_layout, ledger_layout])
def test_chart_labels_print_at_7_pt_and_not_on_the_bars(layout):
    _, det = decided("06-forfeiture-ama")
    chart = layout(det)
    scale = FRAME_WIDTH / chart.width
    texts = [s for s in chart.shapes if isinstance(s, Text)]
    bars = []
    for g in (s for s in chart.shapes if isinstance(s, Group)):
        texts += [c for c in g.children if isinstance(c, Text)]
        bars += [c for c in g.children if isinstance(c, Rect) and c.fill]
    assert min(t.size for t in texts) * scale >= 7
    for t in texts:
        w = 0.62 * t.size * len(t.text)
        x0 = {"start": t.x, "middle": t.x - w / 2, "end": t.x - w}[t.anchor]
        for b in bars:
            assert not (x0 < b.x + b.w and b.x < x0 + w and t.y - t.size < b.y + b.h and b.y < t.y), (t.text, b)


def test_cli_all_periods_in_one_pdf_with_the_preparer(tmp_path):
    out = tmp_path / "all.pdf"
    r = run("form313", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--all", "--out", out,
            "--preparer", "Dana Preparer", "--firm", "Camden Tax LLP", "--ptin", "P01234567")
    assert r.returncode == 0, r.stderr
    text = pdf_text(out.read_bytes(), tmp_path)
    for start in ("2004", "2005", "2006", "2007"):
        assert f"tax period {start}-01-01 to {start}-12-31" in text
    assert text.count("Dana Preparer") == 4 and "Camden Tax LLP" in text and "P01234567" in text


def test_cli_needs_a_period_or_all(tmp_path):
    r = run("form313", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--out", tmp_path / "x.pdf")
    assert r.returncode == 2 and "--period" in r.stderr and "--all" in r.stderr


def test_cli_efile_csv_and_json_carry_the_determinations_lines(tmp_path):
    """One row per line and period (period_start, period_end, part, line, label, value)."""
    claim_path = EXAMPLES / "06-forfeiture-ama.claim.json"
    r = run("form313", claim_path, "--all", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(rows[0]) == ["period_start", "period_end", "part", "line", "label", "value"]
    keys = [(x["period_start"], x["part"], x["line"]) for x in rows]
    assert len(keys) == len(set(keys)), "one row per line and period"
    det = qmcredit.decide(qmcredit.load_claim(claim_path)).to_dict()
    by = {(x["period_start"], x["line"]): x["value"] for x in rows if x["part"] in ("III", "IV", "V")}
    for p in det["periods"]:
        assert by[(p["start"], "17")] == p["room"] and by[(p["start"], "18")] == p["applied"]
        assert by[(p["start"], "4")] == p["carried_forward"] and by[(p["start"], "11")] == p["detail"]["liability"]
    assert not {x["line"] for x in rows} & {"6a", "6b", "6c", "19", "20"}
    out = tmp_path / "f.json"
    r = run("form313", claim_path, "--period", "2011", "--format", "json", "--out", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert {x["period_start"] for x in doc} == {"2011-01-01"}
    assert {x["line"]: x["value"] for x in doc}["1A"] == det["credit"]["year_two"]
    assert sum(Decimal(x["value"]) for x in doc if re.fullmatch(r"2\([a-f]\)A", x["line"]) and x["value"]) == Decimal("10000.00")


def test_the_town_is_not_repeated_when_the_address_names_it():
    """Issue 16: "..., Camden NJ 08109, Camden" is "..., Camden NJ 08109"."""
    doc = json.loads((EXAMPLES / "01-expansion-cap-carryforward.claim.json").read_text())
    doc["location"]["address"] = "200 Federal St, Camden NJ 08103"
    claim = qmcredit.claim_from_dict(doc)
    assert form_for_period(claim, qmcredit.decide(claim), 0).parts[0].lines[4].value == "200 Federal St, Camden NJ 08103"
