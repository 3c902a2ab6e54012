"""No credit twice (issue 12, item 4): one claim per taxpayer, location and credit window, held by
the database under simultaneous filings; a retry with the same ``Idempotency-Key`` gets the first
answer and stores nothing. Through HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest
from alembic import command
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from fastapi.testclient import TestClient

from qmcredit.service import Settings, create_app
from qmcredit.service.auth import issue_token
from qmcredit.service.db import Database, alembic_config, migrate
from qmcredit.service.models import AuditEvent, Claim, IdempotencyKey, Location, User
from qmcredit.service.places import place_key

from .conftest import UPLOAD_LIMIT, Office, example, make_office, post_at_once, variant

CLAIMS = "/api/v1/claims"


def _ledger(office, taxpayer_id: int) -> dict:
    return office.client.get(f"/api/v1/taxpayers/{taxpayer_id}/ledger", headers=office.auth("examiner")).json()


def _count(office, model) -> int:
    with office.db.read() as s:
        return s.execute(select(func.count()).select_from(model)).scalar_one()


def test_a_second_filing_for_the_location_and_window_is_refused_naming_the_claim(office):
    h = office.auth("preparer")
    first = office.client.post(CLAIMS, content=example("01"), headers=h).json()
    ledger = _ledger(office, first["taxpayer_id"])
    again = office.client.post(CLAIMS, content=example("01"), headers=h)
    assert again.status_code == 409, again.text
    body = again.json()
    assert f"claim {first['id']}" in body["error"] and "amend it instead" in body["error"]
    problem = body["problems"][0]
    assert problem["location"] == "location"
    assert f"/api/v1/claims/{first['id']}" in problem["message"] and f"PUT /api/v1/claims/{first['id']}" in problem["message"]
    assert _ledger(office, first["taxpayer_id"]) == ledger  # the year-one credit listed once, as before
    assert len(office.client.get(CLAIMS, headers=h).json()) == 1


@pytest.mark.parametrize("municipality,address", [
    ("City of Camden", "200 Federal St"),        # E2's alias of Camden
    ("camden", "200  FEDERAL  STREET."),         # case, spacing, punctuation, the suffix spelled out
    ("Camden City", "200 Federal Street"),
])
def test_another_spelling_of_the_place_is_the_same_location(office, municipality, address):
    h = office.auth("preparer")
    office.client.post(CLAIMS, content=example("01"), headers=h)
    doc = example("01").decode().replace('"Camden"', json.dumps(municipality), 1).replace('"200 Federal St"', json.dumps(address), 1)
    r = office.client.post(CLAIMS, content=doc, headers=h)
    assert r.status_code == 409 and "amend it instead" in r.json()["error"], r.text


def test_place_keys_tell_places_apart():
    assert place_key("Camden", "200 Federal St") == place_key("CITY OF CAMDEN", "200 federal street")
    assert place_key("Camden", "200 Federal St, Suite 5") == place_key("Camden", "200 Federal Street Ste. 5")
    assert place_key("Camden", "200 Federal St, Suite 5") != place_key("Camden", "200 Federal St, Suite 6")
    assert place_key("Camden", "200 Federal St") != place_key("Camden", "201 Federal St")
    assert place_key("Camden", "200 Federal St") != place_key("Trenton", "200 Federal St")


def test_an_amendment_onto_another_claims_location_is_refused(office):
    h = office.auth("preparer")
    first = office.client.post(CLAIMS, content=example("01"), headers=h).json()
    second = office.client.post(CLAIMS, content=variant("01", address="7 Second Location"), headers=h).json()
    r = office.client.put(f"{CLAIMS}/{second['id']}", content=example("01"), headers=h)
    assert r.status_code == 409 and f"claim {first['id']}" in r.json()["error"], r.text
    # amending a claim in its own place is no second filing
    assert office.client.put(f"{CLAIMS}/{first['id']}", content=example("01"), headers=h).status_code == 200


def test_an_ineligible_claim_holds_no_window_and_is_no_second_credit(office):
    h = office.auth("preparer")
    r1 = office.client.post(CLAIMS, content=example("05"), headers=h)
    r2 = office.client.post(CLAIMS, content=example("05"), headers=h)
    assert (r1.status_code, r2.status_code) == (201, 201)
    assert r1.json()["year_one_start"] is None and r1.json()["determination"]["credit"]["year_one"] == "0.00"


def test_the_database_itself_refuses_a_second_claim_for_a_location_and_window(office):
    first = office.client.post(CLAIMS, content=example("01"), headers=office.auth("preparer")).json()
    with pytest.raises(IntegrityError):
        with office.db.engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO claims (taxpayer_id, location_id, year_one_start, state, revision, created_by, created_at, updated_at) "
                "SELECT taxpayer_id, location_id, year_one_start, state, revision, created_by, created_at, updated_at "
                "FROM claims WHERE id = :id"), {"id": first["id"]})
    with pytest.raises(IntegrityError):
        with office.db.engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO locations (taxpayer_id, municipality, address, operations_began, operations_source, place_key) "
                "SELECT taxpayer_id, municipality, 'another spelling', operations_began, operations_source, place_key "
                "FROM locations WHERE id = :id"), {"id": first["location_id"]})


# -- Idempotency-Key ---------------------------------------------------------------------------

def test_a_retry_with_the_same_key_gets_the_first_answer_and_stores_nothing(office):
    h = office.auth("preparer") | {"Idempotency-Key": "6c1f0d3e-retry-1"}
    first = office.client.post(f"{CLAIMS}?submit=true", content=example("01"), headers=h)
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    ledger, events = _ledger(office, first.json()["taxpayer_id"]), _count(office, AuditEvent)
    for _ in range(2):
        again = office.client.post(f"{CLAIMS}?submit=true", content=example("01"), headers=h)
        assert again.status_code == 201 and again.content == first.content
        assert again.headers["Idempotent-Replayed"] == "true"
    assert _count(office, Claim) == 1 and _count(office, AuditEvent) == events
    assert _ledger(office, first.json()["taxpayer_id"]) == ledger
    # the first answer stays the answer, also after the claim moved on
    office.client.post(f"{CLAIMS}/{first.json()['id']}/review", headers=office.auth("examiner"))
    assert office.client.post(f"{CLAIMS}?submit=true", content=example("01"), headers=h).content == first.content
    # without the key, the same filing is a second filing
    assert office.client.post(f"{CLAIMS}?submit=true", content=example("01"), headers=office.auth("preparer")).status_code == 409


def test_the_same_key_with_another_request_is_refused(office):
    h = office.auth("preparer") | {"Idempotency-Key": "key-A"}
    assert office.client.post(CLAIMS, content=example("01"), headers=h).status_code == 201
    for url, body in ((CLAIMS, example("02")), (f"{CLAIMS}?submit=true", example("01"))):
        r = office.client.post(url, content=body, headers=h)
        assert r.status_code == 422, r.text
        assert r.json()["problems"][0]["location"] == "header.idempotency-key"
    assert _count(office, Claim) == 1
    # keys are each user's own: another preparer's "key-A" is another key
    other = office.client.post(CLAIMS, content=variant("02", ein="33-0000002"), headers=office.auth("preparer2") | {"Idempotency-Key": "key-A"})
    assert other.status_code == 201, other.text


def test_a_multipart_retry_is_the_same_request_whatever_its_boundary(office):
    doc = json.loads(example("03"))
    rows = [{"employee_id": e["id"], "month": m, "hours": str(h), "basis": e.get("basis", "permanent")}
            for e in doc.pop("employees") for m, h in e["hours"].items()]
    doc["payroll"] = "payroll"
    h = office.auth("preparer") | {"Idempotency-Key": "upload-1"}
    answers = [office.client.post(CLAIMS, data={"claim": json.dumps(doc)}, files={"payroll": ("p.json", json.dumps(rows).encode())},
                                  headers=h) for _ in range(2)]
    assert [a.status_code for a in answers] == [201, 201] and answers[0].content == answers[1].content
    assert _count(office, Claim) == 1


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9".encode(), "two words"])
def test_a_malformed_key_is_refused_naming_the_header(office, key):
    r = office.client.post(CLAIMS, content=example("01"), headers=office.auth("preparer") | {"Idempotency-Key": key})
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "header.idempotency-key", r.text
    assert _count(office, Claim) == 0


def test_a_refusal_keeps_no_key(office):
    h = office.auth("preparer") | {"Idempotency-Key": "late"}
    office.client.post(CLAIMS, content=example("01"), headers=office.auth("preparer"))
    assert office.client.post(CLAIMS, content=example("01"), headers=h).status_code == 409
    assert _count(office, IdempotencyKey) == 0


# -- simultaneous requests (uvicorn on loopback, one thread per client) -------------------------

def test_simultaneous_filings_of_one_claim_store_it_once(live_office):
    office = live_office.office
    for round_ in range(3):
        body = variant("01", ein=f"44-00000{round_}")  # a new taxpayer each round: its first claim races too
        answers = post_at_once(live_office.base, [(body, office.auth("preparer"))] * 4)
        codes = sorted(a.status_code for a in answers)
        assert codes == [201, 409, 409, 409], [a.text for a in answers]
        winner = next(a.json() for a in answers if a.status_code == 201)
        assert all(f"claim {winner['id']}" in a.json()["error"] for a in answers if a.status_code == 409)
        entries = _ledger(office, winner["taxpayer_id"])["entries"]
        assert len({(e["period_start"], e["origin"]) for e in entries}) == len(entries)  # each credit once
    assert _count(office, Claim) == 3


def test_simultaneous_retries_with_one_key_get_one_answer(live_office):
    office = live_office.office
    for round_ in range(3):
        h = office.auth("preparer") | {"Idempotency-Key": f"race-{round_}"}
        answers = post_at_once(live_office.base, [(variant("01", ein=f"45-00000{round_}"), h)] * 4)
        assert [a.status_code for a in answers] == [201] * 4, [a.text for a in answers]
        assert len({a.content for a in answers}) == 1
        assert sorted(a.headers.get("Idempotent-Replayed", "") for a in answers) == ["", "true", "true", "true"]
    assert _count(office, Claim) == 3 and _count(office, IdempotencyKey) == 3


def test_simultaneous_requests_with_one_key_and_two_bodies_one_wins(live_office):
    office = live_office.office
    h = office.auth("preparer") | {"Idempotency-Key": "contested"}
    answers = post_at_once(live_office.base, [(variant("01", ein="46-0000001"), h), (variant("01", ein="46-0000002"), h)])
    assert sorted(a.status_code for a in answers) == [201, 422], [a.text for a in answers]
    assert _count(office, Claim) == 1


# -- migration 0003 on a database that holds duplicates ------------------------------------------

def _copy_claim(conn, claim_id: int, location_id: int) -> None:
    """What the office let through before 0003: the same claim stored again, revision and ledger too."""
    new = conn.execute(text(
        "INSERT INTO claims (taxpayer_id, location_id, year_one_start, state, revision, created_by, created_at, updated_at) "
        "SELECT taxpayer_id, :loc, year_one_start, state, revision, created_by, created_at, updated_at FROM claims WHERE id = :id "
        "RETURNING id"), {"id": claim_id, "loc": location_id}).scalar_one()
    rev = conn.execute(text(
        "INSERT INTO revisions (claim_id, number, document, payroll_document_id, determination, reason, author_id, created_at) "
        "SELECT :new, number, document, payroll_document_id, determination, reason, author_id, created_at FROM revisions "
        "WHERE claim_id = :id RETURNING id"), {"id": claim_id, "new": new}).scalar_one()
    conn.execute(text(
        "INSERT INTO ledger_entries (taxpayer_id, claim_id, revision_id, period_start, period_end, origin, allowed, applied, "
        "refund, forfeited, carried_forward) SELECT taxpayer_id, :new, :rev, period_start, period_end, origin, allowed, applied, "
        "refund, forfeited, carried_forward FROM ledger_entries WHERE claim_id = :id"), {"id": claim_id, "new": new, "rev": rev})


def _reopen(url: str) -> Office:
    """The office started again on a database that already has its users."""
    db = Database(url)
    app = create_app(Settings(database_url=url, upload_limit=UPLOAD_LIMIT, session_secret="test-secret"), db)
    tokens = db.write(lambda s: {u.username: issue_token(s, u, "tests") for u in s.execute(select(User)).scalars()})
    return Office(TestClient(app, raise_server_exceptions=False), db, tokens, url)


def test_migration_0003_keeps_the_oldest_of_duplicates_stored_before_it(database_url):
    office = make_office(database_url)
    with office.client:
        first = office.client.post(CLAIMS, content=example("01"), headers=office.auth("preparer")).json()
        once = _ledger(office, first["taxpayer_id"])
    office.db.dispose()
    db = Database(database_url)
    cfg = alembic_config(db.engine)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0001")
    with db.engine.begin() as conn:  # the state issue 12 reports: the claim filed twice, once spelled otherwise
        other = conn.execute(text(
            "INSERT INTO locations (taxpayer_id, municipality, address, operations_began, operations_source) "
            "SELECT taxpayer_id, 'City of Camden', '200 FEDERAL STREET', operations_began, operations_source FROM locations "
            "WHERE id = :id RETURNING id"), {"id": first["location_id"]}).scalar_one()
        _copy_claim(conn, first["id"], first["location_id"])
        _copy_claim(conn, first["id"], other)
    migrate(db.engine)
    with db.read() as s:
        claims = s.execute(select(Claim).order_by(Claim.id)).scalars().all()
        assert [(c.location_id, c.duplicate_of) for c in claims] == [(first["location_id"], None),
                                                                      (first["location_id"], first["id"]),
                                                                      (first["location_id"], first["id"])]
        assert s.execute(select(func.count()).select_from(Location)).scalar_one() == 1
    db.dispose()
    office = _reopen(database_url)
    with office.client:
        assert _ledger(office, first["taxpayer_id"])["entries"] == once["entries"]  # the credit once again
        dup = claims[1].id
        got = office.client.get(f"{CLAIMS}/{dup}", headers=office.auth("preparer")).json()
        assert got["duplicate_of"] == first["id"]
        r = office.client.put(f"{CLAIMS}/{dup}", content=example("01"), headers=office.auth("preparer"))
        assert r.status_code == 409 and f"claim {first['id']}" in r.json()["error"]
        assert office.client.post(CLAIMS, content=example("01"), headers=office.auth("preparer")).status_code == 409
    office.db.dispose()


@pytest.mark.slow
def test_two_server_processes_store_one_claim_however_it_is_sent(database_url, tmp_path, monkeypatch):
    """``qmcredit serve`` with QMCREDIT_WORKERS=2: the races cross processes (SQLite's file lock,
    PostgreSQL's unique indexes), not only threads of one."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("service_load", Path(__file__).resolve().parents[2] / "benchmarks" / "service_load.py")
    load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load)
    monkeypatch.setenv("QMCREDIT_WORKERS", "2")
    proc, base, token = load.start_server(database_url, str(tmp_path))
    try:
        auth = {"Authorization": f"Bearer {token}"}
        plain = post_at_once(base, [(variant("01", ein="47-0000001"), auth)] * 6)
        assert sorted(a.status_code for a in plain) == [201] + [409] * 5, [a.text for a in plain]
        keyed = post_at_once(base, [(variant("01", ein="47-0000002"), auth | {"Idempotency-Key": "procs"})] * 6)
        assert [a.status_code for a in keyed] == [201] * 6 and len({a.content for a in keyed}) == 1
        stored = httpx.get(f"{base}{CLAIMS}?limit=1000", headers=auth, timeout=60).json()
        assert sorted(c["taxpayer_ein"] for c in stored if c["taxpayer_ein"].startswith("47-")) == ["47-0000001", "47-0000002"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- any sequence of filings -----------------------------------------------------------------------

SPELLINGS = [("Camden", "200 Federal St"), ("City of Camden", "200 FEDERAL STREET"), ("Camden", "7 Second Location"),
             ("camden city", "7 second location.")]


def test_any_sequence_of_filings_and_retries_stores_each_place_once(tmp_path):
    """Property: whatever the order of filings (places spelled several ways, with or without a
    key, keys reused), each place has one claim, each retry with a key the first answer, and the
    ledger lists every credit once, within the one room of each period (L6)."""
    import tempfile

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ops = st.lists(st.tuples(st.integers(0, len(SPELLINGS) - 1), st.sampled_from([None, "k1", "k2"])), min_size=1, max_size=6)

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
    @given(ops)
    def run(sequence):
        office = make_office(f"sqlite:///{tempfile.mkdtemp(dir=tmp_path)}/p.sqlite3")
        with office.client:
            first_answer: dict[str, tuple[int, bytes]] = {}
            places = set()  # the places filed: a key reused for another place is refused (422), which files nothing
            for spelling, key in sequence:
                municipality, address = SPELLINGS[spelling]
                body = example("01").decode().replace('"Camden"', json.dumps(municipality), 1)
                body = body.replace('"200 Federal St"', json.dumps(address), 1).encode()
                h = office.auth("preparer") | ({"Idempotency-Key": key} if key else {})
                r = office.client.post(CLAIMS, content=body, headers=h)
                if key and key in first_answer:
                    fingerprint_same = first_answer[key][2] == body
                    assert (r.status_code, r.content) == first_answer[key][:2] if fingerprint_same else r.status_code == 422
                    continue
                assert r.status_code in (201, 409), r.text
                places.add(place_key(municipality, address))
                if key and r.status_code == 201:
                    first_answer[key] = (r.status_code, r.content, body)
            claims = office.client.get(CLAIMS, headers=office.auth("examiner")).json()
            assert len(claims) == len(places)
            if claims:
                ledger = _ledger(office, claims[0]["taxpayer_id"])
                keys = [(e["claim_id"], e["period_start"], e["origin"]) for e in ledger["entries"]]
                assert len(keys) == len(set(keys))
                for p in ledger["periods"]:
                    assert Decimal(p["applied"]) <= Decimal(p["room"])
        office.db.dispose()

    run()
