"""Bad input and faults: a 4xx naming the field for every malformed request, an upload limit,
one transaction per submission (a failure midway leaves nothing), and the server keeps serving."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from qmcredit.service import ledger
from qmcredit.service.models import AuditEvent, Claim, CreditWindow, Document, Location, Taxpayer

from .conftest import UPLOAD_LIMIT, example


def _post_claim(office, content, **headers):
    return office.client.post("/api/v1/claims", content=content, headers={**office.auth("preparer"), **headers})


@pytest.mark.parametrize("body, location", [
    (b"{not json", "line 1 column 2"),
    (b"[]", "claim"),
    (b'{"format": "qmcredit.claim/1"}', "taxpayer"),
    (b"\xff\xfe", "claim"),
])
def test_malformed_claims_name_the_field(office, body, location):
    r = _post_claim(office, body)
    assert r.status_code == 422, r.text
    assert location in [p["location"] for p in r.json()["problems"]]


def test_a_bad_amount_names_its_field(office):
    doc = example("01").decode().replace('"15000.00"', '"fifteen thousand"', 1)
    r = _post_claim(office, doc.encode())
    assert r.status_code == 422
    assert [p["location"] for p in r.json()["problems"]] == ["periods[0].liability"]


def test_other_malformed_requests(office):
    assert _post_claim(office, b"x", **{"content-type": "text/plain"}).status_code == 415
    r = office.client.get("/api/v1/claims/abc", headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "path.claim_id"
    r = office.client.post("/api/v1/claims", data={"other": "x"}, headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "form.other"
    r = office.client.post("/api/v1/claims", files={"payroll": ("p.csv", b"a,b")}, headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "form.claim"
    r = office.client.post("/api/v1/claims", data={"claim": example("01").decode()}, files={"payroll": ("p.pdf", b"a,b")},
                           headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "payroll"
    r = office.client.post("/api/v1/session", json={"username": "x"})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "body.password"
    r = office.client.get("/api/v1/claims?limit=0", headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "query.limit"
    assert office.client.get("/api/v1/claims/999", headers=office.auth("examiner")).status_code == 404


def test_upload_limit(office):
    big = b" " * (UPLOAD_LIMIT + 1)
    r = _post_claim(office, big)
    assert r.status_code == 413 and r.json()["problems"][0]["location"] == "body"

    def chunks():  # no Content-Length: the limit counts the bytes as they arrive
        for _ in range(UPLOAD_LIMIT // 65536 + 2):
            yield b" " * 65536

    r = _post_claim(office, chunks())
    assert r.status_code == 413
    r = office.client.post("/api/v1/claims", data={"claim": example("01").decode()},
                           files={"payroll": ("p.csv", b"x" * (UPLOAD_LIMIT + 10))}, headers=office.auth("preparer"))
    assert r.status_code == 413
    assert _post_claim(office, example("01")).status_code == 201


def _counts(office) -> dict:
    with office.db.read() as s:
        return {m.__tablename__: s.execute(select(func.count()).select_from(m)).scalar_one()
                for m in (Taxpayer, Location, CreditWindow, Claim, Document, AuditEvent)}


def test_a_failure_midway_leaves_nothing_half_written(office, monkeypatch):
    before = _counts(office)

    def fail(*_a, **_k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ledger, "store", fail)  # fails after taxpayer, location, window and claim rows were written
    r = _post_claim(office, example("01"))
    assert r.status_code == 500
    body = r.json()
    assert "reference" in body["error"] and "disk on fire" not in r.text and "Traceback" not in r.text
    assert _counts(office) == before
    monkeypatch.undo()
    assert _post_claim(office, example("01")).status_code == 201  # and the office goes on serving


def test_the_server_keeps_serving_after_bad_requests(office):
    for body in (b"", b"{", b"null", b'{"taxpayer": 5}', b"\x00" * 100, json.dumps({"a": [1] * 1000}).encode()):
        assert 400 <= _post_claim(office, body).status_code < 500
    assert _post_claim(office, example("02")).status_code == 201


def test_the_audit_log_is_append_only(office):
    _post_claim(office, example("01"))
    for statement in ("UPDATE audit_events SET actor = 'someone else'", "DELETE FROM audit_events"):
        with pytest.raises(DBAPIError):
            with office.db.engine.begin() as conn:
                conn.execute(text(statement))
    events = office.client.get("/api/v1/audit", headers=office.auth("auditor")).json()
    create = next(e for e in events if e["action"] == "claim.create")
    assert create["actor"] == "preparer" and create["before"] is None and create["after"]["state"] == "draft"
    assert create["after"]["credit"]["year_one"] == "16964.29"
    assert office.client.get("/api/v1/audit", headers=office.auth("preparer")).status_code == 403


def test_text_the_database_would_refuse_is_refused_naming_the_field(office):
    nul = example("01").decode().replace('"Riverside Fabrication Inc."', '"Riverside\\u0000Fabrication"', 1)
    r = _post_claim(office, nul.encode())
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "taxpayer.name"
    long_id = example("01").decode().replace('"22-1000001"', '"' + "9" * 500 + '"', 1)
    assert _post_claim(office, long_id.encode()).status_code == 201
    r = office.client.post("/api/v1/session", json={"username": "a\u0000b", "password": "x"})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "body.username"
    r = office.client.get("/api/v1/audit?entity=a%00b", headers=office.auth("auditor"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "query.entity"
    r = _post_claim(office, example("01").decode().replace('"15000.00"', '"5000000000000000.00"', 1).encode())
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "periods[0].liability"


def test_an_astronomical_amount_is_refused_naming_the_field(office):
    r = _post_claim(office, example("01").decode().replace('"15000.00"', "1e300", 1).encode())
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "periods[0].liability"


def test_operations_in_year_one_are_refused_naming_the_field(office):
    r = _post_claim(office, example("01").decode().replace('"2004-03-15"', '"0001-01-01"', 1).encode())
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "location.operations_began"


def test_health_and_index_need_no_sign_in(office):
    assert office.client.get("/api/v1/health").json()["status"] == "ok"
    assert office.client.get("/").json()["api"] == "/api/v1"
    assert office.client.get("/openapi.json").status_code == 200


def test_a_real_server_keeps_serving_after_bad_requests(live_office):
    import httpx

    from .conftest import UPLOAD_LIMIT

    auth = live_office.office.auth("preparer")
    with httpx.Client(base_url=live_office.base, timeout=30, headers=auth) as client:
        assert client.post("/api/v1/claims", content=b"x" * (UPLOAD_LIMIT + 1)).status_code == 413
        bad_multipart = client.post("/api/v1/claims", content=b"--b\r\nnot a part",
                                    headers={"content-type": "multipart/form-data; boundary=b"})
        assert 400 <= bad_multipart.status_code < 500
        assert client.post("/api/v1/claims", content=b"{", headers={"content-type": "application/json"}).status_code == 422
        assert client.get("/api/v1/claims/0").status_code == 422
        r = client.post("/api/v1/claims", content=example("02"), headers={"content-type": "application/json"})
        assert r.status_code == 201
