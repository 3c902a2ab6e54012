"""Form 313 and the worksheet as PDF: pdftotext reads back every figure of the determination,
exactly as the determination writes it; output is deterministic; a page renders (issue 5)."""

from __future__ import annotations

import re
import subprocess
from decimal import Decimal

import pytest

from qmcredit.web.figures import PeriodNotFound
from qmcredit.web.pdf import form313_pdf, worksheet_pdf

from .conftest import binary, decided, has_figure, pdf_text, pending_claim

# (example, period as given, index): a period with a carryover, one where nothing is allowed, the
# insurer, the ineligible claim, a refund, a forfeiture.
CASES = [
    ("01-expansion-cap-carryforward", "2006", 2),
    ("01-expansion-cap-carryforward", "2004", 0),
    ("02-refund-sustained-effort", "2010", 2),
    ("04-insurer", "2005", 1),
    ("05-ineligible", "2007", 1),
    ("06-forfeiture-ama", "2011", 8),
    ("06-forfeiture-ama", 3, 3),
]


def assert_figures(text: str, figures) -> None:
    missing = [f for f in figures if f is not None and not has_figure(text, f)]
    assert not missing, f"figures not in the PDF text: {missing}"


def line_figure(text: str, no: str) -> list[str]:
    """The figures printed in the box of line ``no`` (its number at the right of the row, then the box)."""
    return re.findall(rf"\s{re.escape(no)}\s+(\S+)\s*$", text, flags=re.M)


def expected_lines(d: dict, i: int) -> dict[str, str]:
    """Form 313 lines 7-18 and Part V line 4 of period ``i``, as the determination has them."""
    p = d["periods"][i]
    detail = p["detail"]
    carry = sum((Decimal(o["opening"]) for o in detail["origins"].values()), Decimal("0.00"))
    lines = {"7": d["credit"]["year_one"], "8": d["credit"]["year_two"], "9": str(carry),
             "10": str(Decimal(p["allowed"]) + carry), "11": detail["liability"], "16": detail["other_credits_before"],
             "17": p["room"], "18": p["applied"], "4": p["carried_forward"]}
    if detail["limited"]:
        lines |= {"12": detail["cap_50_percent"], "13": detail["floor"], "14": detail["liability_above_floor"],
                  "15": str(min(Decimal(detail["cap_50_percent"]), Decimal(detail["liability_above_floor"])))}
    return lines


@pytest.mark.parametrize("name,period,i", CASES)
def test_form313_text_carries_the_figures(name, period, i, tmp_path):
    """Issue 16: every line's figure under its number, as the determination has it (L1-L5, R1)."""
    claim, det = decided(name)
    d = det.to_dict()
    text = pdf_text(form313_pdf(claim, det, period), tmp_path)
    p = d["periods"][i]
    detail = p["detail"]
    assert "FORM 313" in text and "Economic Recovery Tax Credit" in text
    for part in ("Part I", "Part II", "Part III", "Part IV", "Part V"):
        assert part in text
    assert f"{p['start']} to {p['end']}" in text
    for no, figure in expected_lines(d, i).items():
        assert figure in line_figure(text, no), f"line {no}: {figure} not in {line_figure(text, no)}"
    assert_figures(text, [
        *d["credit"].values(), *d["new_positions"].values(),
        p["allowed"], p["room"], p["applied"], p["refund"], p["forfeited"], p["carried_forward"],
        detail["liability"], detail["other_credits_before"],
    ])
    if detail["limited"]:
        assert_figures(text, [detail["cap_50_percent"], detail["floor"], detail["liability_above_floor"]])
    else:
        assert "no 50% limit or minimum tax for the tax on insurers" in text
        assert all(line_figure(text, no) == ["n/a"] for no in ("12", "13", "14", "15"))


def test_form313_insurer_heading_names_the_tax(tmp_path):
    claim, det = decided("04-insurer")
    assert "Tax on Insurers" in pdf_text(form313_pdf(claim, det, "2005"), tmp_path)


