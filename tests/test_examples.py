"""The shared worked examples (../shared/spec/examples) must always agree: positions within
0.000001, money to the cent, every field of the expected file."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import qmcredit

from .conftest import example_file, example_names

MONEY = ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")


def close(a: str, b: str) -> bool:
    return abs(Decimal(a) - Decimal(b)) <= Decimal("0.000001")


@pytest.mark.parametrize("name", example_names())
def test_example_agrees(name):
    expected = json.loads(example_file(name, "expected").read_text())
    got = qmcredit.decide(qmcredit.load_claim(example_file(name))).to_dict()
    agrees(got, expected)
    for g, e in zip(got.get("locations", []), expected.get("locations", []), strict=True):  # L6: each location's own figures
        assert g["id"] == e["id"]
        agrees(g, e)


def agrees(got: dict, expected: dict) -> None:
    assert got["eligible"] == expected["eligible"]
    assert [e["rule"] for e in got["ineligible_because"]] == [e["rule"] for e in expected["ineligible_because"]]
    assert got["windows"] == expected["windows"]
    for group in ("average_positions", "new_positions"):  # null at the top of a several-location return (FORMAT.md)
        assert (got[group] is None) == (expected[group] is None), group
        for k, v in (expected[group] or {}).items():
            assert close(got[group][k], v), (group, k, got[group][k], v)
    ratio = expected["sustained_effort_ratio"]
    assert got["sustained_effort_ratio"] is None if ratio is None else close(got["sustained_effort_ratio"], ratio)
    assert got["credit"] == expected["credit"]
    assert len(got["periods"]) == len(expected["periods"])
    for g, e in zip(got["periods"], expected["periods"]):
        assert (g["start"], g["end"]) == (e["start"], e["end"])
        for k in MONEY:
            if k in e:  # a location's periods have no room: the room is the return's
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
