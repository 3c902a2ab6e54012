"""The pages through FastAPI's TestClient: sign-in and CSRF, who sees what, the claim page's figures
as the determination states them, drill-down, upload preview storing nothing, the examiner's
decision, what-if writing nothing, and the PDFs."""

from __future__ import annotations

import html
import re

from sqlalchemy import func, select

from qmcredit.service import exact_json
from qmcredit.service.models import Claim, Revision

from .conftest import csrf, example_payroll, header_fields, sign_in


def _claims(office) -> int:
    with office.state.db.read() as s:
        return s.execute(select(func.count()).select_from(Claim)).scalar_one()


def _det(office, claim_id: int) -> dict:
    with office.state.db.read() as s:
        rev = s.execute(select(Revision).where(Revision.claim_id == claim_id).order_by(Revision.number.desc())).scalars().first()
        return exact_json.loads(rev.determination)


def test_browsers_are_sent_to_sign_in_and_programs_keep_json(client):
    assert client.get("/", headers={"accept": "application/json"}).json()["api"] == "/api/v1"
    r = client.get("/claims/1")
    assert r.url.path == "/signin" and "next=%2Fclaims%2F1" in str(r.url)
    assert '<label for="username">' in r.text and '<label for="password">' in r.text


def test_wrong_password_says_so_and_a_form_without_its_token_is_refused(client):
    token = csrf(client.get("/signin").text)
    r = client.post("/signin", data={"username": "preparer", "password": "nope", "csrf": token})
    assert r.status_code == 401 and "Wrong username or password" in r.text
    r = client.post("/signin", data={"username": "preparer", "password": "qmcredit-demo", "csrf": "forged"})
    assert r.status_code == 403 and "form.csrf" in r.text


def test_signing_in_follows_only_paths_of_this_site(client):
    token = csrf(client.get("/signin").text)
    r = client.post("/signin", data={"username": "preparer", "password": "qmcredit-demo", "csrf": token,
                                     "next": "//elsewhere.example/x"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/claims"


def test_claim_page_shows_the_determinations_figures_checks_and_downloads(client, office):
    sign_in(client, "preparer")
    det = _det(office, 1)
    page = client.get("/claims/1").text
    for figure in (det["credit"]["year_one"], det["credit"]["year_two"], det["refund"], det["carried_forward"]):
        assert figure in page
    for check in det["checks"]:
        assert check["rule"] in page
    assert page.count("<svg") >= 2 and 'role="img"' in page
    assert page.count('/form313/') == len(det["periods"]) and "/claims/1/worksheet" in page
    assert 'id="fig-credit-year-one"' in page and "Decision history" in page


def test_a_figure_opens_down_to_the_payroll_rows(client, office):
    sign_in(client, "preparer")
    det = _det(office, 1)
    rows = next(e for e in det["explanation"] if e["figure"] == "employee_months")["rows"]
    year_one = [r for r in rows if r["period"] == "year_one"]
    # issue 15: grouped by employee first, every employee-month in one group; ungrouped, paged by 50
    grouped = client.get("/claims/1/figures/average_positions.year_one").text
    counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td><td class="num">[\d.]+</td>', grouped)]
    assert sum(counts) == len(year_one) and len(counts) == len({r["employee_id"] for r in year_one})
    page = client.get("/claims/1/figures/average_positions.year_one?group=").text
    assert page.count("<tr>") - 1 == min(50, len(year_one)) and f"Page 1 of {-(-len(year_one) // 50)}" in page
    assert year_one[0]["source"] in page
    month = client.get(f"/claims/1/figures/month-{year_one[0]['month']}")
    assert month.status_code == 200 and year_one[0]["employee_id"] in month.text
    assert client.get("/claims/1/figures/no.such.figure").status_code == 404


def test_every_figure_shows_the_statute_s_words(client):
    """B1 / issue 5 item 3: a figure opens on its rule and the words of the statute it reads."""
    sign_in(client, "preparer")
    page = client.get("/claims/1").text
    assert "$2,500 for each new full-time position" in page  # C2, credit.year_one
    assert "Sustained effort ratio” means the proportion" in page  # C3
    assert "shall not exceed 50% of the tax" in page  # L2, the room of each period


def test_preparers_see_only_their_own_claims(client):
    sign_in(client, "preparer2")
    assert "No claims yet" in client.get("/claims").text
    r = client.get("/claims/1")
    assert r.status_code == 404 and "Traceback" not in r.text


def test_upload_previews_every_problem_and_stores_nothing(client, office):
    sign_in(client, "preparer")
    before = _claims(office)
    doc, bad = example_payroll(broken=True)
    page = client.get("/claims/new").text
    r = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc)},
                    files={"payroll": ("payroll.csv", bad, "text/csv")})
    assert r.status_code == 422
    assert "payroll.csv line 4" in r.text and "2004-13" in r.text and 'id="payroll-error"' in r.text
    assert "Read <strong>" in r.text and _claims(office) == before
    r = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc), "periods-1-liability": "lots"},
                    files={"payroll": ("payroll.csv", example_payroll()[1], "text/csv")})
    assert r.status_code == 422 and 'id="periods-1-liability-error"' in r.text and _claims(office) == before


