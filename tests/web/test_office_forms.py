"""The office's pages offer every period's Form 313 in one PDF (issue 16)."""

from __future__ import annotations

import re
from decimal import Decimal

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


def test_a_location_of_a_return_prints_its_share_under_the_one_room(office, client, tmp_path):  # noqa: F811
    """L6 through the office's pages: example 07's two locations filed as two claims of one taxpayer;
    each claim's Form 313 PDF is its location's under the return's room (2011: 3,428.57 and
    2,571.43 of 6,000.00, line 16 naming the other location's credit), as the API's form gives it;
    the worksheet shows how the room was shared."""
    from sqlalchemy import select

    from qmcredit.service.auth import issue_token
    from qmcredit.service.models import User
    from qmcredit.service.taxreturn import location_documents

    from ..conftest import example_file
    from .test_form313_locations import printed_lines

    token = office.state.db.write(lambda s: issue_token(s, s.scalar(select(User).where(User.username == "preparer")), "tests"))
    bearer = {"Authorization": f"Bearer {token}", "accept": "application/json"}
    ids = []
    for body in location_documents((example_file("next/07-two-locations-shared-room")).read_text()):
        r = client.post("/api/v1/claims", content=body.encode(), headers={**bearer, "content-type": "application/json"})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    sign_in(client, "preparer")
    for claim_id, share in zip(ids, ("3428.57", "2571.43")):
        api = client.get(f"/api/v1/claims/{claim_id}/form313/2011-01-01", headers=bearer).json()["part_iv"]
        r = client.get(f"/claims/{claim_id}/form313-all")
        assert r.status_code == 200, r.text[:500]
        printed = printed_lines(pdf_text(r.content, tmp_path))
        assert {loc for loc, _ in printed} == {f"claim-{claim_id}"}, "this location's forms only"
        lines = printed[(f"claim-{claim_id}", "2011-01-01")]
        assert (lines["16"], lines["17"], lines["18"]) == (api["line_16_total"], api["allowable_credit"], share) == \
            (str(Decimal("6000.00") - Decimal(share)), share, share)
    sheet = " ".join(pdf_text(client.get(f"/claims/{ids[0]}/worksheet").content, tmp_path).split())
    assert "How the room of each period was shared (rule L6)" in sheet
