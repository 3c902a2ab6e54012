"""E4 (52:27BBB-55(d)): one 24-month credit period per taxpayer, across claims and locations,
held by the database also when the claims arrive at the same moment."""

from __future__ import annotations

import threading

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from .conftest import example, post_at_once, variant


def test_second_claim_with_another_window_is_refused(office):
    first = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer"))
    assert first.status_code == 201
    other = variant("01", operations_began="2005-06-10", address="9 Other St")
    r = office.client.post("/api/v1/claims", content=other, headers=office.auth("preparer"))
    assert r.status_code == 409, r.text
    problem = r.json()["problems"][0]
    assert problem["location"] == "location.operations_began" and "E4" in problem["message"]
    # the same window at another location is the same credit period: accepted
    same = office.client.post("/api/v1/claims", content=variant("01", address="7 Second Location"), headers=office.auth("preparer"))
    assert same.status_code == 201, same.text
    assert same.json()["year_one_start"] == first.json()["year_one_start"]
    tp = office.client.get(f"/api/v1/taxpayers/{first.json()['taxpayer_id']}", headers=office.auth("preparer")).json()
    assert tp["year_one_start"] == "2004-04-01"
    assert len(office.client.get("/api/v1/claims", headers=office.auth("examiner")).json()) == 2


def test_the_database_itself_refuses_a_second_window(office):
    """Even a writer that skips the service's check cannot store a claim with another window."""
    first = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer")).json()
    with pytest.raises(IntegrityError):
        with office.db.engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO claims (taxpayer_id, location_id, year_one_start, state, revision, created_by, created_at, updated_at) "
                "SELECT taxpayer_id, location_id, :other, state, revision, created_by, created_at, updated_at FROM claims WHERE id = :id"),
                {"other": "2009-01-01", "id": first["id"]})
    with pytest.raises(IntegrityError):
        with office.db.engine.begin() as conn:
            conn.execute(text("INSERT INTO credit_windows (taxpayer_id, year_one_start, created_at) "
                              "VALUES (:tp, '2009-01-01', CURRENT_TIMESTAMP)"), {"tp": first["taxpayer_id"]})


def test_simultaneous_claims_with_different_windows_one_wins(live_office):
    token = live_office.office.tokens["preparer"]
    for round_ in range(4):
        ein = f"99-00000{round_}"
        bodies = [variant("01", ein=ein), variant("01", ein=ein, operations_began="2006-02-20", address="2 Rival Rd")]
        codes = sorted(r.status_code for r in post_at_once(live_office.base, [(b, {"Authorization": f"Bearer {token}"}) for b in bodies]))
        assert codes == [201, 409], codes
    claims = httpx.get(f"{live_office.base}/api/v1/claims?limit=1000", headers={"Authorization": f"Bearer {token}"}).json()
    by_ein: dict[str, set] = {}
    for c in claims:
        by_ein.setdefault(c["taxpayer_ein"], set()).add(c["year_one_start"])
    assert all(len(starts) == 1 for starts in by_ein.values())
    assert len(claims) == 4


def test_simultaneous_claims_for_one_new_taxpayer_and_one_window_both_stand(live_office):
    token = live_office.office.tokens["preparer"]
    bodies = [variant("01", ein="88-0000001", address=f"{i} Same Window St") for i in range(3)]
    codes = [r.status_code for r in post_at_once(live_office.base, [(b, {"Authorization": f"Bearer {token}"}) for b in bodies])]
    assert codes == [201, 201, 201]
    taxpayers = httpx.get(f"{live_office.base}/api/v1/taxpayers", headers={"Authorization": f"Bearer {token}"}).json()
    assert [t["ein"] for t in taxpayers] == ["88-0000001"]


def test_simultaneous_amendments_of_one_claim_lose_no_update(live_office):
    office = live_office.office
    claim = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer")).json()
    barrier = threading.Barrier(4)
    codes: list[int] = []

    def amend(liability: str) -> None:
        period = {"start": "2007-01-01", "end": "2007-12-31", "liability": liability, "minimum_tax": "2000.00"}
        with httpx.Client(base_url=live_office.base, timeout=60, headers=office.auth("preparer")) as client:
            barrier.wait()
            codes.append(client.put(f"/api/v1/claims/{claim['id']}/periods/2007-01-01", json=period).status_code)

    threads = [threading.Thread(target=amend, args=(f"{6000 + i}.00",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(codes) <= {200, 409} and 200 in codes
    revisions = office.client.get(f"/api/v1/claims/{claim['id']}/revisions", headers=office.auth("preparer")).json()
    assert len(revisions) == 1 + codes.count(200)  # every accepted amendment is a revision, none overwritten


def test_an_amendment_moves_the_window_only_when_no_other_claim_holds_it(office):
    h = office.auth("preparer")
    first = office.client.post("/api/v1/claims", content=example("01"), headers=h).json()
    moved = office.client.put(f"/api/v1/claims/{first['id']}", content=variant("01", operations_began="2004-05-02"), headers=h)
    assert moved.status_code == 200, moved.text
    assert moved.json()["year_one_start"] == "2004-06-01"
    tp = office.client.get(f"/api/v1/taxpayers/{first['taxpayer_id']}", headers=h).json()
    assert tp["year_one_start"] == "2004-06-01"
    second = office.client.post("/api/v1/claims", content=variant("01", operations_began="2004-05-02", address="2 Annex"), headers=h)
    assert second.status_code == 201
    # L6 (issue 12): the second location's filing recomputed the first's share, its revision 3
    assert office.client.get(f"/api/v1/claims/{first['id']}", headers=h).json()["revision"] == 3
    again = office.client.put(f"/api/v1/claims/{first['id']}", content=example("01"), headers=h)
    assert again.status_code == 409 and "E4" in again.json()["problems"][0]["message"]
    assert office.client.get(f"/api/v1/claims/{first['id']}", headers=h).json()["revision"] == 3  # the refusal made none


def test_a_window_no_eligible_claim_holds_can_be_taken_again(office):
    h = office.auth("preparer")
    first = office.client.post("/api/v1/claims", content=example("01"), headers=h).json()
    elsewhere = example("01").decode().replace('"Camden"', '"Trenton"', 1)  # E2: not a qualified municipality
    r = office.client.put(f"/api/v1/claims/{first['id']}", content=elsewhere, headers=h)
    assert r.status_code == 200 and r.json()["determination"]["eligible"] is False and r.json()["year_one_start"] is None
    other = office.client.post("/api/v1/claims", content=variant("01", operations_began="2006-02-20", address="3 New Rd"), headers=h)
    assert other.status_code == 201, other.text
    assert other.json()["year_one_start"] == "2006-03-01"
