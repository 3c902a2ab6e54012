"""The taxpayer's ledger is one return (RULES.md L6, issue 12 item 3): the claims office keeps one
claim per location and decides a taxpayer's current location claims together, one room per period
shared among them; filing, amending or denying one recomputes the others' shares (new revisions,
with the reason, in the history and the audit log). Through HTTP, on SQLite and PostgreSQL, against
example 07's expected figures (the spec's reading of L6 and R1a)."""

from __future__ import annotations

import json
import threading
from decimal import Decimal

import httpx

from qmcredit.service.taxreturn import location_documents

from .conftest import EXAMPLES

CLAIMS = "/api/v1/claims"
EXAMPLE = next(EXAMPLES.glob("07*.claim.json"))
EXPECTED = json.loads(next(EXAMPLES.glob("07*.expected.json")).read_text())
FIGURES = ("allowed", "applied", "refund", "forfeited", "carried_forward")


def _locations() -> list[bytes]:
    """Example 07's two locations as two one-location claims of one taxpayer."""
    return [d.encode() for d in location_documents(EXAMPLE.read_text())]


def _file_both(office) -> list[dict]:
    h = office.auth("preparer")
    out = []
    for body in _locations():
        r = office.client.post(f"{CLAIMS}?submit=true", content=body, headers=h)
        assert r.status_code == 201, r.text
        out.append(r.json())
    return out


def _claim(office, claim_id: int) -> dict:
    return office.client.get(f"{CLAIMS}/{claim_id}", headers=office.auth("examiner")).json()


def _periods(det: dict) -> list[tuple]:
    return [(p["start"], *(p[k] for k in FIGURES)) for p in det["periods"]]


def _check_one_return(ledger: dict, claim_ids: list[int]) -> None:
    """L6 across the return: no credit listed twice, and in each period the locations together
    apply no more than the one room (which is within 50% of the liability, L2)."""
    keys = [(e["claim_id"], e["period_start"], e["origin"]) for e in ledger["entries"]]
    assert len(keys) == len(set(keys))
    assert {e["claim_id"] for e in ledger["entries"]} <= set(claim_ids)
    liability = {p["start"]: Decimal(p["liability"]) for p in json.loads(EXAMPLE.read_text())["periods"]}
    for p in ledger["periods"]:
        applied = sum(Decimal(e["applied"]) for e in ledger["entries"] if e["period_start"] == p["period_start"])
        assert Decimal(p["applied"]) == applied <= Decimal(p["room"]) <= liability[p["period_start"]] / 2


def test_two_location_claims_are_decided_as_example_07_expects(office):
    federal, admiral = _file_both(office)
    assert federal["determination"]["periods"][1]["applied"] == "6000.00"  # alone, the whole room of 2011
    for claim, want in zip((federal, admiral), EXPECTED["locations"]):
        det = _claim(office, claim["id"])["determination"]
        assert _periods(det) == _periods(want), want["id"]
        assert (det["credit"], det["refund"], det["sustained_effort_ratio"]) == (want["credit"], want["refund"], want["sustained_effort_ratio"])
        assert [p["room"] for p in det["return"]["periods"]] == [p["room"] for p in EXPECTED["periods"]]
    ledger = office.client.get(f"/api/v1/taxpayers/{federal['taxpayer_id']}/ledger", headers=office.auth("examiner")).json()
    _check_one_return(ledger, [federal["id"], admiral["id"]])
    assert [(p["period_start"], *(p[k] for k in FIGURES)) for p in ledger["periods"]] == _periods(EXPECTED)
    assert ledger["carryforward_by_origin"] == {"year_one": "0.00", "year_two": "0.00"}


def test_the_recomputed_share_is_a_revision_with_its_reason_and_audit_event(office):
    federal, admiral = _file_both(office)
    revisions = office.client.get(f"{CLAIMS}/{federal['id']}/revisions", headers=office.auth("preparer")).json()
    assert [r["number"] for r in revisions] == [1, 2]
    assert "one return" in revisions[1]["reason"] and "L6" in revisions[1]["reason"] and f"claim {admiral['id']}" in revisions[1]["reason"]
    events = office.client.get("/api/v1/audit?limit=1000", headers=office.auth("auditor")).json()
    events = events["events"] if isinstance(events, dict) else events
    recomputed = [e for e in events if e["action"] == "claim.recompute"]
    assert [str(e["entity_id"]) for e in recomputed] == [str(federal["id"])]
    # the first revision, decided alone, stays readable
    first = office.client.get(f"{CLAIMS}/{federal['id']}/revisions/1", headers=office.auth("preparer")).json()
    assert first["determination"]["periods"][1]["applied"] == "6000.00"


def test_amending_one_location_recomputes_the_others_share(office):
    federal, admiral = _file_both(office)
    period = {"start": "2011-01-01", "end": "2011-12-31", "liability": "20000.00", "minimum_tax": "2000.00"}
    r = office.client.put(f"{CLAIMS}/{admiral['id']}/periods/2011-01-01", json=period, headers=office.auth("preparer"))
    assert r.status_code == 200, r.text
    now = _claim(office, federal["id"])
    assert now["revision"] == 3
    assert now["determination"]["return"]["periods"][1]["room"] == "10000.00"  # 50% of the amended liability
    doc = office.client.get(f"{CLAIMS}/{federal['id']}/revisions/3", headers=office.auth("preparer")).json()
    assert doc["document"]["periods"][1]["liability"] == "20000.00"  # the return's period, one for both
    assert "periods" in doc["reason"]
    applied = [Decimal(_claim(office, c)["determination"]["periods"][1]["applied"]) for c in (federal["id"], admiral["id"])]
    assert sum(applied) == Decimal("10000.00")


