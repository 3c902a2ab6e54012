"""The pages of a credit's life after filing (issue 15), through FastAPI's TestClient as a browser
sends them (forms, CSRF, files), each compared with the API's answer: amending (previewed, nothing
stored until confirmed, refused when the claim moved on), next period and a past period, documents
and evidence requests (B1), the taxpayer's ledger, API tokens and the audit log."""

from __future__ import annotations

import html
import json
import re

import pytest
from fastapi.testclient import TestClient

from qmcredit.web.pages import audit as audit_page

from .conftest import EXAMPLE, csrf, sign_in

TAXPAYER = "22-7100001"


class Person:
    """A signed-in browser for one demo user, and the API through the same session."""

    def __init__(self, office, username: str):
        self.client = TestClient(office, headers={"accept": "text/html"})
        self.client.__enter__()
        sign_in(self.client, username)
        self.token = csrf(self.client.get("/claims").text)

    def get(self, path: str, **kw):
        return self.client.get(path, **kw)

    def post(self, path: str, data: dict | None = None, **kw):
        return self.client.post(path, data={"csrf": self.token, **(data or {})}, **kw)

    def api(self, path: str):
        r = self.client.get(f"/api/v1{path}", headers={"accept": "application/json"})
        assert r.status_code == 200, r.text
        return r.json()

    def close(self):
        self.client.__exit__(None, None, None)


@pytest.fixture
def people(office):
    made: dict[str, Person] = {}

    def person(username: str) -> Person:
        if username not in made:
            made[username] = Person(office, username)
        return made[username]

    yield person
    for p in made.values():
        p.close()


@pytest.fixture
def claim_id(people) -> int:
    """Example 03 filed (submitted) with year one's return: two periods, a tax of 5,000 each."""
    doc = json.loads(EXAMPLE.read_text())
    doc["taxpayer"] |= {"id": TAXPAYER, "name": "Cooper Street Press LLC"}
    doc["periods"] = [p | {"liability": "5000.00"} for p in doc["periods"][:2]]
    preparer = people("preparer")
    r = preparer.client.post("/api/v1/claims?submit=true", content=json.dumps(doc),
                             headers={"content-type": "application/json", "x-csrf-token": preparer.token})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _inputs(text: str) -> dict[str, str]:
    """The hidden and visible inputs of a page, by name (the last of a name wins)."""
    return {n: html.unescape(v) for n, v in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', text)}


def _after(text: str, figure: str, period: str | None = None) -> str:
    where = rf'data-period="{period}" ' if period else ""
    row = re.search(rf'<tr {where}data-figure="{re.escape(figure)}"[^>]*>(.*?)</tr>', text, re.S)[1]
    return re.search(r'class="num after">([^<]*)<', row)[1]


def _confirm(person: Person, claim_id: int, preview: str):
    fields = {k: v for k, v in _inputs(preview).items() if k in ("kind", "revision", "document", "amend_reason")}
    return person.post(f"/claims/{claim_id}/amend/confirm", fields)


def _approve(people, claim_id: int) -> None:
    examiner = people("examiner")
    examiner.post(f"/claims/{claim_id}/review")
    r = examiner.post(f"/claims/{claim_id}/decision", {"outcome": "approved"})
    assert r.status_code == 200 and examiner.api(f"/claims/{claim_id}")["state"] == "approved"


def test_next_period_is_previewed_storing_nothing_then_stored_as_the_api_would(people, claim_id):
    """Workflow: a decided claim amended by its preparer goes back as submitted; R1 falls due in the
    period in which credit year two ends, the next one here."""
    _approve(people, claim_id)
    preparer = people("preparer")
    form = preparer.get(f"/claims/{claim_id}/periods/new").text
    values = {k: v for k, v in _inputs(form).items() if k.startswith("p-")}
    assert values["p-start"] == "2005-01-01" and values["p-end"] == "2005-12-31" and values["p-liability"] == "5000.00"
    preview = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "next", **values, "reason": "the 2005 return"})
    assert preview.status_code == 200 and "nothing is stored yet" in preview.text
    assert preparer.api(f"/claims/{claim_id}")["revision"] == 1
    assert _after(preview.text, "refund") == _after(preview.text, "refund", "2005-01-01") == "2471.10"
    r = _confirm(preparer, claim_id, preview.text)
    assert r.status_code == 200 and r.url.path == f"/claims/{claim_id}"
    claim = preparer.api(f"/claims/{claim_id}")
    assert claim["revision"] == 2 and claim["state"] == "submitted"
    assert claim["determination"]["refund"] == "2471.10" and claim["determination"]["carried_forward"] == _after(preview.text, "carried_forward")
    assert preparer.api(f"/claims/{claim_id}/revisions")[-1]["reason"] == "next period's return filed: the 2005 return"