def test_form313_part_v_in_tax_year_columns_with_the_forfeiture(tmp_path):
    """Issue 16, L4-L5: Part V's columns are tax years, earliest first; lines 2(a)-(f) are each year's
    line 18 applied to the column's credit; what the five-year limit forfeits is stated."""
    claim, det = decided("06-forfeiture-ama")
    d = det.to_dict()
    text = pdf_text(form313_pdf(claim, det, "2011"), tmp_path)
    part_v = text[text.index("Economic Recovery Tax Credit Carryover"):]
    ends = [p["end"] for p in d["periods"][3:9]]  # the six tax years ending with 2011
    assert [part_v.index(f"{c}:") for c in "ABCDEF"] == sorted(part_v.index(f"{c}:") for c in "ABCDEF")
    for end in ends:
        assert end in part_v
    assert "2(g)" not in part_v and "G:" not in part_v
    for k in "abcdef":
        assert f"2({k}) Part IV line 18" in part_v
    assert "forfeited 5000.00 at the close of the tax year ending 2011-12-31" in " ".join(part_v.split())
    assert "Credit year two, column A" in part_v


def test_form313_part_v_line_1_and_2_from_the_ledger(tmp_path):
    claim, det = decided("01-expansion-cap-carryforward")
    d = det.to_dict()
    text = pdf_text(form313_pdf(claim, det, "2007"), tmp_path)
    rows = {ln.split()[0]: ln.split() for ln in text[text.index("Economic Recovery Tax Credit Carryover"):].splitlines() if ln.strip()}
    y1 = d["periods"][1]["detail"]["origins"]["year_one"]
    assert rows["1."][-3:] == [d["credit"]["year_one"], d["credit"]["year_two"], "0.00"]  # 2005, 2006, 2007 columns
    assert rows["2(a)"][-1] == y1["applied"]  # 2005's line 18 went to the 2005 credit
    assert re.search(r"^\s*4\.\s.*\s4\s+" + re.escape(d["periods"][3]["carried_forward"]) + r"\s*$", text, flags=re.M)


def test_form313_of_an_ineligible_claim_says_so(tmp_path):
    claim, det = decided("05-ineligible")
    text = " ".join(pdf_text(form313_pdf(claim, det, 0), tmp_path).split())
    assert "does not qualify" in text
    assert "E3" in text and "E4" in text
    assert "FAILED" in pdf_text(worksheet_pdf(claim, det), tmp_path)  # the checks table is the worksheet's (issue 16)


def test_form313_unknown_period_lists_the_periods():
    claim, det = decided("01-expansion-cap-carryforward")
    with pytest.raises(PeriodNotFound) as e:
        form313_pdf(claim, det, "1999")
    assert "2004-01-01 to 2004-12-31" in str(e.value) and "2007-01-01 to 2007-12-31" in str(e.value)
    with pytest.raises(PeriodNotFound):
        form313_pdf(claim, det, 9)


@pytest.mark.parametrize("name", ["01-expansion-cap-carryforward", "03-part-time-equivalents", "04-insurer", "05-ineligible", "06-forfeiture-ama"])
def test_worksheet_text_carries_the_figures(name, tmp_path):
    claim, det = decided(name)
    d = det.to_dict()
    text = pdf_text(worksheet_pdf(claim, det), tmp_path)
    assert_figures(text, [
        *d["credit"].values(), *d["new_positions"].values(), *d["average_positions"].values(),
        d["sustained_effort_ratio"], d["refund"], d["carried_forward"],
    ])
    for m in d["monthly"]:
        assert m["month"] in text
        assert_figures(text, [m["positions"], m["equivalents"]])
    for p in d["periods"]:
        assert_figures(text, [p[k] for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")])
    for c in d["checks"]:
        assert c["rule"] in text


def test_pending_figures_print_as_pending(tmp_path):
    claim, det = pending_claim()
    assert "pending" in pdf_text(form313_pdf(claim, det, "2006"), tmp_path)
    assert "not known" in pdf_text(worksheet_pdf(claim, det), tmp_path)


def test_pdfs_are_deterministic():
    claim, det = decided("01-expansion-cap-carryforward")
    assert form313_pdf(claim, det, "2005") == form313_pdf(claim, det, "2005")
    assert worksheet_pdf(claim, det) == worksheet_pdf(claim, det)


def test_a_page_renders_to_png(tmp_path):
    exe = binary("pdftoppm")
    claim, det = decided("01-expansion-cap-carryforward")
    src = tmp_path / "form.pdf"
    src.write_bytes(form313_pdf(claim, det, "2006"))
    subprocess.run([exe, "-r", "50", "-png", "-f", "1", "-l", "1", str(src), str(tmp_path / "page")], check=True, timeout=60)
    (png,) = tmp_path.glob("page*.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
