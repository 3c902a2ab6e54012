"""The tables of an analysis of one or more scenarios: each scenario's cost tables stacked (a
``scenario`` column first), and with reforms, each claim's figures under every scenario with the
difference from the baseline, and the count of claims that gain, lose or change eligibility."""

from __future__ import annotations

import polars as pl

from ..money import from_cents, money
from .cost import ClaimCost, claim_table, cost_tables


CHANGES = ("same", "gain", "lose", "timing", "become_eligible", "become_ineligible")


def analysis_tables(scenarios: dict[str, list[ClaimCost]]) -> dict[str, pl.DataFrame]:
    """``scenarios``: name -> its claims' costs, the baseline first (the same claims in each)."""
    per = [cost_tables(costs, name) for name, costs in scenarios.items()]
    tables = {k: pl.concat([t[k] for t in per], how="vertical") for k in per[0]}
    names = list(scenarios)
    if len(names) == 1:
        tables["claims"] = claim_table(scenarios[names[0]])
        return tables
    base = {c.claim_id: c for c in scenarios[names[0]]}
    rows, counts = [], []
    for name in names[1:]:
        tally = dict.fromkeys(CHANGES, 0)
        for c in scenarios[name]:
            b = base[c.claim_id]
            change = _change(b, c)
            tally[change] += 1
            rows.append({
                "scenario": name, "claim_id": c.claim_id, "tax": c.tax, "firm_size": b.size, "status": "decided" if c.decided else "invalid",
                "eligible_baseline": b.eligible, "eligible": c.eligible,
                "credit_baseline": money(from_cents(_credit(b))), "credit": money(from_cents(_credit(c))),
                "credit_difference": money(from_cents(_credit(c) - _credit(b))),
                "cost_baseline": money(from_cents(b.cost)), "cost": money(from_cents(c.cost)),
                "cost_difference": money(from_cents(c.cost - b.cost)),
                "carried_forward_baseline": money(from_cents(b.carried_forward)), "carried_forward": money(from_cents(c.carried_forward)),
                "new_positions_baseline": str(b.new_positions), "new_positions": str(c.new_positions), "change": change,
            })
        counts.append({"scenario": name, "claims": len(scenarios[name]), **tally})
    tables["claims"] = pl.DataFrame(rows, schema={k: pl.Boolean if k.startswith("eligible") else pl.Utf8 for k in rows[0]} if rows else None)
    tables["changes"] = pl.DataFrame(counts)
    return tables


def _credit(c: ClaimCost) -> int:
    return sum(c.credit)


def _change(base: ClaimCost, c: ClaimCost) -> str:
    """How a claim fares under a reform (``CHANGES``): eligibility first, then its credit (C2),
    then its cost; ``timing``: the same credit and cost, applied or carried otherwise."""
    if base.eligible != c.eligible:
        return "become_eligible" if c.eligible else "become_ineligible"
    if (_credit(c), c.lines, c.carried_forward) == (_credit(base), base.lines, base.carried_forward):
        return "same"
    d = (_credit(c) - _credit(base)) or (c.cost - base.cost)
    return "gain" if d > 0 else "lose" if d < 0 else "timing"
