"""The same claims decided under the baseline and under each reform, in one run, through the
batch's own reading (``engine.decide_planned``): runs of a payroll table in claim order, else
partitions by claim hash; decided in this process, on ``--jobs`` local processes, or as Dask
tasks. Each partition's payroll rows are read, their values parsed, typed and checked once; each
parameter set then costs one decision pass over them (``partition.decide_partition`` given the
set: the batch's own code), and P1-P4 are counted again only for a set that changes what they
read (the hour tests, the windows, the options: ``partition.measure``)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..batch.engine import (
    DEFAULT_ROWS_PER_PARTITION, ROWS_PER_PROCESS, Mapper, ReadFrom, _refuse, _started, _unmatched, decide_planned, local_processes, payroll_rows,
    refusals, serial_map,
)
from ..batch.outputs import in_order, remove_stale
from ..batch.tables import read_tables
from ..law.parameter_set import ParameterSet
from .cost import Costs, read_claims, taxes_of


@dataclass
class Scenario:
    """One parameter set's decisions: the batch's ``claims`` and ``ledger`` tables and the costs."""

    params: ParameterSet
    claims: pl.DataFrame
    ledger: pl.DataFrame
    costs: Costs


def decide_scenarios(
    claims: Path, payroll: Path, periods: Path | None, sets: list[ParameterSet], *, jobs: int = 1,
    rows_per_partition: int = DEFAULT_ROWS_PER_PARTITION, rows_per_process: int = ROWS_PER_PROCESS, mapper: Mapper | None = None,
    min_partitions: int = 1, workdir: Path | None = None, read_from: ReadFrom | None = None,
) -> tuple[list[Scenario], dict]:
    """Every claim decided under each of ``sets`` (the baseline first), and what was read. The
    partitions are planned as ``qmcredit batch`` plans them (``jobs`` local processes, one per
    ``rows_per_process`` rows, sharing ``rows_per_partition``; or ``mapper``, Dask's), and claims
    without payroll rows refused as it refuses them. ``workdir``: where the partition files go
    (shared storage on a cluster). ``read_from``: the export the payroll table was made of
    (``engine.ReadFrom``), its rows named and its claims refused as the batch does."""
    read_from = read_from or ReadFrom.table(payroll)
    started = time.perf_counter()
    table, ptable = read_tables(claims, periods)
    rows = payroll_rows(payroll)
    local = mapper is None
    jobs = max(1, min(jobs, rows // max(1, rows_per_process))) if local else 1
    if workdir is not None:  # a killed run's partition files (its process gone), as the batch clears its own
        remove_stale(workdir, ".qmcredit-reform-")
    scratch = Path(tempfile.mkdtemp(prefix=f".qmcredit-reform-{os.getpid()}-", dir=workdir))
    # removes ``scratch`` once every row the scenarios use is copied out of it: while the last
    # one's costs are read (0.4 s at 142M rows), or at once on the way out
    sweeping = threading.Thread(target=shutil.rmtree, args=(scratch,), kwargs={"ignore_errors": True}, name="qmcredit-sweep")
    try:  # the partitions' ledger rows are read from ``scratch`` (``PartitionResult.ledger_rows``) before it goes
        with local_processes(jobs, _started) if local and jobs > 1 else nullcontext(mapper or serial_map) as run:
            results, n = decide_planned(lambda: (table, ptable), payroll, rows, rows_per_partition // jobs, min_partitions, run, local, jobs, scratch,
                                        (False, sets), None, row_name=read_from.row_name)
        deciding = round(time.perf_counter() - started, 2)
        taxes = taxes_of(table)
        read = {k: sum(getattr(r[1][0], k) for r in results) for k in ("rows", "bad_rows", "orphan_rows")}  # the first scenario's: the reading is shared
        read["rows"] += read_from.left_out
        read["bad_rows"] += read_from.left_out
        unrowed = {cid for r in results for cid in r[1][0].unrowed}  # the partitions' claims without a row: no second read of the payroll
        decided = [in_order(pl.concat([r[1][i].claims for r in results]), "claim_id") for i in range(len(sets))]
        unmatched = read_from.found(_unmatched(claims, payroll, pl.concat(decided), unrowed, read_from.files.get("payroll")))  # as the batch
        out = []
        for i, (params, c) in enumerate(zip(sets, decided)):
            ln = _ledger(results, i)  # one scenario's rows at a time (memory)
            if i == len(sets) - 1:
                sweeping.start()
            refused = refusals(c, unmatched)  # as the batch refuses them (with their returns, L6)
            if refused:  # the rows before let go at once (memory)
                c, ln = _refuse(c, ln, refused)
            out.append(Scenario(params, c, ln, read_claims(c, ln, taxes, made_here=True)))
    finally:
        if sweeping.ident is None:
            sweeping.start()
        sweeping.join()
    info = {"claims": out[0].claims.height, "partitions": n, **read,
            "seconds": {"reading_and_deciding": deciding, "claims_refused_and_costs_read": round(time.perf_counter() - started - deciding, 2)}}
    return out, info


def _ledger(results: list, i: int) -> pl.DataFrame:
    """Parameter set ``i``'s ledger rows of every partition, in order, in one piece (copied out of
    the partitions' files); the partitions' rows of it let go (memory)."""
    ledger = in_order(pl.concat([r[1][i].ledger_rows() for r in results]), "claim_id", "period")
    for r in results:
        r[1][i] = None
    return ledger