def test_a_past_period_amended_keeps_what_the_form_does_not_show(people, claim_id):
    preparer = people("preparer")
    form = preparer.get(f"/claims/{claim_id}/periods/2004-01-01").text
    values = {k: v for k, v in _inputs(form).items() if k.startswith("p-")} | {"p-liability": "6000.00"}
    preview = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "period", "period_start": "2004-01-01", **values})
    assert _after(preview.text, "applied", "2004-01-01") == "3000.00"
    assert re.search(r'data-period="2004-01-01" data-figure="applied" class="changed"', preview.text)
    assert _confirm(preparer, claim_id, preview.text).status_code == 200
    revision = preparer.api(f"/claims/{claim_id}/revisions/2")
    assert revision["reason"] == "period 2004-01-01 amended"
    assert [p["liability"] for p in revision["document"]["periods"]] == ["5000.00", "6000.00"]
    assert revision["document"]["periods"][1]["minimum_tax"] == "2000.00"
    missing = preparer.get(f"/claims/{claim_id}/periods/1999-01-01")
    assert missing.status_code == 404 and "2003-01-01, 2004-01-01" in missing.text


def test_whole_amendment_needs_a_reason_and_a_preview_of_an_older_revision_is_refused(people, claim_id):
    preparer = people("preparer")
    document = re.search(r'<textarea id="document"[^>]*>(.*?)</textarea>', preparer.get(f"/claims/{claim_id}/amend").text, re.S)[1]
    document = html.unescape(document).replace('"1100 Broadway"', '"1102 Broadway"')
    r = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "claim", "document": document})
    assert r.status_code == 422 and 'id="reason-error"' in r.text and "give the reason" in r.text
    preview = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "claim", "document": document, "reason": "address corrected"})
    assert preview.status_code == 200 and "No problems" in preview.text
    broken = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "claim", "document": document[:-3], "reason": "x"})
    assert broken.status_code == 422 and 'role="alert"' in broken.text
    assert _confirm(preparer, claim_id, preview.text).status_code == 200
    assert preparer.api(f"/locations/{preparer.api(f'/claims/{claim_id}')['location_id']}")["address"] == "1102 Broadway"
    again = _confirm(preparer, claim_id, preview.text)  # made from revision 1; the claim is at 2
    assert again.status_code == 409 and "amend its newest revision" in again.text
    assert preparer.api(f"/claims/{claim_id}")["revision"] == 2


def test_auditors_amend_nothing_and_a_form_without_its_token_is_refused(people, claim_id):
    auditor = people("auditor")
    page = auditor.get(f"/claims/{claim_id}").text
    assert "/amend" not in page and "/periods/new" not in page and f"/claims/{claim_id}/documents" in page
    r = auditor.post(f"/claims/{claim_id}/amend/preview", {"kind": "next", "p-start": "2005-01-01"})
    assert r.status_code == 403 and "auditors may not do this" in r.text
    preparer = people("preparer")
    r = preparer.client.post(f"/claims/{claim_id}/amend/confirm", data={"csrf": "forged", "kind": "next"})
    assert r.status_code == 403 and "form.csrf" in r.text


