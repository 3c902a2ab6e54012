"""Issue 15 through the pages' HTTP door (TestClient): the new-claim form's questions (E3, E4, L2,
L2a, L2b, L2c, the options) stored in the claim and printed on Form 313 Part I; the claims list and
queue (amounts, search, filters, sorting, paging, CSV and Excel export); the drill-down grouped,
filtered and paged with figures named in words; the what-if's list of changes and its saved draft."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from decimal import Decimal

import openpyxl
import pytest
from sqlalchemy import func, select

from qmcredit.service import exact_json
from qmcredit.service.models import Claim, Revision

from .conftest import csrf, example_payroll, header_fields, sign_in


def _preview(client, fields: dict, payroll: str):
    token = csrf(client.get("/claims/new").text)
    return client.post("/claims/new", data={"csrf": token, **fields}, files={"payroll": ("payroll.csv", payroll, "text/csv")})


def _confirm(client, preview_html: str, action: str = "draft"):
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', preview_html.split('action="/claims/new/confirm"')[1]))
    import html as h
    data = {k: h.unescape(v) for k, v in hidden.items()} | {"action": action}
    return client.post("/claims/new/confirm", data=data)


def _stored(office, claim_id: int) -> tuple[dict, dict]:
    with office.state.db.read() as s:
        rev = s.execute(select(Revision).where(Revision.claim_id == claim_id).order_by(Revision.number.desc())).scalars().first()
        return exact_json.loads(rev.document), exact_json.loads(rev.determination)


def test_new_claim_form_asks_every_question_with_its_rule(client):
    """E3 (Form 313 Part I question 1), E4, L2a's list, L2b, L2c and every option with its default."""
    sign_in(client, "preparer")
    page = client.get("/claims/new").text
    assert 'name="uez_benefit" id="uez_benefit" value="yes"' in page and 'id="uez_benefit-no"' in page
    assert "Form 313 Part I question 1; E3" in page and 'id="earlier_credit_period_start"' in page and "E4" in page
    assert 'id="unitary_id"' in page and 'id="as_of"' in page
    for field in ("nj_gross_receipts", "s_corporation", "group_payroll_5m", "group_payroll", "combined_group_member",
                  "alternative_minimum_assessment", "credits-0-code", "credits-0-amount", "credits-0-order"):
        assert f'id="periods-0-{field}"' in page, field
    assert "5. Research and Development Tax Credit" in page and "14. " not in page  # the Director's list, this credit left out
    for option in ("year_one_start", "carryforward_periods", "credit_order", "refund", "pay_period_allocation", "equivalent_hours_cap"):
        assert f'id="option-{option}"' in page
    assert "five (the Form 313 instructions) (default)" in page and "taken as a refund (default)" in page


def test_the_uez_question_is_asked_not_assumed_and_refusals_name_the_field(client):
    sign_in(client, "preparer")
    doc, good = example_payroll()
    fields = header_fields(doc)
    del fields["uez_benefit"]
    fields |= {"periods-0-credits-0-code": "5", "periods-0-credits-0-amount": "12,5x0"}
    r = _preview(client, fields, good)
    assert r.status_code == 422 and "Submit the claim" not in r.text
    assert 'id="uez_benefit-error"' in r.text and "Form 313 Part I question 1" in r.text
    error = re.search(r'id="periods-0-credits-0-amount-error">([^<]+)<', r.text)
    assert error and "12,5x0" in error[1]  # the one parser's message, beside the field it names