def test_a_location_leaving_the_return_gets_the_other_its_whole_room_back(office):
    federal, admiral = _file_both(office)
    alone = federal["determination"]
    trenton = _locations()[1].decode().replace('"Camden"', '"Trenton"', 1)  # E2: not a qualified municipality
    r = office.client.put(f"{CLAIMS}/{admiral['id']}", content=trenton, headers=office.auth("preparer"))
    assert r.status_code == 200 and r.json()["determination"]["eligible"] is False, r.text
    back = _claim(office, federal["id"])
    assert back["revision"] == 3 and _periods(back["determination"]) == _periods(alone) and "return" not in back["determination"]


def test_a_denied_location_leaves_the_return(office):
    federal, admiral = _file_both(office)
    e = office.auth("examiner")
    assert office.client.post(f"{CLAIMS}/{admiral['id']}/review", headers=e).status_code == 200
    r = office.client.post(f"{CLAIMS}/{admiral['id']}/decision", headers=e,
                           json={"outcome": "denied", "reasons": [{"rule": "B1", "message": "registers do not reconcile"}]})
    assert r.status_code == 200, r.text
    back = _claim(office, federal["id"])["determination"]
    assert _periods(back) == _periods(federal["determination"])
    ledger = office.client.get(f"/api/v1/taxpayers/{federal['taxpayer_id']}/ledger", headers=e).json()
    assert {x["claim_id"] for x in ledger["entries"]} == {federal["id"]}  # a denied claim allows nothing
    assert [p["applied"] for p in ledger["periods"]][1] == "6000.00"  # the denied claim applies nothing any more


def test_refiling_a_location_of_the_return_changes_no_ledger(office):
    federal, _admiral = _file_both(office)
    url = f"/api/v1/taxpayers/{federal['taxpayer_id']}/ledger"
    before = office.client.get(url, headers=office.auth("examiner")).json()
    body = _locations()[0]
    assert office.client.post(CLAIMS, content=body, headers=office.auth("preparer")).status_code == 409
    keyed = office.auth("preparer") | {"Idempotency-Key": "07-federal"}
    assert office.client.post(CLAIMS, content=body, headers=keyed).status_code == 409  # a key makes no second filing
    assert office.client.get(url, headers=office.auth("examiner")).json() == before


def test_a_several_location_document_is_filed_per_location(office):
    r = office.client.post(CLAIMS, content=EXAMPLE.read_bytes(), headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "locations", r.text


def test_simultaneous_filings_of_two_locations_are_one_return(live_office):
    """The taxpayer's row lock: each filing sees the other's claim, whichever commits first."""
    office = live_office.office
    bodies = _locations()
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def send(body: bytes) -> None:
        with httpx.Client(base_url=live_office.base, timeout=120, headers=office.auth("preparer")) as client:
            barrier.wait()
            codes.append(client.post(CLAIMS, content=body, headers={"content-type": "application/json"}).status_code)

    threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [201, 201]
    claims = sorted(httpx.get(f"{live_office.base}{CLAIMS}", headers=office.auth("examiner")).json(), key=lambda c: c["id"])
    by_address = {json.loads(b)["location"]["address"]: want for b, want in zip(bodies, EXPECTED["locations"])}
    for c in claims:  # whichever filed first, each location's share is example 07's
        got = httpx.get(f"{live_office.base}{CLAIMS}/{c['id']}", headers=office.auth("examiner")).json()
        doc = httpx.get(f"{live_office.base}{CLAIMS}/{c['id']}/revisions/{got['revision']}", headers=office.auth("examiner")).json()
        assert _periods(got["determination"]) == _periods(by_address[doc["document"]["location"]["address"]])
        assert got["determination"]["return"]["claims"] == [x["id"] for x in claims]
    ledger = httpx.get(f"{live_office.base}/api/v1/taxpayers/{claims[0]['taxpayer_id']}/ledger", headers=office.auth("examiner")).json()
    _check_one_return(ledger, [c["id"] for c in claims])
    assert [(p["period_start"], *(p[k] for k in FIGURES)) for p in ledger["periods"]] == _periods(EXPECTED)


def test_form_313_of_a_location_lists_the_others_credit_on_line_16(office):
    federal, admiral = _file_both(office)
    for claim, want in zip((federal, admiral), EXPECTED["locations"]):
        form = office.client.get(f"{CLAIMS}/{claim['id']}/form313/2011-01-01", headers=office.auth("preparer")).json()
        iv = form["part_iv"]
        mine = next(p["applied"] for p in want["periods"] if p["start"] == "2011-01-01")
        others = Decimal("6000.00") - Decimal(mine)
        assert (iv["other_locations_credit"], iv["allowable_credit"], iv["credit_applied"]) == (str(others), mine, mine)
        assert any("other locations" in line["name"] and line["amount"] == str(others) for line in iv["line_16"])