def test_fixed_file_is_confirmed_then_reviewed_and_approved(client, office):
    sign_in(client, "preparer")
    doc, good = example_payroll()
    page = client.get("/claims/new").text
    r = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc)},
                    files={"payroll": ("payroll.csv", good, "text/csv")})
    assert r.status_code == 200 and "No problems" in r.text
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', r.text))
    form = {k: html.unescape(v) for k, v in form.items()}
    r = client.post("/claims/new/confirm", data={**form, "action": "submit"})
    claim_id = int(r.url.path.rsplit("/", 1)[1])
    assert "Submitted" in r.text and _det(office, claim_id)["eligible"] is True
    client.post("/signout", data={"csrf": csrf(r.text)})
    sign_in(client, "examiner")
    assert f"/claims/{claim_id}" in client.get("/queue").text
    page = client.get(f"/claims/{claim_id}").text
    page = client.post(f"/claims/{claim_id}/review", data={"csrf": csrf(page)}).text
    r = client.post(f"/claims/{claim_id}/decision", data={"csrf": csrf(page), "outcome": "denied"})
    assert r.status_code == 422 and 'id="rule-error"' in r.text
    r = client.post(f"/claims/{claim_id}/decision", data={"csrf": csrf(page), "outcome": "approved", "rule": "B1",
                                                          "message": "payroll registers reconcile"})
    assert "Approved" in r.text and "payroll registers reconcile" in r.text


def test_an_auditor_gets_no_buttons_and_is_refused_a_change(client):
    sign_in(client, "auditor")
    page = client.get("/claims/1").text
    assert "Start the review" not in page and "Submit the claim" not in page
    r = client.post("/claims/1/review", data={"csrf": csrf(page)})
    assert r.status_code == 403 and "Traceback" not in r.text


def test_what_if_compares_and_writes_nothing(client, office):
    sign_in(client, "preparer")
    filed = _det(office, 1)
    with office.state.db.read() as s:
        revisions = s.execute(select(func.count()).select_from(Revision)).scalar_one()
    r = client.get("/claims/1/what-if", params={"show": "1", "c0-employee": "NEW-1", "c0-first_month": filed["windows"]["year_one"]["start"][:7],
                                                "c0-last_month": filed["windows"]["year_two"]["end"][:7], "c0-hours": "160"})
    assert r.status_code == 200 and 'class="changed"' in r.text and filed["credit"]["year_one"] in r.text
    r = client.get("/claims/1/what-if", params={"show": "1", "option-carryforward_periods": "", "option-carryforward_periods-number": "many"})
    assert r.status_code == 422 and 'id="option-carryforward_periods-error"' in r.text
    with office.state.db.read() as s:
        assert s.execute(select(func.count()).select_from(Revision)).scalar_one() == revisions
    assert _det(office, 1) == filed


def test_form313_download_is_a_pdf(client):
    sign_in(client, "preparer")
    r = client.get("/claims/1/form313/0")
    assert r.status_code == 200 and r.content.startswith(b"%PDF") and "attachment" in r.headers["content-disposition"]
    assert client.get("/claims/1/form313/99").status_code == 404