def test_evidence_requested_then_answered_by_a_document_citing_the_figure(people, claim_id):
    """B1: the examiner asks for evidence of a figure; a document citing it answers the request."""
    examiner, preparer = people("examiner"), people("preparer")
    examiner.post(f"/claims/{claim_id}/review")
    claim_page = examiner.get(f"/claims/{claim_id}").text
    assert "Or request evidence first" in claim_page and 'value="credit.year_one">Credit, year one' in claim_page
    r = examiner.post(f"/claims/{claim_id}/evidence-requests", {"figure": "credit.year_one", "rule": "B1", "message": "registers"})
    assert r.status_code == 200 and r.url.path == f"/claims/{claim_id}/documents"
    [asked] = examiner.api(f"/claims/{claim_id}/evidence-requests")
    page = preparer.get(f"/claims/{claim_id}/documents").text
    assert "<strong>open</strong>" in page and 'name="cites" value="credit.year_one" checked' in page

    content = b"%PDF-1.4\n% register\n"
    bad = preparer.post(f"/claims/{claim_id}/documents", {"kind": "payroll_register", "cites_typed": "credit.year_three"},
                        files={"file": ("register.pdf", content, "application/pdf")})
    assert bad.status_code == 422 and "cites[0]" in bad.text and "credit.year_three" in bad.text
    r = preparer.post(f"/claims/{claim_id}/documents", {"kind": "payroll_register", "description": "year one",
                                                      "cites": "credit.year_one", "cites_typed": "periods[1].applied"},
                      files={"file": ("register.pdf", content, "application/pdf")})
    assert r.status_code == 200
    [answered] = preparer.api(f"/claims/{claim_id}/evidence-requests")
    doc = preparer.api(f"/documents/{answered['answered_by_document_id']}")
    assert answered["id"] == asked["id"] and doc["cites"] == ["credit.year_one", "periods[1].applied"]
    assert f'href="#doc-{doc["id"]}">document {doc["id"]}' in r.text and "Period from 2004-01-01, applied" in r.text
    download = preparer.get(f"/documents/{doc['id']}/download")
    assert download.content == content and download.headers["etag"] == f'"{doc["sha256"]}"'
    assert 'filename="register.pdf"' in download.headers["content-disposition"]

    auditor = people("auditor")
    assert 'id="upload-form"' not in auditor.get(f"/claims/{claim_id}/documents").text
    r = auditor.post(f"/claims/{claim_id}/documents", {"kind": "lease"}, files={"file": ("l.pdf", b"x", "application/pdf")})
    assert r.status_code == 403
    assert preparer.post(f"/claims/{claim_id}/evidence-requests", {"figure": "credit.year_one"}).status_code == 403
    assert people("preparer2").get(f"/documents/{doc['id']}/download").status_code == 404


def test_a_document_named_in_any_script_is_downloaded_under_its_own_name(people, claim_id):
    """A document uploaded as ``../租约 2005.pdf`` (a name a header cannot hold as it is, with a
    folder in front) is downloaded, from its page and from the API, under that name (RFC 8187's
    ``filename*``) and a plain ASCII one, never its folder; it gave the page's download a 500."""
    from urllib.parse import quote

    preparer = people("preparer")
    r = preparer.post(f"/claims/{claim_id}/documents", {"kind": "lease", "cites": "location.operations_began"},
                      files={"file": ("../租约 2005.pdf", b"%PDF-1.4 lease", "application/pdf")})
    assert r.status_code == 200
    doc = [d for d in preparer.api(f"/claims/{claim_id}/documents") if d["filename"].endswith("租约 2005.pdf")][-1]
    for path in (f"/documents/{doc['id']}/download", f"/api/v1/documents/{doc['id']}/content"):
        got = preparer.get(path)
        assert got.status_code == 200 and got.content == b"%PDF-1.4 lease", path
        assert got.headers["content-disposition"] == f"attachment; filename=\"2005.pdf\"; filename*=UTF-8''{quote('租约 2005.pdf', safe='')}"


