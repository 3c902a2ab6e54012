"""``Idempotency-Key`` on every request that stores something (issue 12, item 4): amending, next
year's period, the workflow steps, the decision, the refund certification, documents, evidence
requests, taxpayers and API tokens. A retry with the key gets the first answer and stores nothing,
also when the copies are sent at the same moment; the same key on another route is refused (422).
Through HTTP on a live server, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import httpx
from sqlalchemy import func, select

from qmcredit.service.models import ApiToken, AuditEvent, Decision, Document, EvidenceRequest, RefundCertification, Revision, Taxpayer

from .conftest import example

API = "/api/v1"


def _count(office, model, *where) -> int:
    with office.db.read() as s:
        return s.execute(select(func.count()).select_from(model).where(*where)).scalar_one()


def _together(base: str, n: int, method: str, path: str, **kw) -> list[httpx.Response]:
    """``n`` copies of one request, sent at the same moment from ``n`` threads."""
    barrier = threading.Barrier(n)
    out: list = [None] * n

    def send(i: int) -> None:
        with httpx.Client(base_url=base, timeout=120) as client:
            barrier.wait()
            out[i] = client.request(method, path, **kw)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _once(base: str, method: str, path: str, status: int, **kw) -> httpx.Response:
    """Four simultaneous copies with one key: one answer, given four times, three as replays."""
    answers = _together(base, 4, method, path, **kw)
    assert [a.status_code for a in answers] == [status] * 4, [a.text for a in answers]
    assert len({a.content for a in answers}) == 1
    assert sorted(a.headers.get("Idempotent-Replayed", "") for a in answers) == ["", "true", "true", "true"]
    return answers[0]


def test_every_change_of_a_claims_life_runs_once_per_key(live_office):
    """Submit, review, next year's period, amendment, evidence request, document, decision and
    refund certification (R1), each sent four times at once with one key: each happens once."""
    base, office = live_office.base, live_office.office
    prep, exam = office.auth("preparer"), office.auth("examiner")
    r = httpx.post(f"{base}{API}/claims", content=example("02"), headers=prep | {"content-type": "application/json"}, timeout=60)
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    claim = f"{API}/claims/{cid}"

    assert _once(base, "POST", f"{claim}/submit", 200, headers=prep | {"Idempotency-Key": "s-1"}).json()["state"] == "submitted"
    assert _once(base, "POST", f"{claim}/periods", 200, headers=prep | {"Idempotency-Key": "p-1"},
                 json={"start": "2011-07-01", "end": "2012-06-30", "liability": "12000.00", "minimum_tax": "1500.00"}).json()["revision"] == 2
    amended = _once(base, "PUT", f"{claim}?reason=corrected", 200, headers=prep | {"Idempotency-Key": "a-1", "content-type": "application/json"},
                    content=example("02"))
    assert amended.json()["revision"] == 3
    assert _count(office, Revision, Revision.claim_id == cid) == 3
    assert _once(base, "POST", f"{claim}/review", 200, headers=exam | {"Idempotency-Key": "r-1"}).json()["state"] == "under_review"
    _once(base, "POST", f"{claim}/evidence-requests", 201, headers=exam | {"Idempotency-Key": "e-1"},
          json={"figure": "credit.year_one", "rule": "B1", "message": "send the payroll register"})
    assert _count(office, EvidenceRequest, EvidenceRequest.claim_id == cid) == 1
    _once(base, "POST", f"{claim}/documents", 201, headers=prep | {"Idempotency-Key": "d-1"},
          files={"file": ("register.pdf", b"%PDF-1.4 register", "application/pdf")}, data={"kind": "payroll_register", "cites": "credit.year_one"})
    assert _count(office, Document, Document.claim_id == cid, Document.kind == "payroll_register") == 1
    decided = _once(base, "POST", f"{claim}/decision", 200, headers=exam | {"Idempotency-Key": "x-1"},
                    json={"outcome": "approved", "reasons": [{"rule": "B1", "message": "registers reconcile"}]})
    assert decided.json()["state"] == "approved" and _count(office, Decision, Decision.claim_id == cid) == 1
    certified = _once(base, "POST", f"{claim}/refund-certification", 200, headers=exam | {"Idempotency-Key": "c-1"})
    assert certified.json()["state"] == "refund_certified"
    assert _count(office, RefundCertification, RefundCertification.claim_id == cid) >= 1
    per_action = {a: _count(office, AuditEvent, AuditEvent.action == a, AuditEvent.entity_id == str(cid))
                  for a in ("claim.submit", "claim.amend", "claim.start_review", "claim.approve", "claim.certify_refund")}
    assert per_action == {"claim.submit": 1, "claim.amend": 2, "claim.start_review": 1, "claim.approve": 1, "claim.certify_refund": 1}
    # a retry later, one at a time, still gets the first answer; another route with the key is refused
    again = httpx.post(f"{base}{claim}/submit", headers=prep | {"Idempotency-Key": "s-1"})
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["state"] == "submitted"
    other = httpx.post(f"{base}{claim}/review", headers=prep | {"Idempotency-Key": "d-1"})
    assert other.status_code == 422 and other.json()["problems"][0]["location"] == "header.idempotency-key"


def test_a_taxpayer_and_a_token_are_registered_once_per_key(live_office):
    """A retried registration stores one taxpayer; a retried token request issues one token, and its
    replays do not show the secret again (only its SHA-256 is stored)."""
    base, office = live_office.base, live_office.office
    prep = office.auth("preparer")
    body = {"ein": "61-0000001", "name": "Retry Works LLC", "tax": "cbt"}
    _once(base, "POST", f"{API}/taxpayers", 201, headers=prep | {"Idempotency-Key": "t-1"}, json=body)
    assert _count(office, Taxpayer, Taxpayer.ein == "61-0000001") == 1
    before = _count(office, ApiToken)
    answers = _together(base, 4, "POST", f"{API}/tokens", headers=prep | {"Idempotency-Key": "tok-1"}, json={"name": "nightly", "days": 30})
    assert [a.status_code for a in answers] == [201] * 4, [a.text for a in answers]
    first = next(a.json() for a in answers if "Idempotent-Replayed" not in a.headers)
    replays = [a.json() for a in answers if a.headers.get("Idempotent-Replayed") == "true"]
    assert len(replays) == 3 and first["token"].startswith("qmc_")
    assert all(r == first | {"token": None} for r in replays)
    assert _count(office, ApiToken) == before + 1
    assert httpx.get(f"{base}{API}/me", headers={"Authorization": f"Bearer {first['token']}"}).status_code == 200
