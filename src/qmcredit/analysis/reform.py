"""The same claims decided under the baseline and under each reform, in one run, where the batch
runs: partitions of claims (by claim hash, as ``batch.engine`` splits them), decided in this
process, on local worker processes, or as Dask tasks. Each partition's payroll rows are read and
their values parsed once (``engine.read_rows``); each parameter set then costs one decision pass
over them (``partition.decide_partition`` given the set: the batch's own code)."""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..batch.engine import (
    CODES_FROM_ROWS, DEFAULT_ROWS_PER_PARTITION, ROWS_PER_PROCESS, Mapper, PayrollSource, _parts, bucket, local_processes, payroll_rows,
    read_rows, serial_map, split_payroll,
)
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


def decide_sets(k: int, claims: pl.DataFrame, periods: pl.DataFrame | None, payroll: PayrollSource, sets: list[ParameterSet]) -> tuple:
    """Partition ``k`` decided under every set: its payroll rows read once. Returns ``k``, each
    set's (claims, ledger) tables, and the rows read, bad and orphaned."""
    from ..batch.partition import decide_partition

    ids = sorted({cid for cid in claims.get_column("claim_id").to_list() if cid})
    read = Future()
    read.set_result(read_rows(payroll, ids))
    shared: dict = {}  # the headers validated and the rows typed once (a reform's options are applied by core.prepare)
    results = [decide_partition(claims, periods, payroll, False, ids, read, params, shared) for params in sets]
    first = results[0]
    return k, [(r.claims, r.ledger) for r in results], (first.rows, first.bad_rows, first.orphan_rows)


def decide_scenarios(
    claims: Path, payroll: Path, periods: Path | None, sets: list[ParameterSet], *, jobs: int = 1,
    rows_per_partition: int = DEFAULT_ROWS_PER_PARTITION, rows_per_process: int = ROWS_PER_PROCESS, mapper: Mapper | None = None,
    min_partitions: int = 1, workdir: Path | None = None,
) -> tuple[list[Scenario], dict]:
    """Every claim decided under each of ``sets`` (the baseline first), and what was read. The
    partitions are planned as the batch plans a table not in claim order (``jobs`` local
    processes, one per ``rows_per_process`` rows, sharing ``rows_per_partition``; or ``mapper``,
    Dask's). ``workdir``: where the partition files go (shared storage on a cluster)."""
    table, ptable = read_tables(claims, periods)
    rows = payroll_rows(payroll)
    local = mapper is None
    jobs = max(1, min(jobs, rows // max(1, rows_per_process))) if local else 1
    n = max(min_partitions, jobs, -(-rows // max(1, rows_per_partition // jobs)))
    scratch = Path(tempfile.mkdtemp(prefix=".qmcredit-reform-", dir=workdir))
    try:
        if n == 1:
            sources = [PayrollSource(str(payroll), payroll.name, False, coded=rows >= CODES_FROM_ROWS)]
        else:
            sources = split_payroll(payroll, n, scratch / "payroll")
        parts = _parts(table, ptable, bucket(n), n)
        args = [(k, *parts[k], src, sets) for k, src in enumerate(sources)]
        with local_processes(jobs) if local and jobs > 1 else nullcontext(mapper or serial_map) as run:
            results = sorted(run(decide_sets, args), key=lambda r: r[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    taxes = taxes_of(table)
    out = []
    for i, params in enumerate(sets):
        c = pl.concat([r[1][i][0] for r in results]).sort("claim_id")
        ln = pl.concat([r[1][i][1] for r in results]).sort("claim_id", "period")
        out.append(Scenario(params, c, ln, read_claims(c, ln, taxes)))
    info = {"claims": out[0].claims.height, "partitions": n,
            **{k: sum(r[2][j] for r in results) for j, k in enumerate(("rows", "bad_rows", "orphan_rows"))}}
    return out, info
