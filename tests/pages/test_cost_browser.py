"""The cost page in headless Chromium (issue 17 item 5): an examiner opens it, sees the cost so far
and its chart, runs a listed reform and uploads another; a preparer is refused. Screenshots go to
QMCREDIT_SCREENSHOTS when it names a folder."""

from __future__ import annotations

import pytest

from .test_e2e_browser import _shot, _sign_in, browser, server  # noqa: F401 (fixtures)
from .test_cost import REFORM

pytestmark = pytest.mark.browser


def test_an_examiner_runs_reforms_over_the_stored_claims(server, browser):  # noqa: F811
    base, folder = server
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    _sign_in(page, base, "examiner")
    page.goto(base + "/cost")
    assert page.get_by_role("heading", name="Cost of the program").is_visible()
    chart = page.get_by_role("img", name="Cost so far by fiscal year (applied + refunded)")
    assert chart.is_visible() and chart.bounding_box()["width"] > 600
    assert page.locator(".card", has_text="Cost so far").first.is_visible()
    _shot(page, "cost-01-so-far")

    page.get_by_label("A reform file of the office").select_option("double_amounts")
    page.get_by_role("button", name="Run this reform").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="double_amounts").is_visible()
    assert page.get_by_role("img", name="Cost by fiscal year: baseline and double_amounts").is_visible()
    assert "gain" in page.get_by_role("table", name="Claims by change").inner_text()
    _shot(page, "cost-02-reform")

    (folder / "share.toml").write_bytes(REFORM)
    page.get_by_label("Or upload a reform file (TOML)").set_input_files(str(folder / "share.toml"))
    page.get_by_role("button", name="Upload and run").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="uploaded_share").is_visible()
    (folder / "bad.toml").write_bytes(REFORM.replace(b'value = "0.40"', b"value = 0.40"))
    page.get_by_label("Or upload a reform file (TOML)").set_input_files(str(folder / "bad.toml"))
    page.get_by_role("button", name="Upload and run").click()
    assert "change[0].value" in page.get_by_role("alert").inner_text()
    _shot(page, "cost-03-bad-upload")
    page.get_by_role("button", name="Sign out").click()

    _sign_in(page, base, "preparer")
    page.goto(base + "/cost")
    assert "examiners and auditors" in page.get_by_role("heading").first.inner_text()
    context.close()
