"""Generate claim files for the compute benchmark: N claims of E employees each (seeded).

Realistic enough for timing: a base workforce, hires in year one, separations, part-time and
temporary workers, an owner; calendar-year CBT periods with liabilities that sometimes bind.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def month(idx: int) -> str:
    return f"{idx // 12:04d}-{idx % 12 + 1:02d}"


def claim(rng: random.Random, n_employees: int, k: int) -> dict:
    year = rng.randint(2003, 2015)
    began = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    y1 = year * 12 + int(began[5:7])  # month after operations began
    base = y1 - 12
    emps = []
    for i in range(n_employees):
        kind = rng.random()
        start = base if kind < 0.6 else base + rng.randint(0, 35)
        end = min(base + 36, start + rng.randint(6, 48))
        basis = "permanent" if rng.random() < 0.9 else rng.choice(["temporary", "seasonal"])
        full = rng.random() < 0.75
        hours = {}
        for m in range(start, end):
            h = rng.choice(["160", "168", "150", "172.5", "140"]) if full else rng.choice(["60", "87.5", "100", "120", "40"])
            hours[month(m)] = h
        emps.append({"id": f"E{i:05d}", "ownership_interest": i == 0, "owner_relation": None, "basis": basis, "hours": hours})
    periods = [{"start": f"{y}-01-01", "end": f"{y}-12-31", "liability": f"{rng.randint(500, 400000)}.{rng.randint(0, 99):02d}",
                "minimum_tax": "2000.00"} for y in range(year, year + 8)]
    return {"format": "qmcredit.claim/1",
            "taxpayer": {"id": f"22-{k:07d}", "name": f"Bench {k}", "tax": "cbt", "uez_benefit": False, "earlier_credit_period_start": None},
            "location": {"municipality": "Camden", "address": f"{k} Bench St", "operations_began": began, "operations_source": "benchmark"},
            "employees": emps, "periods": periods, "options": {}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--claims", type=int, default=1000)
    ap.add_argument("--employees", type=int, default=50)
    ap.add_argument("--seed", type=int, default=313)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    for k in range(a.claims):
        (a.out / f"claim-{k:06d}.json").write_text(json.dumps(claim(rng, a.employees, k)))


if __name__ == "__main__":
    main()
