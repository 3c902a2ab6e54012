"""L6 in the batch: rows of the claims table that share a taxpayer are one return, decided as
`qmcredit compute` decides the claim with those locations, however the claims are partitioned."""

from __future__ import annotations

import json

import polars as pl
import pytest

import qmcredit
from qmcredit.batch import engine

from ..returns import period, return_claim, site, write

BEGAN = "2004-03-15"
PERIODS = [period(2004, "10000.00"), period(2005, "14000.00"), period(2006, "6000.00"), period(2007, "40000.00")]
SITES = [site("a", BEGAN, base=2, new_one=4, new_two=4), site("b", BEGAN, base=1, new_one=3, new_two=1),
         site("c", "2004-04-20", base=1, new_one=2, new_two=2)]  # c: another month, fails E4 alone


def as_compute(tp: str) -> dict:
    doc = return_claim(SITES, PERIODS)
    doc["taxpayer"] = {"id": tp, "tax": "cbt"}
    return qmcredit.decide(qmcredit.claim_from_json(json.dumps(doc))).to_dict(explain=False)


@pytest.mark.parametrize("partitions", [1, 3])
def test_L6_rows_of_one_taxpayer_are_one_return(tmp_path, partitions):
    rows = [("T-a", "T", SITES[0], PERIODS), ("S-1", "S", SITES[1], PERIODS), ("T-b", "T", SITES[1], PERIODS), ("T-c", "T", SITES[2], PERIODS)]
    rows += [(f"U-{k}", f"U{k}", SITES[0], PERIODS) for k in range(9)]  # every partition holds claims (an empty one fails, before L6 too)
    claims, payroll = write(tmp_path, rows)
    engine.run(claims, payroll, tmp_path / "out", jsonl=True, min_partitions=partitions)
    table = {r["claim_id"]: r for r in pl.read_parquet(tmp_path / "out" / "claims.parquet").to_dicts()}
    ledger = pl.read_parquet(tmp_path / "out" / "ledger.parquet")
    want = as_compute("T")
    for cid, loc in zip(("T-a", "T-b", "T-c"), want["locations"]):
        assert table[cid]["status"] == "decided"
        assert (table[cid]["refund"], table[cid]["carried_forward"]) == (loc["refund"], loc["carried_forward"])
        mine = ledger.filter(pl.col("claim_id") == cid).sort("period")
        assert mine.get_column("applied").to_list() == [p["applied"] for p in loc["periods"]]
        assert mine.get_column("room").to_list() == [p["room"] for p in want["periods"]]  # the return's room
    assert table["T-c"]["eligible"] is False and table["T-c"]["ineligible_because"] == "E4"
    assert (table["T-a"]["refund"], table["T-b"]["refund"]) == ("4285.71", "1071.43")
    alone = qmcredit.decide(qmcredit.claim_from_json(json.dumps(
        {**return_claim(SITES[1:2], PERIODS), "taxpayer": {"id": "S", "tax": "cbt"}}))).to_dict(explain=False)
    assert table["S-1"]["refund"] == alone["refund"]  # another taxpayer: its own return


def test_L6_rows_of_one_taxpayer_that_disagree_on_the_return_are_refused(tmp_path):
    rows = [("T-a", "T", SITES[0], PERIODS), ("T-b", "T", SITES[1], PERIODS[:3]), ("S-1", "S", SITES[1], PERIODS)]
    claims, payroll = write(tmp_path, rows)
    summary = engine.run(claims, payroll, tmp_path / "out", jsonl=True)
    table = {r["claim_id"]: r for r in pl.read_parquet(tmp_path / "out" / "claims.parquet").to_dicts()}
    assert (table["T-a"]["status"], table["T-b"]["status"], table["S-1"]["status"]) == ("invalid", "invalid", "decided")
    (problem,) = json.loads(table["T-a"]["problems"])
    assert problem["location"] == "periods" and "one return (L6)" in problem["message"] and "T-b" in problem["message"]
    assert summary.invalid == 2
