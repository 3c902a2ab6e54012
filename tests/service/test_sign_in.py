"""Issue 14, items 4 and 5, over HTTP on SQLite and PostgreSQL: guesses are limited per user and
per address, an unknown user is answered in the time a known one is, signing out ends the session
on the server, cookie writes need the CSRF token, auditors issue no tokens, tokens expire, another
preparer's taxpayer answers as absent, deep or non-finite JSON answers 422 on every route, and
every answer carries the security headers."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from qmcredit.service import Settings, auth, create_app
from qmcredit.service.auth import create_user
from qmcredit.service.models import ApiToken, now

from .conftest import example

PASSWORD = "correct horse battery"


@pytest.fixture
def person(office):
    office.db.write(lambda s: create_user(s, "person", "preparer", PASSWORD))
    office.db.write(lambda s: create_user(s, "watcher", "auditor", PASSWORD))
    return office


def _sign_in(client, username="person", password=PASSWORD):
    return client.post("/api/v1/session", json={"username": username, "password": password})


def test_password_guesses_are_limited_per_user(person):
    client = person.client
    answers = [_sign_in(client, password=f"guess {i}").status_code for i in range(auth.GUESSES_PER_USER + 2)]
    assert answers[:auth.GUESSES_PER_USER] == [401] * auth.GUESSES_PER_USER
    assert answers[auth.GUESSES_PER_USER:] == [429, 429]
    r = _sign_in(client)  # the right password too, until the window has passed
    assert r.status_code == 429 and r.json()["problems"][0]["location"] == "body.password"


def test_password_guesses_are_limited_per_address(person):
    names = [f"nobody{i}" for i in range(auth.GUESSES_PER_ADDRESS)]
    assert {_sign_in(person.client, name, "x").status_code for name in names} == {401}
    assert _sign_in(person.client).status_code == 429


def test_an_unknown_user_is_answered_in_the_same_time(person):
    def timed(username):
        started = time.perf_counter()
        assert _sign_in(person.client, username, "wrong").status_code == 401
        return time.perf_counter() - started
    known = min(timed("person") for _ in range(2))
    unknown = min(timed("nobody") for _ in range(2))
    assert unknown > known / 3, (known, unknown)


def test_signing_out_ends_the_session_on_the_server(person):
    client = person.client
    r = _sign_in(client)
    assert r.status_code == 200
    csrf = r.json()["csrf_token"]
    copied = dict(client.cookies)
    assert client.get("/api/v1/me").status_code == 200
    assert client.delete("/api/v1/session", headers={"x-csrf-token": csrf}).status_code == 204
    thief = TestClient(client.app, cookies=copied)
    assert thief.get("/api/v1/me").status_code == 401
    assert thief.post("/api/v1/claims", content=example("01"), headers={"x-csrf-token": csrf}).status_code == 401


def test_cookie_writes_need_the_csrf_token(person):
    client = person.client
    csrf = _sign_in(client).json()["csrf_token"]
    r = client.post("/api/v1/claims", content=example("01"))
    assert r.status_code == 403 and r.json()["problems"][0]["location"] == "header.x-csrf-token"
    assert client.post("/api/v1/claims", content=example("01"), headers={"x-csrf-token": "forged"}).status_code == 403
    assert client.get("/api/v1/me").json()["csrf_token"] == csrf
    assert client.post("/api/v1/claims", content=example("01"), headers={"x-csrf-token": csrf}).status_code == 201


def test_auditors_create_no_tokens_and_tokens_expire(person):
    client = person.client
    csrf = _sign_in(client, "watcher").json()["csrf_token"]
    r = client.post("/api/v1/tokens", json={"name": "mine"}, headers={"x-csrf-token": csrf})
    assert r.status_code == 403 and r.json()["problems"][0]["location"] == "role"
    r = client.post("/api/v1/tokens", json={"name": "script", "days": 1}, headers=person.auth("preparer"))
    assert r.status_code == 201 and r.json()["expires_at"]
    token = r.json()["token"]
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    person.db.write(lambda s: s.execute(update(ApiToken).where(ApiToken.id == r.json()["id"])
                                        .values(expires_at=now() - timedelta(seconds=1))))
    r = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401 and "expired" in r.json()["error"]


def test_another_preparers_taxpayer_answers_as_absent(office):
    assert office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer")).status_code == 201
    r = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer2"))
    assert r.status_code == 404 and r.json()["problems"] == [{"location": "taxpayer.id", "message": "taxpayer 22-1000001 not found"}]
    assert "another preparer" not in r.text


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("path, user", [
    ("/api/v1/session", None), ("/api/v1/tokens", "preparer"), ("/api/v1/taxpayers", "preparer"),
    ("/api/v1/claims/1/decision", "examiner"), ("/api/v1/claims/1/evidence-requests", "examiner"),
    ("/api/v1/claims", "preparer"), ("/api/v1/claims/1/periods", "preparer"),
])
@pytest.mark.parametrize("body", [DEEP, '{"name": ' + DEEP + "}", '{"name": NaN}', '{"name": "a", "name": "b"}'])
def test_bad_json_answers_422_on_every_route(office, path, user, body):
    headers = {"content-type": "application/json", **(office.auth(user) if user else {})}
    r = office.client.post(path, content=body, headers=headers)
    assert r.status_code == 422, r.text
    assert r.json()["problems"][0]["location"].startswith(("line ", "period line "))


def test_answers_carry_the_security_headers(office):
    for r in (office.client.get("/api/v1/health"), office.client.get("/signin"), office.client.get("/api/v1/me")):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


def test_behind_tls_the_session_cookie_is_secure(tmp_path):
    url = f"sqlite:///{tmp_path / 'tls.sqlite3'}"
    app = create_app(Settings(database_url=url, session_secret="s", secure_cookies=True))
    app.state.db.write(lambda s: create_user(s, "person", "preparer", PASSWORD))
    with TestClient(app, base_url="https://office.example") as client:
        r = _sign_in(client)
        assert r.status_code == 200
        assert "secure" in r.headers["set-cookie"].lower() and "samesite=strict" in r.headers["set-cookie"].lower()
        assert r.headers["strict-transport-security"].startswith("max-age=")
    app.state.db.dispose()
