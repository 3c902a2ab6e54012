"""Issue 15 (part B) in headless Debian Chromium against a real uvicorn server, by keyboard where a
person would use it: the new-claim form's questions answered (E3, L2a, L2b, options) and the draft
saved; the claims list searched, sorted and exported (CSV and Excel equal to what is shown and to
the stored determination); a figure's employee-months grouped and paged; a what-if of several
changes saved into the draft; the examiner's queue filtered. Screenshots (1366x768) go to
QMCREDIT_SCREENSHOTS when it names a folder."""

from __future__ import annotations

import csv
import io
import re

import openpyxl
import pytest
from sqlalchemy import select

from qmcredit.service import exact_json
from qmcredit.service.db import Database
from qmcredit.service.models import Revision

from .conftest import example_payroll, header_fields
from .test_e2e_browser import _shot, _sign_in, browser, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def _stored(folder, claim_id: int) -> tuple[int, dict, dict]:
    db = Database(f"sqlite:///{folder / 'e2e.sqlite3'}")
    try:
        with db.read() as s:
            rev = s.execute(select(Revision).where(Revision.claim_id == claim_id).order_by(Revision.number.desc())).scalars().first()
            return rev.number, exact_json.loads(rev.document), exact_json.loads(rev.determination)
    finally:
        db.dispose()


def _press(page, selector: str, key: str = "Enter") -> None:
    page.locator(selector).focus()
    page.keyboard.press(key)


