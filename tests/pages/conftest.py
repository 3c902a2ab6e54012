"""Fixtures of the page tests: the claims office on a fresh SQLite file with the demo users and
example claims, a browser-like client that signs in through the sign-in form, and a payroll CSV
made from an example claim (with and without an error)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from qmcredit.service import Settings, create_app
from qmcredit.service.db import Database
from qmcredit.service.seed import DEMO_PASSWORD, seed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "03-part-time-equivalents.claim.json"


def csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html)[1]


def sign_in(client: TestClient, username: str) -> TestClient:
    token = csrf(client.get("/signin").text)
    r = client.post("/signin", data={"username": username, "password": DEMO_PASSWORD, "csrf": token, "next": "/claims"})
    assert r.status_code == 200 and r.url.path == "/claims", r.text[:500]
    return client


@pytest.fixture
def office(tmp_path):
    url = f"sqlite:///{tmp_path / 'pages.sqlite3'}"
    db = Database(url)
    app = create_app(Settings(database_url=url), db)
    seed(db)
    yield app
    db.dispose()


@pytest.fixture
def client(office):
    with TestClient(office, headers={"accept": "text/html"}) as c:
        yield c


def example_payroll(broken: bool = False) -> tuple[dict, str]:
    """An example claim split into the header and its payroll CSV; ``broken`` writes one month wrong."""
    doc = json.loads(EXAMPLE.read_text())
    doc["taxpayer"] |= {"id": "22-7000001", "name": "Federal Street Foods LLC"}
    lines = ["employee_id,month,hours,basis"]
    for e in doc.pop("employees"):
        for month, hours in sorted(e["hours"].items()):
            lines.append(f"{e['id']},{month},{hours},{e['basis']}")
    if broken:
        lines[3] = lines[3].replace(lines[3].split(",")[1], "2004-13", 1)
    return doc, "\n".join(lines) + "\n"


def header_fields(doc: dict) -> dict[str, str]:
    """The short form's fields for a claim header."""
    t, loc = doc["taxpayer"], doc["location"]
    fields = {"taxpayer_id": t["id"], "taxpayer_name": t["name"], "tax": t["tax"], "municipality": loc["municipality"],
              "address": loc["address"], "operations_began": loc["operations_began"], "operations_source": loc["operations_source"],
              "uez_benefit": "yes" if t.get("uez_benefit") else "no"}  # Form 313 Part I question 1 is asked, never assumed
    for i, p in enumerate(doc["periods"]):
        for f in ("start", "end", "liability", "minimum_tax"):
            if p.get(f) is not None:
                fields[f"periods-{i}-{f}"] = str(p[f])
    return fields


def fill_header(page, doc: dict) -> None:
    """Fill the new-claim form's header fields in the browser (Playwright ``page``) from ``doc``;
    Form 313 Part I question 1 (E3) is a yes/no radio, answered, never assumed (issue 15)."""
    for name, value in header_fields(doc).items():
        if name == "uez_benefit":
            page.locator("#uez_benefit-no" if value == "no" else "#uez_benefit").check()
        elif name == "tax":
            page.locator("#tax").select_option(value)
        else:
            page.locator(f"#{name}").fill(value)
