"""E1-E5 in a batch whose claims share what the checks read (the tax, the municipality, the UEZ
benefit, an earlier credit period, the month credit year one starts): each claim's checks, and
everything decided from them, are those `qmcredit compute` gives the claim alone, though the
checks and the claims' constants are made once for the claims that share them."""

from __future__ import annotations

import csv
import json

import polars as pl

import qmcredit
from qmcredit.batch import engine

from ..returns import period, site

PERIODS = [period(2004, "10000.00"), period(2005, "14000.00"), period(2006, "6000.00"), period(2007, "40000.00")]
#: (claim id, tax, municipality, uez benefit, earlier credit period, operations began)
CLAIMS = [
    ("A", "cbt", "Camden", False, None, "2004-03-15"),
    ("B", "cbt", "Camden", False, "2004-04", "2004-03-15"),   # E4: the same window, a recomputation
    ("C", "cbt", "Camden", False, "2003-01", "2004-03-15"),   # E4 fails
    ("D", "cbt", "Camden", False, "2003-01", "2004-03-20"),   # the same month as C: fails alike
    ("E", "cbt", "Trenton", False, None, "2004-03-15"),       # E2 fails
    ("F", "cbt", "camden ", True, "2003-06", "2004-04-02"),   # E3 and E4 fail; E2 holds, case and spacing aside
    ("G", "gross_income", "Camden", False, "2004-04", "2004-03-15"),  # E1 fails
    ("H", "insurance_premiums", "Camden", False, "2004-05", "2004-04-02"),
    ("I", "cbt", "Camden", False, "2004-05", "2004-04-02"),
]


def doc(cid, tax, municipality, uez, earlier, began) -> dict:
    s = site(cid, began, base=2, new_one=3, new_two=2)
    return {"format": "qmcredit.claim/1", "taxpayer": {"id": f"T-{cid}", "name": cid, "tax": tax, "uez_benefit": uez, "earlier_credit_period_start": earlier},
            "location": {k: s[k] for k in ("municipality", "address", "operations_began", "operations_source")} | {"municipality": municipality},
            "periods": PERIODS, "employees": s["employees"]}


def test_E1_E5_checks_made_once_for_claims_that_share_them_are_each_claims_own(tmp_path):
    docs = {c[0]: doc(*c) for c in CLAIMS}
    claims, payroll = tmp_path / "claims.csv", tmp_path / "payroll.csv"
    with claims.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim_id", "taxpayer_id", "tax", "uez_benefit", "earlier_credit_period_start", "municipality", "address",
                    "operations_began", "operations_source", "periods"])
        for cid, d in docs.items():
            tp, loc = d["taxpayer"], d["location"]
            w.writerow([cid, tp["id"], tp["tax"], str(tp["uez_benefit"]).lower(), tp["earlier_credit_period_start"] or "", loc["municipality"],
                        loc["address"], loc["operations_began"], loc["operations_source"], json.dumps(PERIODS)])
    with payroll.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim_id", "employee_id", "month", "hours"])
        for cid, d in docs.items():
            for e in d["employees"]:
                for m, h in e["hours"].items():
                    w.writerow([cid, e["id"], m, h])
    engine.run(claims, payroll, tmp_path / "out", jsonl=True)
    table = {r["claim_id"]: r for r in pl.read_parquet(tmp_path / "out" / "claims.parquet").to_dicts()}
    lines = {json.loads(ln)["claim_id"]: json.loads(ln) for ln in (tmp_path / "out" / "determinations.jsonl").read_text().splitlines()}
    failed = {}
    for cid, d in docs.items():
        alone = qmcredit.decide(qmcredit.claim_from_json(json.dumps(d))).to_dict(explain=False)
        assert lines[cid]["checks"] == alone["checks"], cid
        assert (lines[cid]["eligible"], lines[cid]["credit"], lines[cid]["refund"]) == (alone["eligible"], alone["credit"], alone["refund"]), cid
        failed[cid] = table[cid]["ineligible_because"]
    assert failed == {"A": None, "B": None, "C": "E4", "D": "E4", "E": "E2", "F": "E3,E4", "G": "E1", "H": None, "I": None}
    assert [c["message"] for c in lines["C"]["checks"] if c["rule"] == "E4"] == [
        "the taxpayer already had a 24-month credit period starting 2003-01; this claim's starts 2004-04"]
    assert [c["message"] for c in lines["B"]["checks"] if c["rule"] == "E4"] == [
        "the earlier credit period starting 2004-04 is this one (a recomputation)"]
