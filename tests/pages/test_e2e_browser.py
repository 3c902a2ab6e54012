"""End to end in headless Debian Chromium (Playwright) against a real uvicorn server on 127.0.0.1:
a preparer signs in, uploads a payroll CSV with an error, sees the problem, uploads the fixed file,
submits; an examiner reviews and approves with a reason; Form 313 downloads and pdftotext reads the
credit back. Screenshots go to QMCREDIT_SCREENSHOTS when it names a folder."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from qmcredit.service.db import Database, migrate
from qmcredit.service.seed import DEMO_PASSWORD, seed

from .conftest import example_payroll, fill_header

pytestmark = pytest.mark.browser
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _need(tool: str | None, why: str) -> str:
    if tool:
        return tool
    if os.environ.get("QMCREDIT_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{why}, and QMCREDIT_REQUIRE_SERVICES=1 requires it")
    pytest.skip(why)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("e2e")
    url = f"sqlite:///{folder / 'e2e.sqlite3'}"
    db = Database(url)
    migrate(db.engine)
    seed(db)
    db.dispose()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "QMCREDIT_DATABASE_URL": url, "QMCREDIT_SESSION_SECRET": "e2e-secret"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "qmcredit.service.app:app_from_env",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("the service did not start")
        yield base, folder
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    executable = _need(os.environ.get("QMCREDIT_CHROMIUM") or shutil.which("chromium"), "Debian chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS)
        yield b
        b.close()


def _shot(page, name: str) -> None:
    folder = os.environ.get("QMCREDIT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _sign_in(page, base: str, username: str) -> None:
    page.goto(base + "/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/claims")


def test_preparer_files_from_payroll_examiner_approves_form313_downloads(server, browser):
    pdftotext = _need(shutil.which("pdftotext"), "pdftotext (poppler-utils) is not installed")
    base, folder = server
    doc, good = example_payroll()
    bad = example_payroll(broken=True)[1]
    (folder / "payroll.csv").write_text(bad)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    page = context.new_page()

    _sign_in(page, base, "preparer")
    _shot(page, "01-claims")
    page.get_by_role("link", name="File a new claim from a payroll file").click()
    fill_header(page, doc)
    page.get_by_label("Payroll table").set_input_files(str(folder / "payroll.csv"))
    _shot(page, "02-new-claim")
    page.get_by_role("button", name="Read the file and preview").click()
    alert = page.get_by_role("alert")
    assert "2004-13" in alert.inner_text() and "line 4" in alert.inner_text()
    assert "2004-13" in page.locator("#payroll-error").inner_text()
    _shot(page, "03-preview-problem")

    (folder / "payroll.csv").write_text(good)  # fixing = choosing the corrected file
    page.get_by_label("Payroll table").set_input_files(str(folder / "payroll.csv"))
    page.get_by_role("button", name="Read the file and preview").click()
    assert "No problems" in page.get_by_role("status").inner_text()
    _shot(page, "04-preview-ok")
    page.get_by_role("button", name="Submit the claim").click()
    page.wait_for_url("**/claims/*")
    claim_url = page.url
    assert "Submitted" in page.locator(".meta").inner_text()
    credit = page.locator(".headline dd").first.inner_text()
    _shot(page, "05-claim")
    page.get_by_role("button", name="Sign out").click()

    _sign_in(page, base, "examiner")
    page.get_by_role("link", name="Review queue").first.click()
    _shot(page, "06-queue")
    page.get_by_role("link", name=f"Review claim {claim_url.rsplit('/', 1)[1]}").click()
    page.get_by_role("button", name="Start the review").click()
    page.get_by_label("Approve").check()
    page.get_by_label("Reason: rule cited").select_option("B1")
    page.get_by_label("Reason in words").fill("payroll registers reconcile with the quarterly WR-30 filings")
    _shot(page, "07-decide")
    page.get_by_role("button", name="Record the decision").click()
    assert "Approved" in page.locator(".meta").inner_text()
    assert "WR-30" in page.locator("#history").inner_text()

    page.locator("#fig-credit-year-one summary").click()
    assert "Reading of the statute" in page.locator("#fig-credit-year-one").inner_text()
    _shot(page, "08-approved")
    with page.expect_download() as info:
        page.get_by_role("link", name="Form 313 for the period").nth(1).click()
    pdf = folder / "form313.pdf"
    info.value.save_as(pdf)
    text = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert credit in text
    context.close()
