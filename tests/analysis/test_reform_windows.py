"""E4 across locations (RULES.md E4, W1) under a reform of the option that moves credit year one
(``year_one_start``): the taxpayer's window is its first listed location's credit year one under
the reform, as that location's own is, in ``qmcredit compute``'s path (``decide_many``) and in
``qmcredit reform``'s (the batch's partitions) alike. Taken from the claim's own options, the
window was a month late, and the first location failed E4 against itself."""

from __future__ import annotations

import json

import polars as pl

import qmcredit
from qmcredit.core import decide_many
from qmcredit.law.parameter_set import reform_from_dict

from ..conftest import base_claim
from ..returns import period, return_claim, site, write
from .conftest import qmcredit as run

#: "a" began on the first of March 2004: its credit year one starts in March under the reform,
#: in April without it; "b" began later in March: April either way (W1).
SITES = [site("a", "2004-03-01", base=2, new_one=4, new_two=4), site("b", "2004-03-20", base=1, new_one=3, new_two=1)]
PERIODS = [period(2004, "10000.00"), period(2005, "14000.00"), period(2006, "6000.00"), period(2007, "40000.00")]
CHANGE = {"name": "Year one in the month operations began on its first day", "option": "year_one_start",
          "value": "same_month_if_first_day", "from": "2000-01-01", "source": "test", "cite": "tests/analysis/test_reform_windows.py"}
REFORM_TOML = ('name = "same_month"\n\n[[change]]\n'
               + "".join(f"{k} = {json.dumps(v)}\n" for k, v in CHANGE.items()))


def _locations(params=None) -> dict[str, tuple[bool, list[str]]]:
    doc = {**return_claim(SITES, PERIODS), "taxpayer": {"id": "T", "tax": "cbt"}}
    det = decide_many([qmcredit.claim_from_json(json.dumps(doc))], explain=False, params=params)[0].to_dict(explain=False)
    return {loc["id"]: (loc["eligible"], [c["rule"] for c in loc["ineligible_because"]]) for loc in det["locations"]}


def test_E4_the_window_follows_the_first_location_under_a_reform_of_year_one_start():
    assert _locations() == {"a": (True, []), "b": (True, [])}  # both start in April
    reform = reform_from_dict({"name": "same_month", "change": [CHANGE]})
    assert _locations(reform) == {"a": (True, []), "b": (False, ["E4"])}  # a: March, its own window; b: April, another month


def test_E4_the_reform_command_reads_the_window_as_compute_does(tmp_path):
    claims, payroll = write(tmp_path, [("T-a", "T", SITES[0], PERIODS), ("T-b", "T", SITES[1], PERIODS)])
    (tmp_path / "same_month.toml").write_text(REFORM_TOML)
    run("reform", str(claims), str(payroll), "--reform", str(tmp_path / "same_month.toml"), "--out", str(tmp_path / "out"))
    for scenario, want in (("baseline", {"T-a": (True, None), "T-b": (True, None)}), ("same_month", {"T-a": (True, None), "T-b": (False, "E4")})):
        table = pl.read_parquet(tmp_path / "out" / "scenarios" / scenario / "claims.parquet")
        got = {r["claim_id"]: (r["eligible"], r["ineligible_because"]) for r in table.to_dicts()}
        assert got == want, scenario


def test_W1_claims_that_share_credit_year_one_without_the_reform_each_get_their_own_under_it():
    """One run's claims share their ``Constants`` by credit year one and options: under the
    reform, "a" (began on the first) starts in March and "b" in April though both start in April
    without it, however many claims the run decides."""
    docs = [base_claim(s["employees"], PERIODS, began=s["operations_began"]) for s in SITES]
    reform = reform_from_dict({"name": "same_month", "change": [CHANGE]})
    dets = [d.to_dict(explain=False) for d in decide_many([qmcredit.claim_from_json(json.dumps(d)) for d in docs], explain=False, params=reform)]
    assert [d["windows"]["year_one"]["start"] for d in dets] == ["2004-03-01", "2004-04-01"]