def test_answers_are_stored_and_form313_part_i_prints_them(client, office):
    """The claim stored from the form keeps every answer; Form 313 Part I line 1 prints YES as answered."""
    sign_in(client, "preparer")
    doc, good = example_payroll()
    fields = header_fields(doc) | {"uez_benefit": "yes", "unitary_id": "UN-4471", "earlier_credit_period_start": "",
                                   "periods-1-credits-0-code": "5", "periods-1-credits-0-amount": "3000.00",
                                   "periods-1-credits-0-order": "after", "periods-2-alternative_minimum_assessment": "1500.00",
                                   "option-carryforward_periods": "none", "option-credit_order": "regulation"}
    r = _preview(client, fields, good)
    assert r.status_code == 200 and "is not eligible" in r.text and "E3" in r.text
    r = _confirm(client, r.text)
    claim_id = int(r.url.path.rsplit("/", 1)[1])
    document, det = _stored(office, claim_id)
    assert document["taxpayer"] | {} == {"id": "22-7000001", "name": "Federal Street Foods LLC", "tax": "cbt",
                                        "uez_benefit": True, "unitary_id": "UN-4471"}
    assert document["periods"][1]["other_credits"] == [{"name": "Research and Development Tax Credit", "amount": "3000.00",
                                                        "code": 5, "order": "after"}]
    assert document["periods"][2]["alternative_minimum_assessment"] == "1500.00"
    assert document["options"] == {"carryforward_periods": None, "credit_order": "regulation"}
    assert det["eligible"] is False and any(f["rule"] == "E3" for f in det["ineligible_because"])
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    pdf = client.get(f"/claims/{claim_id}/form313/0").content
    text = subprocess.run([pdftotext, "-layout", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode()
    line1 = next(line for line in text.splitlines() if line.strip().startswith("1.") and "Enterprise Zones Act?" in line)
    assert line1.split()[-1] == "YES"  # (the 2004 form has no unitary ID box; the stored taxpayer keeps it)


def _table_rows(html: str) -> list[str]:
    if "<tbody>" not in html:
        return []
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return re.findall(r'<a href="/claims/(\d+)"', body)


def test_claims_list_shows_amounts_searches_filters_sorts_and_exports_what_is_shown(client, office):
    sign_in(client, "examiner")
    _, det = _stored(office, 1)
    page = client.get("/claims").text
    assert det["credit"]["year_one"] in page and det["credit"]["year_two"] in page and "Ordered by taxpayer" in page
    assert "ordered by taxpayer, lowest or earliest first" in page
    assert _table_rows(client.get("/claims", params={"q": "claim 1"}).text) == ["1"]
    assert _table_rows(client.get("/claims", params={"q": "riverside"}).text) == ["1"]
    insurers = _table_rows(client.get("/claims", params={"tax": "insurance_premiums"}).text)
    with office.state.db.read() as s:
        count = s.execute(select(func.count()).select_from(Claim)).scalar_one()
    assert 0 < len(insurers) < count
    by_credit = client.get("/claims", params={"sort": "year_one", "dir": "desc"}).text
    assert 'aria-sort="descending"' in by_credit
    shown = _table_rows(by_credit)
    exported = list(csv.DictReader(io.StringIO(client.get("/claims", params={"sort": "year_one", "dir": "desc", "format": "csv"}).text)))
    assert [r["Claim"] for r in exported] == shown  # the rows shown, in the order shown
    amounts = [Decimal(r["Credit, year one"]) for r in exported if r["Credit, year one"] not in ("", "pending")]
    assert amounts == sorted(amounts, reverse=True)
    assert next(r for r in exported if r["Claim"] == "1")["Credit, year one"] == det["credit"]["year_one"]
    xlsx = client.get("/claims", params={"sort": "year_one", "dir": "desc", "format": "xlsx"})
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx.content)).active
    values = list(sheet.iter_rows(values_only=True))
    assert [str(v[0]) for v in values[1:]] == shown and values[0][7] == "Credit, year one"
    assert next(Decimal(str(v[7])) for v in values[1:] if v[0] == 1) == Decimal(det["credit"]["year_one"])
    one_page = client.get("/claims", params={"page": "2"}).text  # fewer claims than a page: the nearest page
    assert _table_rows(one_page) == _table_rows(page)


def test_queue_filters_by_status_and_age(client):
    sign_in(client, "examiner")
    queue = client.get("/queue").text
    assert "the longest waiting first" in queue and _table_rows(queue)
    assert _table_rows(client.get("/queue", params={"status": "under_review"}).text) == []
    assert "No claim matches" in client.get("/queue", params={"age": "30"}).text  # everything was filed today
    assert 'value="approved"' not in queue.split('id="status"')[1].split("</select>")[0]  # only the waiting states


