"""The shared worked examples (../shared/spec/examples) must always agree: positions within
0.000001, money to the cent, every field of the expected file."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import qmcredit

from .conftest import EXAMPLES, example_names

MONEY = ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")


def close(a: str, b: str) -> bool:
    return abs(Decimal(a) - Decimal(b)) <= Decimal("0.000001")


@pytest.mark.parametrize("name", example_names())
def test_example_agrees(name):
    expected = json.loads((EXAMPLES / f"{name}.expected.json").read_text())
    got = qmcredit.decide(qmcredit.load_claim(EXAMPLES / f"{name}.claim.json")).to_dict()
    assert got["eligible"] == expected["eligible"]
    assert [e["rule"] for e in got["ineligible_because"]] == [e["rule"] for e in expected["ineligible_because"]]
    assert got["windows"] == expected["windows"]
    for group in ("average_positions", "new_positions"):
        for k, v in expected[group].items():
            assert close(got[group][k], v), (group, k, got[group][k], v)
    assert close(got["sustained_effort_ratio"], expected["sustained_effort_ratio"])
    assert got["credit"] == expected["credit"]
    assert len(got["periods"]) == len(expected["periods"])
    for g, e in zip(got["periods"], expected["periods"]):
        assert (g["start"], g["end"]) == (e["start"], e["end"])
        for k in MONEY:
            assert g[k] == e[k], (g["start"], k, g[k], e[k])
    assert got["refund"] == expected["refund"]
    assert got["carried_forward"] == expected["carried_forward"]


def test_bundled_examples_are_the_shared_ones():
    """The demo's bundled copy must not drift from the shared contract."""
    from .conftest import BUNDLED_EXAMPLES, SHARED_EXAMPLES

    if not SHARED_EXAMPLES.is_dir():
        pytest.skip("../shared not beside this checkout")
    for p in SHARED_EXAMPLES.glob("*.json"):
        assert (BUNDLED_EXAMPLES / p.name).read_text() == p.read_text(), p.name
    for p in (SHARED_EXAMPLES / "next").glob("*"):  # the next examples the project implements
        if (BUNDLED_EXAMPLES / p.name).is_file():
            assert (BUNDLED_EXAMPLES / p.name).read_bytes() == p.read_bytes(), p.name
