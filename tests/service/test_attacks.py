"""Issue 14, item 1: a claim must never make the office read its own disk. Every attack of the
issue is replayed over HTTP against the real application (SQLite and PostgreSQL), and the
file-read attack against ``qmcredit serve`` run as a subprocess. One parser (``jsontext``) reads
every request: duplicate keys, NaN/Infinity, huge numbers and deep nesting are refused (422 naming
the place), and no answer tells which server paths exist."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .conftest import example

SECRET_EMPLOYEE = "SECRET-ROW-7"


def _server_payroll(folder: Path) -> Path:
    """A payroll table on the server's disk, as an attacker hopes to have it read."""
    doc = json.loads(example("01"))
    lines = ["employee_id,month,hours,basis,ownership_interest,owner_relation"]
    for i, emp in enumerate(doc["employees"]):
        ident = SECRET_EMPLOYEE if i == 0 else emp["id"]
        lines += [f"{ident},{m},{h},{emp['basis']},false," for m, h in emp["hours"].items()]
    path = folder / "server-secrets" / "payroll.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _header_text(payroll: str, tail: str) -> str:
    """Example 01 without its employees, naming ``payroll``, with raw JSON text ``tail`` added."""
    doc = json.loads(example("01"))
    doc.pop("employees")
    doc["payroll"] = payroll
    return json.dumps(doc)[:-1] + tail + "}"


ATTACKS = {
    "NaN then a duplicate key": ', "as_of": NaN, "as_of": null',
    "Infinity": ', "as_of": Infinity',
    "an integer of 5,000 digits": ', "as_of": ' + "9" * 5000,
    "a duplicate key": ', "as_of": "2007-12-31", "as_of": null',
    "nothing odd": "",
}


def _assert_refused_without_reading(response: httpx.Response, secret: Path) -> None:
    assert response.status_code == 422, response.text
    text = response.text
    assert SECRET_EMPLOYEE not in text
    assert str(secret.parent) not in text and "server-secrets" not in text and "not found" not in text
    body = response.json()
    assert body["problems"] and all(set(p) == {"location", "message"} for p in body["problems"])


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_claim_naming_a_server_file_is_refused_and_the_file_never_read(office, tmp_path, attack):
    """FORMAT.md "payroll" names a table for the CLI only; the office reads uploads, never its disk."""
    secret = _server_payroll(tmp_path)
    for name in (str(secret), str(secret.with_name("absent.csv")), "../" * 12 + str(secret).lstrip("/")):
        text = _header_text(name, ATTACKS[attack])
        answers = [
            office.client.post("/api/v1/claims?submit=true", content=text, headers={**office.auth("preparer"), "content-type": "application/json"}),
            office.client.post("/api/v1/claims", files={"claim": ("claim.json", text, "application/json")}, headers=office.auth("preparer")),
        ]
        for r in answers:
            _assert_refused_without_reading(r, secret)
    # an absent and a present file are answered alike: nothing tells which paths exist
    present = office.client.post("/api/v1/claims", content=_header_text(str(secret), ATTACKS[attack]), headers=office.auth("preparer"))
    absent = office.client.post("/api/v1/claims", content=_header_text(str(secret.with_name("payrolx.csv")), ATTACKS[attack]), headers=office.auth("preparer"))
    assert present.json() == absent.json()
    assert office.client.get("/api/v1/claims", headers=office.auth("preparer")).json() == []


@pytest.mark.parametrize("tail, message", [
    (', "as_of": NaN', "NaN is not a number JSON allows"),
    (', "as_of": -Infinity', "Infinity is not a number JSON allows"),
    (', "format": "qmcredit.claim/1"', "the key 'format' is given twice"),
    (', "x": ' + "1" * 4400, "more than 100 digits"),
    (', "x": ' + "[" * 5000 + "]" * 5000, "nested more than 64 levels deep"),
])
def test_the_one_parser_refuses_what_json_claims_never_hold(office, tail, message):
    """Claims with embedded employees too: 422 naming line and column, never 500, nothing stored."""
    text = example("01").decode().rstrip().rstrip("}") + tail + "}"
    r = office.client.post("/api/v1/claims", content=text, headers=office.auth("preparer"))
    assert r.status_code == 422, r.text
    (problem,) = r.json()["problems"]
    assert message in problem["message"] and re.fullmatch(r"line \d+ column \d+", problem["location"]), problem
    assert office.client.get("/api/v1/claims", headers=office.auth("preparer")).json() == []