def test_a_latin_name_keeps_its_letters_in_the_plain_name(people, claim_id):
    """The plain ASCII name of ``Łódź Straße.pdf`` dropped the letters Unicode does not decompose
    (``odz Strae.pdf``); they are spelled plainly (``Lodz Strasse.pdf``)."""
    from urllib.parse import quote

    preparer = people("preparer")
    r = preparer.post(f"/claims/{claim_id}/documents", {"kind": "lease", "cites": "location.operations_began"},
                      files={"file": ("Łódź Straße.pdf", b"%PDF-1.4 lease", "application/pdf")})
    assert r.status_code == 200
    doc = [d for d in preparer.api(f"/claims/{claim_id}/documents") if d["filename"] == "Łódź Straße.pdf"][-1]
    got = preparer.get(f"/api/v1/documents/{doc['id']}/content")
    assert got.headers["content-disposition"] == f"attachment; filename=\"Lodz Strasse.pdf\"; filename*=UTF-8''{quote('Łódź Straße.pdf', safe='')}"


def test_the_ledger_page_shows_the_apis_ledger_with_the_refund_certified(people, claim_id):
    """L4, L6, R1: balances by year of origin, the return's periods, the refund certified."""
    preparer = people("preparer")
    values = {k: v for k, v in _inputs(preparer.get(f"/claims/{claim_id}/periods/new").text).items() if k.startswith("p-")}
    _confirm(preparer, claim_id, preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "next", **values}).text)
    _approve(people, claim_id)
    assert people("examiner").post(f"/claims/{claim_id}/certify-refund").status_code == 200
    taxpayer = preparer.api(f"/claims/{claim_id}")["taxpayer_id"]
    book = preparer.api(f"/taxpayers/{taxpayer}/ledger")
    page = preparer.get(f"/taxpayers/{taxpayer}/ledger").text
    for origin, amount in book["carryforward_by_origin"].items():
        assert re.search(rf'data-origin="{origin}"><th scope="row">[^<]*</th><td class="num">{amount}</td>', page)
    for p in book["periods"]:
        row = re.search(rf'<tr data-period="{p["period_start"]}">(.*?)</tr>', page, re.S)[1]
        assert re.findall(r'<td class="num">([^<]*)</td>', row)[1:] == [p["allowed"], p["applied"], p["refund"], p["forfeited"], p["carried_forward"]]
    [refund] = book["refunds_certified"]
    assert refund["amount"] == "2471.10" and f'<td class="num">{refund["amount"]}</td>' in page
    assert f'<dd>{book["refund_certified_total"]}</dd>' in page
    assert f"/taxpayers/{taxpayer}/ledger" in preparer.get("/taxpayers").text
    other = people("preparer2")
    assert f"/taxpayers/{taxpayer}/ledger" not in other.get("/taxpayers").text
    assert other.get(f"/taxpayers/{taxpayer}/ledger").status_code == 404


def test_a_token_is_shown_once_signs_in_and_revoked_signs_in_no_more(people, office):
    preparer = people("preparer")
    r = preparer.post("/tokens", {"name": "payroll export", "days": "30"})
    token = re.search(r'id="new-token"[^>]*value="(qmc_[^"]+)"', r.text)[1]
    assert r.status_code == 201 and token not in preparer.get("/tokens").text
    with TestClient(office) as program:
        assert program.get("/api/v1/me", headers={"authorization": f"Bearer {token}"}).json()["username"] == "preparer"
        token_id = re.search(r'action="/tokens/(\d+)/revoke"', r.text)[1]
        assert people("examiner").post(f"/tokens/{token_id}/revoke").status_code == 404  # not the examiner's
        assert preparer.post(f"/tokens/{token_id}/revoke").status_code == 200
        assert program.get("/api/v1/me", headers={"authorization": f"Bearer {token}"}).status_code == 401
    assert "revoked" in re.search(r'<table class="list" id="tokens">(.*?)</table>', preparer.get("/tokens").text, re.S)[1]
    bad = preparer.post("/tokens", {"name": "", "days": "900"})
    assert bad.status_code == 422 and "<code>name</code>" in bad.text and "<code>days</code>" in bad.text
    auditor = people("auditor")
    assert "Make the token" not in auditor.get("/tokens").text
    assert auditor.post("/tokens", {"name": "x", "days": "30"}).status_code == 403


