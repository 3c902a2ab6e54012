"""A credit's life through the pages alone, in headless Debian Chromium (Playwright) against uvicorn
(issue 15): filed from a payroll export, evidence requested (B1) and uploaded, approved, next year's
period added (the carryforward goes on and the refund R1 falls due), a past period amended, the refund
certified, the taxpayer's ledger read, a token made and revoked, the audit log read by an auditor.
At each step the page's figures are compared with the API's answer for the same claim.
Screenshots of each page go to QMCREDIT_SCREENSHOTS when it names a folder."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from .conftest import example_payroll, fill_header
from .test_e2e_browser import _sign_in, browser, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser
LIABILITY = "5000.00"  # room 2,500 a year (L2: half the tax, above the 2,000 minimum): year one carries forward


def _shot(page, name: str, whole: bool = True) -> None:
    """A screenshot at 1366x768, the whole page (or the first screen of a long one)."""
    folder = os.environ.get("QMCREDIT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=whole)


def _api(page, base: str, path: str):
    r = page.request.get(f"{base}/api/v1{path}")
    assert r.ok, (path, r.status, r.text()[:300])
    return r.json()


def _headline(page) -> dict[str, str]:
    return dict(zip(page.locator(".headline dt").all_inner_texts(), page.locator(".headline dd").all_inner_texts()))


def _after(page, figure: str, period: str | None = None) -> str:
    where = f'[data-period="{period}"]' if period else ""
    table = "#compare-periods" if period else "#compare-headline"
    return page.locator(f'{table} tr{where}[data-figure="{figure}"] td.after').inner_text()


def _sign_out(page) -> None:
    page.get_by_role("button", name="Sign out").click()


def test_a_credits_life_through_the_pages(server, browser):  # noqa: F811
    base, folder = server
    doc, payroll = example_payroll()
    doc["periods"] = [p | {"liability": LIABILITY} for p in doc["periods"][:2]]  # filed with year one's return
    (folder / "payroll.csv").write_text(payroll)
    (folder / "register.pdf").write_bytes(b"%PDF-1.4\n% payroll register, November 2003 to October 2004\n")
    context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    page = context.new_page()

    # filed from a payroll export (the upload page)
    _sign_in(page, base, "preparer")
    page.get_by_role("link", name="File a new claim from a payroll file").click()
    fill_header(page, doc)
    page.get_by_label("Payroll table").set_input_files(str(folder / "payroll.csv"))
    page.get_by_role("button", name="Read the file and preview").click()
    page.get_by_role("button", name="Submit the claim").click()
    page.wait_for_url("**/claims/*")
    claim_id = int(page.url.rsplit("/", 1)[1])
    filed = _api(page, base, f"/claims/{claim_id}")
    figures = _headline(page)
    assert figures["Credit, year one"] == filed["determination"]["credit"]["year_one"]
    assert figures["Carried forward, total"] == filed["determination"]["carried_forward"] != "0.00"
    _shot(page, "life-01-claim", whole=False)
    _sign_out(page)

    # the examiner starts the review and requests evidence of credit year one (B1)
    _sign_in(page, base, "examiner")
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_role("button", name="Start the review").click()
    page.get_by_label("Figure to prove").select_option("credit.year_one")
    page.get_by_label("What to send").fill("the payroll registers behind year one's positions")
    page.get_by_label("Figure to prove").scroll_into_view_if_needed()
    _shot(page, "life-02-request-evidence", whole=False)
    page.get_by_role("button", name="Request the evidence").click()
    page.wait_for_url("**/documents")
    [asked] = _api(page, base, f"/claims/{claim_id}/evidence-requests")
    assert asked["figure"] == "credit.year_one" and asked["answered_by_document_id"] is None
    assert "open" in page.locator("#requests").inner_text()
    _sign_out(page)

    # the preparer answers with a document citing the figure
    _sign_in(page, base, "preparer")
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_role("link", name="Documents and evidence requests").click()
    page.get_by_label("The file").set_input_files(str(folder / "register.pdf"))
    page.get_by_label("Kind").select_option("payroll_register")
    page.get_by_label("What it is").fill("payroll register, year one")
    page.get_by_role("button", name="Upload the document").click()
    [asked] = _api(page, base, f"/claims/{claim_id}/evidence-requests")
    documents = {d["id"]: d for d in _api(page, base, f"/claims/{claim_id}/documents")}
    answer = documents[asked["answered_by_document_id"]]
    assert answer["cites"] == ["credit.year_one"] and answer["kind"] == "payroll_register"
    assert f"document {answer['id']}" in page.locator("#requests").inner_text()
    assert "Credit, year one" in page.locator(f"#doc-{answer['id']}").inner_text()
    _shot(page, "life-03-documents")
    with page.expect_download() as info:
        page.get_by_role("link", name=f"Download register.pdf (document {answer['id']})").click()
    assert info.value.suggested_filename == "register.pdf"
    assert (folder / "register.pdf").read_bytes() == open(info.value.path(), "rb").read()
    _sign_out(page)

    # approved
    _sign_in(page, base, "examiner")
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_label("Approve").check()
    page.get_by_label("Reason: rule cited").select_option("B1")
    page.get_by_label("Reason in words").fill("the payroll register supports year one")
    page.get_by_role("button", name="Record the decision").click()
    assert _api(page, base, f"/claims/{claim_id}")["state"] == "approved"
    _sign_out(page)

    # next year's period: previewed (nothing stored), then stored as revision 2
    _sign_in(page, base, "preparer")
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_role("link", name="Add next year's period").click()
    assert page.get_by_label("Period starts").input_value() == "2005-01-01"
    assert page.get_by_label("Tax otherwise due").input_value() == LIABILITY
    page.get_by_label("Reason for the amendment").fill("the 2005 return")
    page.get_by_role("button", name="Preview the changes").click()
    assert _api(page, base, f"/claims/{claim_id}")["revision"] == 1
    refund_previewed = _after(page, "refund")
    assert _after(page, "refund", "2005-01-01") == refund_previewed != "0.00"  # R1: year two ends in 2005
    _shot(page, "life-04-next-period-preview")
    page.get_by_role("button", name="Store the amendment").click()
    page.wait_for_url(f"**/claims/{claim_id}")
    second = _api(page, base, f"/claims/{claim_id}")
    assert second["revision"] == 2 and second["state"] == "submitted"
    assert second["determination"]["refund"] == refund_previewed == _headline(page)["Refund, total"]

    # a past period amended: 2004's tax was higher, so more of year one was applied and less is refunded
    page.get_by_role("link", name="Amend the period starting 2004-01-01").click()
    page.get_by_label("Tax otherwise due").fill("6000.00")
    page.get_by_label("Reason for the amendment").fill("2004 return corrected")
    page.get_by_role("button", name="Preview the changes").click()
    assert _after(page, "applied", "2004-01-01") == "3000.00"
    assert page.locator('#compare-periods tr[data-period="2004-01-01"][data-figure="applied"]').get_attribute("class") == "changed"
    refund_previewed = _after(page, "refund")
    _shot(page, "life-05-amend-period-preview")
    page.get_by_role("button", name="Store the amendment").click()
    page.wait_for_url(f"**/claims/{claim_id}")
    third = _api(page, base, f"/claims/{claim_id}")
    assert third["revision"] == 3 and third["determination"]["refund"] == refund_previewed == _headline(page)["Refund, total"]
    reasons = [r["reason"] for r in _api(page, base, f"/claims/{claim_id}/revisions")]
    page.get_by_role("link", name="Amend the claim").click()
    assert '"taxpayer"' in page.get_by_label("The claim document").input_value()
    _shot(page, "life-05b-amend-claim")
    assert reasons[1:] == ["next period's return filed: the 2005 return", "period 2004-01-01 amended: 2004 return corrected"]
    _sign_out(page)

    # reviewed again, approved, the refund certified
    _sign_in(page, base, "examiner")
    page.goto(f"{base}/claims/{claim_id}")
    page.get_by_role("button", name="Start the review").click()
    page.get_by_label("Approve").check()
    page.get_by_role("button", name="Record the decision").click()
    page.get_by_role("button", name="Certify the refund").click()
    assert "Refund certified" in page.locator(".meta").inner_text()
    _sign_out(page)

    # the taxpayer's ledger, as the API has it
    _sign_in(page, base, "preparer")
    page.get_by_role("link", name="Taxpayers and ledgers").click()
    _shot(page, "life-06-taxpayers")
    page.get_by_role("link", name=f"Ledger of {doc['taxpayer']['name']}").click()
    book = _api(page, base, f"/taxpayers/{third['taxpayer_id']}/ledger")
    for origin, amount in book["carryforward_by_origin"].items():
        assert page.locator(f'#by-origin tr[data-origin="{origin}"] td').inner_text() == amount
    [refund] = book["refunds_certified"]
    assert refund["amount"] == third["determination"]["refund"]
    assert page.locator(f'#refunds tr[data-period="{refund["period_start"]}"] td.num').inner_text() == refund["amount"]
    assert page.locator("#totals dd").nth(2).inner_text() == book["refund_certified_total"]
    for p in book["periods"]:
        cells = page.locator(f'#periods tr[data-period="{p["period_start"]}"] td.num').all_inner_texts()
        assert cells[1:] == [p["allowed"], p["applied"], p["refund"], p["forfeited"], p["carried_forward"]]
    _shot(page, "life-07-ledger")

    # a token for the preparer's programs: shown once, signs in to the API, revoked signs in no more
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("payroll export")
    page.get_by_role("button", name="Make the token").click()
    token = page.get_by_label("Your new token").input_value()
    _shot(page, "life-08-token-made")
    bearer = {"authorization": f"Bearer {token}"}
    assert httpx.get(f"{base}/api/v1/me", headers=bearer).json()["username"] == "preparer"
    page.goto(f"{base}/tokens")
    assert token not in page.content()
    page.get_by_role("button", name="Revoke the token payroll export").click()
    assert "revoked" in page.locator("#tokens").inner_text()
    assert httpx.get(f"{base}/api/v1/me", headers=bearer).status_code == 401
    _sign_out(page)

    # the auditor reads the claim's audit log, and may make no token
    _sign_in(page, base, "auditor")
    page.get_by_role("link", name="Audit log").click()
    assert "is whole" in page.locator("#chain").inner_text()
    page.get_by_label("Claim").fill(str(claim_id))
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(f"**claim={claim_id}&**")  # the filtered page loaded, not the one before it
    shown = page.locator("#events tbody tr td:first-child").all_inner_texts()
    claim_events = _api(page, base, f"/audit?entity=claim&entity_id={claim_id}")
    assert {str(e["id"]) for e in claim_events} <= set(shown)
    actions = page.locator("#events tbody tr td:nth-child(4)").all_inner_texts()
    for action in ("claim.create", "evidence.request", "document.add", "claim.approve", "claim.amend", "claim.certify_refund"):
        assert action in actions, action
    _shot(page, "life-09-audit")
    page.get_by_label("Action").select_option("claim.amend")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**action=claim.amend**")
    assert page.locator("#events tbody tr").count() == 2
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url("**/tokens")
    assert page.get_by_role("button", name="Make the token").count() == 0
    _shot(page, "life-10-tokens-auditor")
    context.close()
