"""Roles: preparers see and change only their own taxpayers' claims, examiners review all,
auditors read all and change nothing. Sign-in by hashed token or by password session."""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from qmcredit.service.auth import create_user
from qmcredit.service.models import ApiToken

from .conftest import example


def _file(office, who="preparer", name="01"):
    r = office.client.post("/api/v1/claims", content=example(name), headers=office.auth(who))
    assert r.status_code == 201, r.text
    return r.json()


def test_a_preparer_cannot_read_or_change_another_preparers_claim(office):
    claim = _file(office)
    cid, other = claim["id"], office.auth("preparer2")
    assert office.client.get(f"/api/v1/claims/{cid}", headers=other).status_code == 404
    assert office.client.get(f"/api/v1/claims/{cid}/determination", headers=other).status_code == 404
    assert office.client.get(f"/api/v1/claims/{cid}/revisions", headers=other).status_code == 404
    assert office.client.get(f"/api/v1/taxpayers/{claim['taxpayer_id']}", headers=other).status_code == 404
    assert office.client.get(f"/api/v1/taxpayers/{claim['taxpayer_id']}/ledger", headers=other).status_code == 404
    assert office.client.get("/api/v1/claims", headers=other).json() == []
    assert office.client.get("/api/v1/taxpayers", headers=other).json() == []
    assert office.client.post(f"/api/v1/claims/{cid}/submit", headers=other).status_code == 404
    assert office.client.put(f"/api/v1/claims/{cid}", content=example("01"), headers=other).status_code == 404
    assert office.client.post(f"/api/v1/claims/{cid}/documents", files={"file": ("a.pdf", b"%PDF")},
                              data={"kind": "lease"}, headers=other).status_code == 404
    # nor file a claim for that preparer's taxpayer
    r = office.client.post("/api/v1/claims", content=example("01"), headers=other)
    assert r.status_code == 404 and r.json()["problems"][0]["location"] == "taxpayer.id"
    assert office.client.get(f"/api/v1/claims/{cid}", headers=office.auth("preparer")).json()["state"] == "draft"


def test_an_auditor_reads_everything_and_changes_nothing(office):
    claim = _file(office)
    cid, aud = claim["id"], office.auth("auditor")
    assert office.client.get(f"/api/v1/claims/{cid}", headers=aud).status_code == 200
    assert office.client.get("/api/v1/audit", headers=aud).status_code == 200
    before = office.client.get("/api/v1/audit", headers=aud).json()
    attempts = [
        office.client.post("/api/v1/claims", content=example("02"), headers=aud),
        office.client.put(f"/api/v1/claims/{cid}", content=example("01"), headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/submit", headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/review", headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/decision", json={"outcome": "approved"}, headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/refund-certification", headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/periods", json={"start": "2008-01-01", "end": "2008-12-31",
                                                                  "liability": "100.00", "minimum_tax": "50.00"}, headers=aud),
        office.client.put(f"/api/v1/claims/{cid}/periods/2004-01-01", json={"start": "2004-01-01", "end": "2004-12-31",
                                                                           "liability": "1.00", "minimum_tax": "0.00"}, headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/documents", files={"file": ("a.pdf", b"%PDF")}, data={"kind": "lease"}, headers=aud),
        office.client.post(f"/api/v1/claims/{cid}/evidence-requests", json={"figure": "credit.year_one"}, headers=aud),
    ]
    assert [r.status_code for r in attempts] == [403] * len(attempts), [r.text for r in attempts]
    assert all(r.json()["problems"][0]["location"] == "role" for r in attempts)
    assert office.client.get("/api/v1/audit", headers=aud).json() == before
    assert office.client.get(f"/api/v1/claims/{cid}", headers=aud).json() == office.client.get(f"/api/v1/claims/{cid}", headers=aud).json()


def test_examiners_see_all_preparers_cannot_review(office):
    a, b = _file(office, "preparer", "01"), _file(office, "preparer2", "02")
    assert {c["id"] for c in office.client.get("/api/v1/claims", headers=office.auth("examiner")).json()} == {a["id"], b["id"]}
    office.client.post(f"/api/v1/claims/{a['id']}/submit", headers=office.auth("preparer"))
    r = office.client.post(f"/api/v1/claims/{a['id']}/review", headers=office.auth("preparer"))
    assert r.status_code == 403
    r = office.client.post("/api/v1/claims", content=example("03"), headers=office.auth("examiner"))
    assert r.status_code == 403


def test_tokens_are_stored_hashed_and_unknown_ones_refused(office):
    with office.db.read() as s:
        hashes = set(s.execute(select(ApiToken.token_hash)).scalars())
    for token in office.tokens.values():
        assert token not in hashes and hashlib.sha256(token.encode()).hexdigest() in hashes
    assert office.client.get("/api/v1/me").status_code == 401
    assert office.client.get("/api/v1/me", headers={"Authorization": "Bearer qmc_nope"}).status_code == 401
    r = office.client.get("/api/v1/me", headers={"Authorization": "Basic abc"})
    assert r.status_code == 401 and r.json()["problems"][0]["location"] == "header.authorization"


def test_people_sign_in_with_a_password_session_and_make_tokens(office):
    office.db.write(lambda s: create_user(s, "person", "examiner", "correct horse"))
    client = office.client
    assert client.post("/api/v1/session", json={"username": "person", "password": "wrong"}).status_code == 401
    r = client.post("/api/v1/session", json={"username": "person", "password": "correct horse"})
    assert r.status_code == 200 and r.json()["role"] == "examiner"
    assert client.get("/api/v1/me").json()["username"] == "person"
    # issue 14: a change made with the session cookie carries the session's CSRF token
    token = client.post("/api/v1/tokens", json={"name": "script"}, headers={"x-csrf-token": r.json()["csrf_token"]}).json()["token"]
    assert client.delete("/api/v1/session").status_code == 204
    assert client.get("/api/v1/me").status_code == 401
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).json()["username"] == "person"
    with office.db.read() as s:
        token_id = s.execute(select(ApiToken.id).where(ApiToken.name == "script")).scalar_one()
    assert client.delete(f"/api/v1/tokens/{token_id}", headers=office.auth("examiner")).status_code == 404  # not theirs
    assert client.delete(f"/api/v1/tokens/{token_id}", headers={"Authorization": f"Bearer {token}"}).status_code == 204
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