def test_drill_down_groups_filters_pages_and_names_figures_in_words(client, office):
    sign_in(client, "preparer")
    _, det = _stored(office, 1)
    rows = next(e for e in det["explanation"] if e["figure"] == "employee_months")["rows"]
    behind = [r for r in rows if r["period"] in ("base", "year_one")]
    page = client.get("/claims/1/figures/credit.year_one").text
    assert "<h1>Credit, year one = " in page and "New positions, year one" in page  # depends on, in words
    by_month = client.get("/claims/1/figures/credit.year_one", params={"group": "month"}).text
    assert len(re.findall(r'<tr><th scope="row">\d{4}-\d\d</th>', by_month)) == len({r["month"] for r in behind})
    by_status = client.get("/claims/1/figures/credit.year_one", params={"group": "status"}).text
    assert by_status.count('<tr><th scope="row">') == len({r["status"] for r in behind})
    first = behind[0]["employee_id"]
    one = client.get("/claims/1/figures/credit.year_one", params={"group": "", "employee": first}).text
    mine = [r for r in behind if first.casefold() in r["employee_id"].casefold()]
    assert f"{len(mine)} employee-month" in one
    last = client.get("/claims/1/figures/credit.year_one", params={"group": "", "page": "999"}).text
    pages = -(-len(behind) // 50)
    assert f"Page {pages} of {pages}" in last and 'rel="prev"' in last


def test_what_if_takes_several_changes_and_saves_a_draft_through_the_service(client, office):
    sign_in(client, "preparer")
    doc, good = example_payroll()
    r = _confirm(client, _preview(client, header_fields(doc), good).text)
    claim_id = int(r.url.path.rsplit("/", 1)[1])
    _, filed = _stored(office, claim_id)
    y1 = filed["windows"]["year_one"]["start"][:7]
    y2_end = filed["windows"]["year_two"]["end"][:7]
    asked = {"show": "1", "c0-employee": "HIRE-1", "c0-first_month": y1, "c0-last_month": y2_end, "c0-hours": "160",
             "c1-employee": "HIRE-2", "c1-first_month": y1, "c1-last_month": y2_end, "c1-hours": "160", "c1-basis": "temporary",
             "option-whole_positions": "true", "option-carryforward_periods": "form_313", "liability-1": "90000.00"}
    r = client.get(f"/claims/{claim_id}/what-if", params=asked)
    assert r.status_code == 200 and "Save into this draft (revision 2)" in r.text
    changed = [c.strip() for c in re.findall(r'<tr class="changed"><th scope="row">([^<]+)<', r.text)]
    assert "Credit, year one" in changed and "New positions, year one" in changed
    what_if_credit = re.search(r'<th scope="row">Credit, year one <span class="tag">changed</span></th><td class="num">[^<]+</td><td class="num">([^<]+)<', r.text)[1]
    token = csrf(r.text)
    # a new draft of the same location and credit period is a second filing: the service's refusal names the claim to amend
    refused = client.post(f"/claims/{claim_id}/what-if/save", data={**asked, "csrf": token, "action": "new"})
    assert refused.status_code == 409 and f"amend claim {claim_id}" in refused.text
    saved = client.post(f"/claims/{claim_id}/what-if/save", data={**asked, "csrf": token, "action": "into"})
    assert saved.url.path == f"/claims/{claim_id}"
    document, det = _stored(office, claim_id)
    assert det["credit"]["year_one"] == what_if_credit and document["options"] == {"whole_positions": True}
    assert document["periods"][1]["liability"] == "90000.00" and document["payroll"].startswith("what-if-")
    with office.state.db.read() as s:
        rev = s.execute(select(Revision).where(Revision.claim_id == claim_id, Revision.number == 2)).scalar_one()
        assert "HIRE-1" in rev.reason and "temporary" in rev.reason
