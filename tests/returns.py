"""Builders of several-location claims (L6) for the tests: locations whose new positions are
known by construction, and the batch's claims and payroll tables of such locations."""

from __future__ import annotations

import csv
import json

from .conftest import employee, months


def site(sid: str, began: str, base: int, new_one: int, new_two: int, hours: int = 160) -> dict:
    """A Camden location whose operations began ``began`` (credit year one starts the next month):
    ``base`` full-time employees through the base period and both credit years, ``new_one`` hired
    for credit year one of whom ``new_two`` stay through year two. New positions: ``new_one`` and
    ``new_two``; credits $2,500 and $1,250 each; ratio ``new_two / new_one``."""
    y, m = int(began[:4]), int(began[5:7])
    first = f"{y - 1:04d}-{m + 1:02d}" if m < 12 else f"{y:04d}-01"
    all36 = months(first, 36)
    y1, y2 = all36[12:24], all36[24:]
    emps = [employee(f"{sid}-B{k}", {mo: hours for mo in all36}) for k in range(base)]
    emps += [employee(f"{sid}-N{k}", {mo: hours for mo in y1 + (y2 if k < new_two else [])}) for k in range(new_one)]
    return {"id": sid, "municipality": "Camden", "address": f"{sid} St", "operations_began": began,
            "operations_source": "test", "employees": emps}


def period(year: int, liability: str, minimum_tax: str = "2000.00", **more) -> dict:
    return {"start": f"{year}-01-01", "end": f"{year}-12-31", "liability": liability, "minimum_tax": minimum_tax, **more}


def return_claim(sites: list[dict], periods: list[dict], earlier: str | None = None, **options) -> dict:
    return {
        "format": "qmcredit.claim/1",
        "taxpayer": {"id": "22-0000012", "name": "Return Co", "tax": "cbt", "uez_benefit": False, "earlier_credit_period_start": earlier},
        "locations": sites, "periods": periods, "options": options,
    }


def write(tmp_path, rows: list[tuple[str, str, dict, list]]) -> tuple:
    """A claims table (claim id, taxpayer id, location, periods) and the payroll table of the locations."""
    claims, payroll = tmp_path / "claims.csv", tmp_path / "payroll.csv"
    with claims.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim_id", "taxpayer_id", "tax", "municipality", "address", "operations_began", "periods"])
        for cid, tp, s, periods in rows:
            w.writerow([cid, tp, "cbt", s["municipality"], s["address"], s["operations_began"], json.dumps(periods)])
    with payroll.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim_id", "employee_id", "month", "hours"])
        for cid, _, s, _ in rows:
            for e in s["employees"]:
                for m, h in e["hours"].items():
                    w.writerow([cid, e["id"], m, h])
    return claims, payroll
