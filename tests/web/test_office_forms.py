"""The office's pages offer every period's Form 313 in one PDF (issue 16)."""

from __future__ import annotations

import re

from ..pages.conftest import client, office, sign_in  # noqa: F401  (the page tests' fixtures)
from .conftest import pdf_text


def test_claim_page_links_all_periods_in_one_pdf(client, tmp_path):  # noqa: F811
    sign_in(client, "preparer")
    page = client.get("/claims/1").text
    assert 'href="/claims/1/form313-all"' in page
    periods = re.findall(r"Form 313 for the period (\S+) to (\S+) \(PDF\)", page)
    assert periods
    r = client.get("/claims/1/form313-all")
    assert r.status_code == 200 and r.content.startswith(b"%PDF") and "all-periods" in r.headers["content-disposition"]
    text = pdf_text(r.content, tmp_path)
    for start, end in periods:
        assert f"tax period {start} to {end}" in text
    assert text.count("FORM 313") == len(periods)
