"""The life of a claim: draft → submitted → under review → approved, adjusted or denied →
refund certified; amendments and next year's return keep the history and the ledger lasts."""

from __future__ import annotations

import json
from datetime import date, timedelta
from decimal import Decimal

from .conftest import example


def _post(office, who, path, **kw):
    return office.client.post(path, headers=office.auth(who), **kw)


def _claim(office, name="02", submit=True):
    r = _post(office, "preparer", f"/api/v1/claims?submit={'true' if submit else 'false'}", content=example(name))
    assert r.status_code == 201, r.text
    return r.json()


def test_draft_to_refund_certified(office):
    c = _claim(office, "02", submit=False)
    cid = c["id"]
    assert c["state"] == "draft"
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/review").status_code == 409  # not submitted yet
    assert _post(office, "preparer", f"/api/v1/claims/{cid}/submit").json()["state"] == "submitted"
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/review").json()["state"] == "under_review"
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/decision", json={"outcome": "approved", "reasons": [
        {"rule": "B1", "message": "payroll registers reconcile"}]})
    assert r.status_code == 200 and r.json()["state"] == "approved"
    refund = r.json()["determination"]["refund"]
    assert refund != "0.00"
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/refund-certification")
    assert r.status_code == 200 and r.json()["state"] == "refund_certified"
    ledger = office.client.get(f"/api/v1/taxpayers/{c['taxpayer_id']}/ledger", headers=office.auth("preparer")).json()
    assert ledger["refund_certified_total"] == refund
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/refund-certification").status_code == 409
    actions = [e["action"] for e in office.client.get("/api/v1/audit?entity=claim", headers=office.auth("auditor")).json()]
    assert actions == ["claim.create", "claim.submit", "claim.start_review", "claim.approve", "claim.certify_refund"]


def test_denial_needs_reasons_citing_rule_ids(office):
    cid = _claim(office, "01")["id"]
    _post(office, "examiner", f"/api/v1/claims/{cid}/review")
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/decision", json={"outcome": "denied"})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "reasons"
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/decision", json={"outcome": "denied", "reasons": [{"rule": "Z9", "message": "x"}]})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "body.reasons[0].rule"
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/decision",
              json={"outcome": "denied", "reasons": [{"rule": "E3", "message": "receives a UEZ benefit"}]})
    assert r.status_code == 200 and r.json()["state"] == "denied"
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/refund-certification").status_code == 409


def test_examiner_adjusts_by_amending_then_deciding(office):
    c = _claim(office, "01")
    cid = c["id"]
    doc = json.loads(example("01"))
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/decision",
                 json={"outcome": "adjusted", "reasons": [{"rule": "P2", "message": "x"}]}).status_code == 409
    _post(office, "examiner", f"/api/v1/claims/{cid}/review")
    # the preparer cannot change a claim under review
    assert office.client.put(f"/api/v1/claims/{cid}", content=example("01"), headers=office.auth("preparer")).status_code == 409
    text = example("01").decode().replace('"basis": "permanent"', '"basis": "temporary"', 1)  # S0 was temporary
    r = office.client.put(f"/api/v1/claims/{cid}?reason=S0+is+temporary", content=text, headers=office.auth("examiner"))
    assert r.status_code == 200, r.text
    assert r.json()["revision"] == 2 and r.json()["state"] == "under_review"
    assert r.json()["determination"]["average_positions"] != c["determination"]["average_positions"]
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/decision",
              json={"outcome": "adjusted", "reasons": [{"rule": "P2", "message": "S0 was temporary, never full-time"}]})
    assert r.status_code == 200 and r.json()["state"] == "adjusted"
    revs = office.client.get(f"/api/v1/claims/{cid}/revisions", headers=office.auth("auditor")).json()
    assert [(v["number"], v["author"]) for v in revs] == [(1, "preparer"), (2, "examiner")]
    first = office.client.get(f"/api/v1/claims/{cid}/revisions/1", headers=office.auth("auditor")).json()
    assert first["determination"]["average_positions"] == c["determination"]["average_positions"]
    assert first["document"]["employees"][0]["basis"] == doc["employees"][0]["basis"]