def test_questions_lists_drill_down_and_what_if_through_the_pages(server, browser):
    base, folder = server
    doc, good = example_payroll()
    (folder / "payroll.csv").write_text(good)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    page = context.new_page()

    # 1. the new-claim form asks every question; answered by keyboard; stored as a draft
    _sign_in(page, base, "preparer")
    page.get_by_role("link", name="File a new claim from a payroll file").click()
    for name, value in header_fields(doc).items():
        if name == "uez_benefit":
            continue
        page.locator(f"#{name}").fill(value) if name != "tax" else page.locator("#tax").select_option(value)
    _press(page, "#uez_benefit-no", "Space")  # Form 313 Part I question 1 (E3)
    assert page.locator("#uez_benefit-no").is_checked()
    _press(page, "fieldset.period >> nth=1 >> summary")  # period 2's further questions open by keyboard
    page.get_by_label("Period 2, other credit 1: the Director's list").select_option("5")
    page.get_by_label("Period 2, other credit 1: amount").fill("3000.00")
    _press(page, "fieldset.period >> nth=2 >> summary")
    page.locator("#periods-2-alternative_minimum_assessment").fill("1500.00")
    page.get_by_label("L5: periods a credit may be carried forward", exact=True).select_option("none")
    page.get_by_label("Payroll table").set_input_files(str(folder / "payroll.csv"))
    _shot(page, "15b-01-new-claim-questions")
    _press(page, "button:has-text('Read the file and preview')")
    assert "No problems" in page.get_by_role("status").inner_text()
    page.get_by_role("button", name="Save as a draft").click()
    page.wait_for_url(re.compile(r".*/claims/\d+$"))
    claim_id = int(page.url.rsplit("/", 1)[1])
    _, document, det = _stored(folder, claim_id)
    assert document["taxpayer"]["uez_benefit"] is False and document["options"] == {"carryforward_periods": None}
    assert document["periods"][1]["other_credits"][0]["code"] == 5
    assert document["periods"][2]["alternative_minimum_assessment"] == "1500.00"

    # 2. the claims list: searched, sorted by a column (keyboard), exported as shown
    page.goto(base + "/claims")
    page.get_by_label("Taxpayer, EIN or claim number").fill("Foods")
    page.keyboard.press("Enter")
    page.wait_for_url("**/claims?q=Foods*")
    assert page.locator("table.claims tbody tr").count() == 1
    assert det["credit"]["year_one"] in page.locator("table.claims tbody").inner_text()
    page.goto(base + "/claims")
    _press(page, "table.claims th >> text=Credit, year one")
    page.wait_for_url("**sort=year_one**")
    _press(page, "table.claims th >> text=Credit, year one")  # again: highest first
    page.wait_for_url("**dir=desc**")
    assert page.locator("th[aria-sort=descending]").inner_text().startswith("Credit, year one")
    _shot(page, "15b-02-claims-sorted")
    shown = [t.split()[-1] for t in page.locator("table.claims tbody tr td:first-child").all_inner_texts()]
    with page.expect_download() as got:
        page.get_by_role("link", name="CSV").click()
    exported = list(csv.DictReader(io.StringIO(open(got.value.path(), encoding="utf-8").read())))
    assert [r["Claim"] for r in exported] == shown
    assert next(r for r in exported if r["Claim"] == str(claim_id))["Credit, year one"] == det["credit"]["year_one"]
    with page.expect_download() as got:
        page.get_by_role("link", name="Excel").click()
    sheet = openpyxl.load_workbook(io.BytesIO(got.value.path().read_bytes())).active
    assert [str(row[0]) for row in sheet.iter_rows(min_row=2, values_only=True)] == shown

    # 3. a figure's employee-months, grouped and paged, named in words
    page.goto(f"{base}/claims/{claim_id}")
    page.locator("#fig-credit-year-one summary").click()
    page.locator("#fig-credit-year-one").get_by_role("link", name=re.compile("employee-months behind this figure")).click()
    assert page.locator("h1").inner_text().startswith("Credit, year one = ")
    employees = page.locator("table.list tbody tr").count()
    assert employees == len({r["employee_id"] for r in next(e for e in det["explanation"] if e["figure"] == "employee_months")["rows"]
                             if r["period"] in ("base", "year_one")})
    _shot(page, "15b-03-figure-by-employee")
    page.get_by_label("Group by").select_option("month")
    _press(page, "form.filters button.primary")
    page.wait_for_url("**group=month**")
    _shot(page, "15b-04-figure-by-month")
    page.get_by_label("Group by").select_option("")
    _press(page, "form.filters button.primary")
    page.wait_for_url("**group=&**")
    _press(page, "a[rel=next]")
    page.wait_for_url("**page=2**")
    assert "Page 2 of" in page.locator(".pager").inner_text()
    _shot(page, "15b-05-figure-rows-page-2")

    # 4. what-if: several changes at once, saved into the draft through the service
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_role("link", name="What if…").click()
    y1, y2_end = det["windows"]["year_one"]["start"][:7], det["windows"]["year_two"]["end"][:7]
    for k, (who, basis) in enumerate((("HIRE-1", ""), ("HIRE-2", "temporary"))):
        page.get_by_label(f"Change {k + 1}: employee").fill(who)
        page.get_by_label(f"Change {k + 1}: first month").fill(y1)
        page.get_by_label(f"Change {k + 1}: last month").fill(y2_end)
        page.get_by_label(f"Change {k + 1}: hours").fill("160")
        if basis:
            page.get_by_label(f"Change {k + 1}: basis").select_option(basis)
    page.get_by_label("C1: new positions").select_option("true")
    _press(page, "button:has-text('Show the figures')")
    page.wait_for_url("**show=1**")
    changed = page.locator("tr.changed th").all_inner_texts()
    assert any(t.startswith("Credit, year one") for t in changed)
    what_if = page.locator("tr.changed", has_text="Credit, year one").first.locator("td").nth(1).inner_text()
    _shot(page, "15b-06-what-if")
    page.get_by_role("button", name="Save into this draft (revision 2)").click()
    page.wait_for_url(f"**/claims/{claim_id}")
    number, document, det2 = _stored(folder, claim_id)
    assert number == 2 and det2["credit"]["year_one"] == what_if and document["options"]["whole_positions"] is True
    page.get_by_role("button", name="Sign out").click()

    # 5. the examiner's queue, filtered by status
    _sign_in(page, base, "examiner")
    page.goto(base + "/queue")
    page.get_by_label("Status").select_option("submitted")
    _press(page, "form.filters button.primary")
    page.wait_for_url("**status=submitted**")
    assert page.locator("table.claims tbody tr").count() >= 1
    assert set(page.locator("table.claims tbody .state").all_inner_texts()) == {"Submitted"}
    _shot(page, "15b-07-queue-filtered")
    context.close()
