"""Issue 12's leftovers on the return (RULES.md L6): claims stored before the office decided a
taxpayer's locations together are decided again by migration 0004; an approved claim whose share a
recompute changes goes back for review, and its refund (R1) is certified only for the revision
approved. Through HTTP and Alembic, on SQLite and PostgreSQL."""

from __future__ import annotations

from decimal import Decimal

from alembic import command
from sqlalchemy import text

from qmcredit.service.db import Database, alembic_config, migrate

from .conftest import make_office, variant
from .test_duplicates import _reopen

CLAIMS = "/api/v1/claims"
FIGURES = ("period_start", "origin", "allowed", "applied", "refund", "forfeited", "carried_forward")


def _ledger(office, taxpayer_id: int) -> dict:
    return office.client.get(f"/api/v1/taxpayers/{taxpayer_id}/ledger", headers=office.auth("examiner")).json()


def _file(office, body: bytes, submit: bool = True) -> dict:
    r = office.client.post(f"{CLAIMS}?submit={'true' if submit else 'false'}", content=body, headers=office.auth("preparer"))
    assert r.status_code == 201, r.text
    return r.json()


def _shares(ledger: dict, order: list[int]) -> list[list[tuple]]:
    """Each claim's ledger rows (figures only), claims in ``order``."""
    return [[tuple(e[k] for k in FIGURES) for e in ledger["entries"] if e["claim_id"] == cid] for cid in order]


def test_migration_0004_decides_claims_stored_before_returns_as_one_return(database_url):
    """L6: two location claims of one taxpayer stored each with the whole room (the pre-0003 office)
    are, after upgrading, the return a filing gives now: the same shares as two claims filed today,
    the room once per period."""
    office = make_office(database_url)
    with office.client:
        a = _file(office, variant("01", ein="71-0000001"))
        b = _file(office, variant("01", ein="71-0000002", address="9 Second Street"))  # alone: the whole room
        c = _file(office, variant("01", ein="72-0000001"))  # today's office: one return of two locations
        d = _file(office, variant("01", ein="72-0000001", address="9 Second Street"))
        today = _shares(_ledger(office, c["taxpayer_id"]), [c["id"], d["id"]])
    office.db.dispose()
    db = Database(database_url)
    cfg = alembic_config(db.engine)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0002")
    with db.engine.begin() as conn:  # what the office stored before returns: b is a's taxpayer's second location
        for table, column in (("locations", "id"), ("claims", "id"), ("ledger_entries", "claim_id")):
            conn.execute(text(f"UPDATE {table} SET taxpayer_id = :tp WHERE {column} = :id"),
                         {"tp": a["taxpayer_id"], "id": b["location_id"] if table == "locations" else b["id"]})
        stored = conn.execute(text("SELECT SUM(applied) FROM ledger_entries WHERE taxpayer_id = :tp"), {"tp": a["taxpayer_id"]}).scalar_one()
    migrate(db.engine)
    db.dispose()
    office = _reopen(database_url)
    with office.client:
        ledger = _ledger(office, a["taxpayer_id"])
        assert _shares(ledger, [a["id"], b["id"]]) == today
        assert Decimal(sum(Decimal(e["applied"]) for e in ledger["entries"])) * 100 < stored  # the room no longer twice
        for p in ledger["periods"]:
            assert Decimal(p["applied"]) <= Decimal(p["room"]) and sorted(p["claims"]) in ([], [a["id"], b["id"]])
        assert any(p["claims"] for p in ledger["periods"])
        history = office.client.get(f"{CLAIMS}/{a['id']}/revisions", headers=office.auth("preparer")).json()
        assert "migration 0004" in history[-1]["reason"]
        events = office.client.get("/api/v1/audit?entity=claim", headers=office.auth("auditor")).json()
        assert any(e["action"] == "claim.recompute" and e["entity_id"] == str(a["id"]) for e in events)
        migrate(office.db.engine)  # at head already: nothing again
        assert len(office.client.get(f"{CLAIMS}/{a['id']}/revisions", headers=office.auth("preparer")).json()) == len(history)
    office.db.dispose()


def test_an_approved_claim_whose_share_is_recomputed_goes_back_for_review(office):
    """L6 and the workflow: an approval names the revision it approved. Filing the taxpayer's second
    location recomputes the first's share: a new revision, back to ``submitted``, its approval kept
    on the old revision; the refund (R1) waits until the examiner approves the new one."""
    ex, prep = office.auth("examiner"), office.auth("preparer")
    first = _file(office, variant("02"))
    cid = first["id"]
    assert office.client.post(f"{CLAIMS}/{cid}/review", headers=ex).status_code == 200
    approve = {"outcome": "approved", "reasons": [{"rule": "B1", "message": "registers reconcile"}]}
    approved = office.client.post(f"{CLAIMS}/{cid}/decision", json=approve, headers=ex).json()
    assert (approved["state"], approved["revision"], approved["approved_revision"]) == ("approved", 1, 1)
    _file(office, variant("02", address="9 Second Street"))
    now = office.client.get(f"{CLAIMS}/{cid}", headers=prep).json()
    assert (now["state"], now["revision"], now["approved_revision"]) == ("submitted", 2, 1)
    reason = office.client.get(f"{CLAIMS}/{cid}/revisions/2", headers=prep).json()["reason"]
    assert "approval of revision 1" in reason and "review" in reason
    refused = office.client.post(f"{CLAIMS}/{cid}/refund-certification", headers=ex)
    assert refused.status_code == 409
    assert office.client.post(f"{CLAIMS}/{cid}/review", headers=ex).status_code == 200
    again = office.client.post(f"{CLAIMS}/{cid}/decision", json=approve, headers=ex).json()
    assert (again["state"], again["approved_revision"]) == ("approved", 2)
    certified = office.client.post(f"{CLAIMS}/{cid}/refund-certification", headers=ex)
    assert certified.status_code == 200, certified.text
    ledger = _ledger(office, first["taxpayer_id"])
    assert [c["revision_id"] for c in ledger["refunds_certified"]]  # certified on the approved revision's figures


def test_a_refund_is_certified_only_for_the_revision_approved(office):
    """R1: a claim left approved with a newer recomputed revision (as the office kept them before this
    rule) is refused certification, naming both revisions."""
    ex = office.auth("examiner")
    first = _file(office, variant("02"))
    cid = first["id"]
    office.client.post(f"{CLAIMS}/{cid}/review", headers=ex)
    office.client.post(f"{CLAIMS}/{cid}/decision", json={"outcome": "approved", "reasons": [{"rule": "B1", "message": "ok"}]}, headers=ex)
    _file(office, variant("02", address="9 Second Street"))
    office.db.write(lambda s: s.execute(text("UPDATE claims SET state = 'approved' WHERE id = :id"), {"id": cid}))
    refused = office.client.post(f"{CLAIMS}/{cid}/refund-certification", headers=ex)
    assert refused.status_code == 409, refused.text
    assert refused.json()["problems"][0]["location"] == "revision"
    assert "revision 1" in refused.json()["problems"][0]["message"]