def test_next_years_return_and_an_amended_past_period(office):
    c = _claim(office, "01")
    cid, tp = c["id"], c["taxpayer_id"]
    periods = c["determination"]["periods"]
    ledger0 = office.client.get(f"/api/v1/taxpayers/{tp}/ledger", headers=office.auth("preparer")).json()
    left = ledger0["carryforward_by_origin"]
    assert sum(map(Decimal, left.values())) == Decimal(c["determination"]["carried_forward"])
    # next year's return: the carryforward goes on from what was left
    nxt = {"start": "2008-01-01", "end": "2008-12-31", "liability": "4000.00", "minimum_tax": "2000.00"}
    r = _post(office, "preparer", f"/api/v1/claims/{cid}/periods", json=nxt)
    assert r.status_code == 200, r.text
    after = r.json()["determination"]
    assert len(after["periods"]) == len(periods) + 1
    assert after["periods"][-1]["applied"] == "1714.29"  # what 2007 left, within 2008's room of 2000.00
    # amend 2005: a lower liability leaves less room, so more is carried into the following years
    amended = {"start": "2005-01-01", "end": "2005-12-31", "liability": "12000.00", "minimum_tax": "2000.00"}
    r = office.client.put(f"/api/v1/claims/{cid}/periods/2005-01-01", json=amended, headers=office.auth("preparer"))
    assert r.status_code == 200, r.text
    det = r.json()["determination"]
    assert det["periods"][1]["applied"] == "6000.00"
    assert det["periods"][0] == after["periods"][0]  # what came before is untouched
    assert det["periods"][2]["applied"] != after["periods"][2]["applied"] or det["periods"][3] != after["periods"][3]
    revs = office.client.get(f"/api/v1/claims/{cid}/revisions", headers=office.auth("preparer")).json()
    assert [v["number"] for v in revs] == [1, 2, 3]
    ledger = office.client.get(f"/api/v1/taxpayers/{tp}/ledger", headers=office.auth("preparer")).json()
    assert {e["period_start"] for e in ledger["entries"]} >= {"2005-01-01", "2008-01-01"}
    assert [e["applied"] for e in ledger["entries"] if e["period_start"] == "2005-01-01"] == ["6000.00"]
    r = office.client.put(f"/api/v1/claims/{cid}/periods/2001-01-01", json=amended, headers=office.auth("preparer"))
    assert r.status_code == 404 and r.json()["problems"][0]["location"] == "period_start"


def test_a_certified_refund_stands_when_next_years_return_is_filed(office):
    c = _claim(office, "02")
    cid = c["id"]
    _post(office, "examiner", f"/api/v1/claims/{cid}/review")
    _post(office, "examiner", f"/api/v1/claims/{cid}/decision", json={"outcome": "approved"})
    assert _post(office, "examiner", f"/api/v1/claims/{cid}/refund-certification").status_code == 200
    start = date.fromisoformat(c["determination"]["periods"][-1]["end"]) + timedelta(days=1)
    end = start.replace(year=start.year + 1) - timedelta(days=1)
    nxt = {"start": start.isoformat(), "end": end.isoformat(), "liability": "9000.00", "minimum_tax": "500.00"}
    r = _post(office, "preparer", f"/api/v1/claims/{cid}/periods", json=nxt)
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "submitted" and r.json()["revision"] == 2
    _post(office, "examiner", f"/api/v1/claims/{cid}/review")
    _post(office, "examiner", f"/api/v1/claims/{cid}/decision", json={"outcome": "approved"})
    r = _post(office, "examiner", f"/api/v1/claims/{cid}/refund-certification")
    assert r.status_code == 200, r.text  # the same refund, certified once
    ledger = office.client.get(f"/api/v1/taxpayers/{c['taxpayer_id']}/ledger", headers=office.auth("auditor")).json()
    assert len(ledger["refunds_certified"]) == 1 and ledger["refund_certified_total"] == c["determination"]["refund"]


def test_register_a_taxpayer_before_filing(office):
    r = _post(office, "preparer", "/api/v1/taxpayers", json={"ein": "22-7777777", "name": "New Client", "tax": "cbt"})
    assert r.status_code == 201 and r.json()["year_one_start"] is None
    assert _post(office, "preparer2", "/api/v1/taxpayers", json={"ein": "22-7777777", "tax": "cbt"}).status_code == 409
    r = _post(office, "preparer", "/api/v1/taxpayers", json={"ein": "22-1", "tax": "income"})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "body.tax"
    assert _post(office, "auditor", "/api/v1/taxpayers", json={"ein": "22-2", "tax": "cbt"}).status_code == 403
