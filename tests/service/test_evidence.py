"""Evidence (B1, B2): documents attached to a claim with their hash, citing the figures they
support; examiners ask for evidence and a citing document answers."""

from __future__ import annotations

import hashlib

from .conftest import example


def test_documents_are_kept_with_their_hash_and_cite_figures(office):
    c = office.client.post("/api/v1/claims?submit=true", content=example("01"), headers=office.auth("preparer")).json()
    cid = c["id"]
    office.client.post(f"/api/v1/claims/{cid}/review", headers=office.auth("examiner"))
    r = office.client.post(f"/api/v1/claims/{cid}/evidence-requests", headers=office.auth("examiner"),
                           json={"figure": "location.operations_began", "rule": "B2", "message": "certificate of occupancy?"})
    assert r.status_code == 201, r.text
    req = r.json()
    assert req["answered_by_document_id"] is None
    bad = office.client.post(f"/api/v1/claims/{cid}/evidence-requests", headers=office.auth("examiner"), json={"figure": "no.such"})
    assert bad.status_code == 422 and bad.json()["problems"][0]["location"] == "figure"  # the field given (it said cites[0])
    content = b"%PDF-1.4 certificate of occupancy 2004-117"
    r = office.client.post(f"/api/v1/claims/{cid}/documents", headers=office.auth("preparer"),
                           files={"file": ("co.pdf", content, "application/pdf")},
                           data={"kind": "certificate", "description": "CO", "cites": ["location.operations_began", "credit.year_one"]})
    assert r.status_code == 201, r.text
    doc = r.json()
    assert doc["sha256"] == hashlib.sha256(content).hexdigest() and doc["size"] == len(content)
    assert doc["cites"] == ["location.operations_began", "credit.year_one"]
    got = office.client.get(f"/api/v1/documents/{doc['id']}/content", headers=office.auth("auditor"))
    assert got.content == content and got.headers["etag"] == f'"{doc["sha256"]}"'
    reqs = office.client.get(f"/api/v1/claims/{cid}/evidence-requests", headers=office.auth("preparer")).json()
    assert reqs[0]["answered_by_document_id"] == doc["id"]
    r = office.client.post(f"/api/v1/claims/{cid}/documents", headers=office.auth("preparer"),
                           files={"file": ("r.csv", b"x")}, data={"kind": "payroll_register", "cites": "employee:N0,periods[1].applied"})
    assert r.status_code == 201, r.text
    r = office.client.post(f"/api/v1/claims/{cid}/documents", headers=office.auth("preparer"),
                           files={"file": ("r.csv", b"x")}, data={"kind": "payroll_register", "cites": ["employee:NOBODY"]})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "cites[0]"
    r = office.client.post(f"/api/v1/claims/{cid}/documents", headers=office.auth("preparer"),
                           files={"file": ("r.csv", b"x")}, data={"kind": "selfie"})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "kind"
    assert office.client.get(f"/api/v1/documents/{doc['id']}", headers=office.auth("preparer2")).status_code == 404
    assert len(office.client.get(f"/api/v1/claims/{cid}/documents", headers=office.auth("examiner")).json()) == 2
    cited = office.client.get(f"/api/v1/claims/{cid}/documents?figure=credit.year_one", headers=office.auth("examiner")).json()
    assert [d["id"] for d in cited] == [doc["id"]]
    evidence = office.client.get(f"/api/v1/claims/{cid}", headers=office.auth("auditor")).json()["evidence"]
    assert evidence["location.operations_began"] == [doc["id"]] and len(evidence["employee:N0"]) == 1
