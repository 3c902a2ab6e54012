"""The same claims decided under the baseline and under each reform, in one run: the payroll
table is read and its values parsed once (``engine.read_rows``); each parameter set then costs
one decision pass (``partition.decide_partition`` with ``params``: the batch's own code)."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..batch.engine import CODES_FROM_ROWS, PayrollSource, payroll_rows, read_rows
from ..batch.tables import read_tables
from ..law.parameter_set import ParameterSet
from .cost import ClaimCost, read_claims, taxes_of


@dataclass
class Scenario:
    """One parameter set's decisions: the batch's ``claims`` and ``ledger`` tables and the costs."""

    params: ParameterSet
    claims: pl.DataFrame
    ledger: pl.DataFrame
    costs: list[ClaimCost]


def decide_scenarios(claims: Path, payroll: Path, periods: Path | None, sets: list[ParameterSet]) -> tuple[list[Scenario], dict]:
    """Every claim decided under each of ``sets`` (the baseline first), and what was read: rows,
    bad rows, payroll rows of claims not in the claims table."""
    from ..batch.partition import decide_partition

    table, ptable = read_tables(claims, periods)
    ids = sorted({cid for cid in table.get_column("claim_id").to_list() if cid})
    source = PayrollSource(str(payroll), payroll.name, False, coded=payroll_rows(payroll) >= CODES_FROM_ROWS)
    read = Future()
    read.set_result(read_rows(source, ids))  # once, for every set
    taxes = taxes_of(table)
    out, result = [], None
    for params in sets:
        result = decide_partition(table, ptable, source, False, ids, read, params)
        out.append(Scenario(params, result.claims, result.ledger, read_claims(result.claims, result.ledger, taxes)))
    info = {"claims": len(ids), "rows": result.rows, "bad_rows": result.bad_rows, "orphan_rows": result.orphan_rows}
    return out, info
