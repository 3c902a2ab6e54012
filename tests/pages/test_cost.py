"""The office's cost page (issue 17 item 5), through its doors: the page as examiners and auditors
open it (preparers may not), its fiscal-year table against the stored claims' ledgers, refunds
certified by an examiner through the API, and a reform run over the stored claims (one of the
office's files by name, or an upload read by the strict parser)."""

from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from qmcredit.analysis.cost import fiscal_year
from qmcredit.service.models import Claim, LedgerEntry, Revision
from qmcredit.service.seed import seed

from .conftest import csrf, sign_in

REFORM = b'''name = "uploaded_share"
description = "40% of the tax instead of 50%"

[[change]]
name = "Share 40%"
parameter = "credit_limit_share"
from = "2000-01-01"
value = "0.40"
source = "test"
cite = "tests/pages/test_cost.py"
'''


def _table(html: str, caption: str) -> list[list[str]]:
    """The cells of the table with ``caption``, row by row."""
    body = re.search(rf'<caption class="sr-only">{re.escape(caption)}</caption>.*?<tbody>(.*?)</tbody>', html, re.S)[1]
    return [[unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def _ledger_by_fiscal_year(office) -> dict[int, dict[str, Decimal]]:
    """The stored ledger entries of the claims' current revisions (filed, not denied), by the
    fiscal year in which each period ends: what the page must show."""
    out: dict[int, dict[str, Decimal]] = {}
    with office.state.db.read() as session:
        rows = session.execute(select(LedgerEntry).join(Revision, Revision.id == LedgerEntry.revision_id)
                               .join(Claim, (Claim.id == Revision.claim_id) & (Claim.revision == Revision.number))
                               .where(Claim.duplicate_of.is_(None), Claim.state.not_in(("draft", "denied")))).scalars().all()
    for r in rows:
        y = out.setdefault(fiscal_year(r.period_end), dict.fromkeys(("allowed", "applied", "refund", "forfeited"), Decimal("0.00")))
        for k in y:
            y[k] += getattr(r, k)
    return out


def test_the_cost_so_far_by_fiscal_year_adds_up_to_the_stored_ledgers(client, office):
    """L4, R1, L5 by fiscal year (July-June, by the period's end), as the page shows them."""
    html = sign_in(client, "examiner").get("/cost").text
    want = _ledger_by_fiscal_year(office)
    rows = _table(html, "Cost so far by fiscal year")
    shown = {int(r[0]): [Decimal(x) for x in r[1:5]] for r in rows}
    assert {y: v for y, v in shown.items() if any(v) or y in want} == {  # the ledger stores no entry for a quiet period
        y: [v["allowed"], v["applied"], v["refund"], v["forfeited"]] for y, v in want.items()}
    for r in rows:
        assert Decimal(r[6]) == Decimal(r[2]) + Decimal(r[3])  # cost = applied + refunded
    total = sum(v["applied"] + v["refund"] for v in want.values())
    assert f"${total}" in html and "<svg" in html and "<script" not in html


def test_refunds_certified_by_an_examiner_are_shown_by_fiscal_year(office, tmp_path):
    """R1 certified through the API: the page's certified column and total."""
    tokens = seed(office.state.db).tokens
    with TestClient(office) as api:
        auth = {"authorization": f"Bearer {tokens['examiner']}"}
        cid = next(c["id"] for c in api.get("/api/v1/claims", headers=auth).json()
                   if api.get(f"/api/v1/claims/{c['id']}", headers=auth).json()["determination"]["refund"] not in (None, "0.00"))
        for path, body in (("review", None), ("decision", {"outcome": "approved", "reasons": [{"rule": "R1", "message": "checked"}]}),
                           ("refund-certification", None)):
            r = api.post(f"/api/v1/claims/{cid}/{path}", headers=auth, json=body)
            assert r.status_code == 200, r.text
        refund = r.json()["determination"]["refund"]
    with TestClient(office, headers={"accept": "text/html"}) as client:
        html = sign_in(client, "auditor").get("/cost").text
    certified = [r for r in _table(html, "Refunds by fiscal year") if Decimal(r[2])]
    assert [Decimal(r[2]) for r in certified] == [Decimal(refund)] and certified[0][1] == certified[0][2]
    states = {r[0]: r for r in _table(html, "Claims by status")}
    assert states["Refund certified"][1] == "yes" and states["Refund certified"][2] == "1"


def test_preparers_may_not_see_the_program_s_cost(client):
    r = sign_in(client, "preparer").get("/cost")
    assert r.status_code == 403 and "examiners and auditors" in r.text
    assert "Cost so far" not in r.text


@pytest.mark.parametrize("who", ["examiner", "auditor"])
def test_a_listed_reform_runs_over_the_stored_claims(client, who):
    """A reform that changes nothing gives the baseline; double amounts (C2) gain."""
    sign_in(client, who)
    same = client.get("/cost?reform=nothing").text
    totals = {r[0]: r[1:] for r in _table(same, "Totals, baseline and reform")}
    assert all(base == reform for base, reform in totals.values()), totals
    assert _table(same, "Claims by change")[0][1] == _table(same, "Claims by change")[0][0]  # all the same
    doubled = client.get("/cost?reform=double_amounts").text
    totals = {r[0]: r[1:] for r in _table(doubled, "Totals, baseline and reform")}
    assert Decimal(totals["credit"][1]) > Decimal(totals["credit"][0])
    so_far = re.search(r"<strong>Cost so far</strong><br><span class=\"big\">\$([0-9.]+)", doubled)[1]
    assert Decimal(totals["cost"][0]) == Decimal(so_far)  # the claims decided again: the stored determinations


def test_a_reform_is_chosen_by_its_name_never_by_a_path(client):
    sign_in(client, "examiner")
    for name in ("../../pyproject", "/etc/passwd", "missing"):
        r = client.get("/cost", params={"reform": name})
        assert r.status_code == 422 and "is not one of the office&#39;s reform files" in r.text, name


def test_an_uploaded_reform_is_read_by_the_strict_parser(client):
    html = sign_in(client, "examiner").get("/cost").text
    token = csrf(html)
    r = client.post("/cost", data={"csrf": token}, files={"reform_file": ("share.toml", REFORM, "text/plain")})
    assert r.status_code == 200 and "uploaded_share" in r.text
    totals = {row[0]: row[1:] for row in _table(r.text, "Totals, baseline and reform")}
    assert Decimal(totals["applied"][1]) <= Decimal(totals["applied"][0])
    bad = REFORM.replace(b'value = "0.40"', b"value = 0.40")
    r = client.post("/cost", data={"csrf": token}, files={"reform_file": ("share.toml", bad, "text/plain")})
    assert r.status_code == 422 and "change[0].value" in r.text
    r = client.post("/cost", data={"csrf": "wrong"}, files={"reform_file": ("share.toml", REFORM, "text/plain")})
    assert r.status_code == 403