def test_the_audit_log_is_for_examiners_and_auditors_filtered_paged_and_verified(people, claim_id, monkeypatch):
    assert people("preparer").get("/audit").status_code == 403
    auditor = people("auditor")
    page = auditor.get(f"/audit?claim={claim_id}").text
    assert "is whole" in page
    shown = re.findall(r"<tr><td>(\d+)</td>", page)
    assert {str(e["id"]) for e in auditor.api(f"/audit?entity=claim&entity_id={claim_id}")} == set(shown)
    page = auditor.get("/audit?action=claim.create&user=preparer").text
    assert set(re.findall(r"<td>(claim\.\w+|[a-z_]+\.\w+)</td>", page)) == {"claim.create"}
    monkeypatch.setattr(audit_page, "PAGE_SIZE", 5)
    first, second = auditor.get("/audit").text, auditor.get("/audit?page=2").text
    assert "Older →" in first and "← Newer" in second
    assert not set(re.findall(r"<tr><td>(\d+)</td>", first)) & set(re.findall(r"<tr><td>(\d+)</td>", second))
    assert '0 events' in auditor.get("/audit?since=2999-01-01").text
    bad = auditor.get("/audit?since=2020-13-01&claim=x")
    assert bad.status_code == 422 and "<code>since</code>" in bad.text and "<code>claim</code>" in bad.text


def test_the_navigation_offers_each_role_its_pages(people):
    nav = {u: re.search(r'<nav aria-label="Main">(.*?)</nav>', people(u).get("/claims").text, re.S)[1]
           for u in ("preparer", "examiner", "auditor")}
    assert all("/taxpayers" in n and "/tokens" in n for n in nav.values())
    assert "/audit" not in nav["preparer"] and "/audit" in nav["examiner"] and "/audit" in nav["auditor"]


def test_a_whole_amendment_with_a_new_payroll_file_stores_the_file_previewed(people, claim_id):
    """The file a preview read is carried to the step that stores it (``carried_payroll.html``) as it
    was uploaded: the stored revision keeps those bytes as its payroll table."""
    preparer = people("preparer")
    document = re.search(r'<textarea id="document"[^>]*>(.*?)</textarea>', preparer.get(f"/claims/{claim_id}/amend").text, re.S)[1]
    doc = json.loads(html.unescape(document))
    lines = ["employee_id,month,hours,basis"]
    for e in doc.pop("employees"):
        lines += [f"{e['id']},{month},{hours},{e['basis']}" for month, hours in sorted(e["hours"].items())]
    table = "\n".join(lines) + "\n"
    preview = preparer.post(f"/claims/{claim_id}/amend/preview", {"kind": "claim", "document": json.dumps(doc), "reason": "payroll as exported"},
                            files={"payroll": ("export.csv", table, "text/csv")})
    assert preview.status_code == 200 and "No problems" in preview.text, preview.text[-2000:]
    carried = _inputs(preview.text)
    assert (carried["payroll_name"], carried["payroll_type"], carried["payroll_mapping"]) == ("export.csv", "text/csv", "")
    fields = {k: carried[k] for k in ("kind", "revision", "document", "amend_reason", "payroll_name", "payroll_type", "payroll_b64", "payroll_mapping")}
    assert preparer.post(f"/claims/{claim_id}/amend/confirm", fields).status_code == 200
    revision = preparer.api(f"/claims/{claim_id}/revisions/2")
    assert revision["document"]["payroll"] == "export.csv" and revision["payroll_document_id"] is not None
    stored = preparer.get(f"/documents/{revision['payroll_document_id']}/download")
    assert stored.status_code == 200 and stored.content == table.encode()
