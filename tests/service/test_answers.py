"""The answer to a filing is built from what was stored, not read back: it must be exactly what
reading the claim gives (POST /claims, then GET /claims/{id}), on both databases."""

from __future__ import annotations

import json

from .conftest import example

CLAIMS = "/api/v1/claims"


def test_filing_answers_what_reading_the_claim_gives(office):
    """B1: the determination answered at filing is the stored one, byte for byte, with and without the trace."""
    h = office.auth("preparer") | {"content-type": "application/json"}
    for explain in ("false", "true"):
        body = example("01").decode().replace('"22-1000001"', f'"22-10000{0 if explain == "false" else 9}9"', 1)
        r = office.client.post(f"{CLAIMS}?explain={explain}", content=body, headers=h)
        assert r.status_code == 201, r.text
        got = office.client.get(f"{CLAIMS}/{r.json()['id']}?explain={explain}", headers=office.auth("preparer"))
        assert got.status_code == 200
        assert r.content == got.content
        assert ("explanation" in r.json()["determination"]) == (explain == "true")
        stored = office.client.get(f"{CLAIMS}/{r.json()['id']}/determination", headers=office.auth("preparer"))
        assert json.loads(stored.content)["credit"] == r.json()["determination"]["credit"]