def test_amendments_and_periods_go_through_the_same_parser(office, tmp_path):
    """A stored claim is amended with NaN or a server path: refused, and its revision, periods
    and pages still answer (the issue: the stored NaN made them answer 500)."""
    secret = _server_payroll(tmp_path)
    auth = office.auth("preparer")
    filed = office.client.post("/api/v1/claims", content=example("01"), headers=auth)
    assert filed.status_code == 201, filed.text
    cid = filed.json()["id"]
    bad_amend = office.client.put(f"/api/v1/claims/{cid}", content=_header_text(str(secret), ', "as_of": NaN, "as_of": null'), headers=auth)
    _assert_refused_without_reading(bad_amend, secret)
    naming = office.client.put(f"/api/v1/claims/{cid}", content=_header_text(str(secret), ""), headers=auth)
    _assert_refused_without_reading(naming, secret)
    period = '{"start": "2008-01-01", "end": "2008-12-31", "liability": NaN, "minimum_tax": "500.00"}'
    r = office.client.post(f"/api/v1/claims/{cid}/periods", content=period, headers=auth)
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "line 1 column 59", r.text
    r = office.client.put(f"/api/v1/claims/{cid}/periods/2005-01-01", content='{"start": "2005-01-01", "start": 1}', headers=auth)
    assert r.status_code == 422 and "given twice" in r.text, r.text
    for path in (f"/api/v1/claims/{cid}", f"/api/v1/claims/{cid}/revisions", f"/api/v1/claims/{cid}/revisions/1",
                 f"/api/v1/claims/{cid}/determination", f"/api/v1/claims/{cid}/form313", f"/claims/{cid}"):
        assert office.client.get(path, headers=auth).status_code == 200, path
    assert office.client.get(f"/api/v1/claims/{cid}", headers=auth).json()["revision"] == 1


def _file_with_payroll(office, name: str, rows: str) -> httpx.Response:
    """Example 01's header filed with its payroll as the JSON upload ``name``."""
    doc = json.loads(example("01"))
    doc.pop("employees")
    doc["payroll"] = name
    return office.client.post("/api/v1/claims", headers=office.auth("preparer"),
                              files={"claim": ("claim.json", json.dumps(doc), "application/json"), "payroll": (name, rows, "application/json")})


def test_a_json_payroll_upload_goes_through_the_same_parser(office):
    r = _file_with_payroll(office, "rows.json", '[{"employee_id": "A", "month": "2004-04", "hours": NaN}]')
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "payroll line 1 column 52", r.text


def test_an_upload_named_with_braces_is_named_in_its_problems(office):
    """The upload's file name is the client's: one with braces (``rows{0}.json``) was taken for a
    template of the rows' names, and a bad row gave a 500 instead of the row's problem."""
    r = _file_with_payroll(office, "rows{0}.json", '[{"employee_id": "A", "month": "2004-13", "hours": "120"}]')
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "rows{0}.json row 1", r.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_qmcredit_serve_never_reads_a_file_a_claim_names(tmp_path, database, request):
    """The issue's attack, as it was made: against ``qmcredit serve`` over a socket."""
    if database == "sqlite":
        url = f"sqlite:///{tmp_path / 'office.sqlite3'}"
        cm = None
    else:
        from .conftest import fresh_database
        cm = fresh_database("postgres", tmp_path)
        url = cm.__enter__()
        request.addfinalizer(lambda: cm.__exit__(None, None, None))
    secret = _server_payroll(tmp_path)
    port = _free_port()
    env = {**os.environ, "QMCREDIT_DATABASE_URL": url}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "qmcredit"), "serve", "--port", str(port), "--seed-examples"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        tokens: dict[str, str] = {}
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            found = re.match(r"\s+(\w+)\s+Authorization: Bearer (\S+)", line)
            if found:
                tokens[found.group(1)] = found.group(2)
            if line.startswith("try: curl") or time.monotonic() > deadline:
                break
        base = f"http://127.0.0.1:{port}/api/v1"
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        auth = {"Authorization": f"Bearer {tokens['preparer']}", "content-type": "application/json"}
        before = httpx.get(f"{base}/claims", headers=auth).json()
        for tail in ATTACKS.values():
            r = httpx.post(f"{base}/claims?submit=true", content=_header_text(str(secret), tail), headers=auth, timeout=60)
            _assert_refused_without_reading(r, secret)
        assert httpx.get(f"{base}/claims", headers=auth).json() == before
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_file_name_longer_than_a_file_system_takes_is_refused(office):
    """A file's name is kept and shown on the claim's pages and downloads: 3,000 characters were
    stored whole. The evidence upload and the payroll upload refuse it, naming the bound."""
    cid = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer")).json()["id"]
    long = "x" * 3000 + ".pdf"
    r = office.client.post(f"/api/v1/claims/{cid}/documents", files={"file": (long, b"%PDF")}, data={"kind": "lease"}, headers=office.auth("preparer"))
    assert r.status_code == 422 and "3,004 characters" in r.text and "at most 255" in r.text, r.text
    r = _file_with_payroll(office, "y" * 300 + ".json", '[{"employee_id": "A", "month": "2004-04", "hours": "120"}]')
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "payroll" and "305 characters" in r.text, r.text
    ok = office.client.post(f"/api/v1/claims/{cid}/documents", files={"file": ("z" * 251 + ".pdf", b"%PDF")}, data={"kind": "lease"},
                            headers=office.auth("preparer"))
    assert ok.status_code == 201, ok.text
