"""``qmcredit batch`` and ``qmcredit synth``: thin shells over ``engine.run`` and ``synth.write``.

Typer-compatible functions (the main CLI registers them as commands). A progress bar of rows and
claims shows on a terminal and stays quiet otherwise.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from ..problems import ClaimError, Problem
from . import engine
from .tables import UnreadableTable


def refuse(e: ClaimError, code: int) -> NoReturn:
    """A run's tables or options refused: each problem on a line of its own, ``error: WHERE: WHAT``
    (where a table, a row, an option or ``--out``: not "the claim", as a claim file's are), as
    written (never cut to a width, a path's brackets never read as markup), and exit ``code``."""
    for p in e.problems:
        where = f"{e.source}: " if e.source and not p.location.startswith(e.source) else ""  # a file named once
        typer.echo(f"error: {where}{p}", err=True)
    raise typer.Exit(code) from None


def _stderr():
    from rich.console import Console

    return Console(stderr=True)


@contextmanager
def _progress(total_claims: int | None, label: str):
    """``advance(rows, claims)`` of a rich bar on a terminal, silent otherwise (and rich is then not
    even loaded: a batch run by a script starts reading its tables sooner); ``advance.start(n)``
    sets the number of claims."""
    if not sys.stderr.isatty():
        def advance(rows: int, claims: int) -> None:
            pass

        advance.start = lambda n: None
        yield advance
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rows]:,} rows"),
        TimeElapsedColumn(), console=_stderr(), transient=False,
    ) as progress:
        task = progress.add_task(label, total=total_claims, rows=0)

        def advance(rows: int, claims: int) -> None:
            progress.update(task, advance=claims, rows=progress.tasks[task].fields["rows"] + rows)

        advance.start = lambda n: progress.update(task, total=n)
        yield advance


def batch(
    claims: Annotated[Path, typer.Argument(help="Claims table (.parquet or .csv), one row per claim: the header fields of docs/batch.md.")],
    payroll: Annotated[Path, typer.Argument(help="Payroll table (.parquet or .csv): claim_id, employee_id, month, hours, basis, ownership_interest, owner_relation.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: claims.parquet, ledger.parquet, summary.json (and determinations.jsonl).")],
    periods: Annotated[Optional[Path], typer.Option(help="Periods table (.parquet or .csv): claim_id and one row per privilege or reporting period.")] = None,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="Also write determinations.jsonl: each claim's full determination, as `qmcredit compute` gives it.")] = False,
    jobs: Annotated[int, typer.Option(help="Local processes deciding partitions at once (default: the machine's cores), at most one per 2 million payroll rows.", min=1)] = os.cpu_count() or 1,
    workers: Annotated[Optional[int], typer.Option(help="Decide partitions on a local Dask cluster of this many worker processes.", min=1)] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Decide partitions on the Dask cluster at this address, e.g. tcp://10.0.0.5:8786 (workdir must be shared storage).")] = None,
    rows_per_partition: Annotated[int, typer.Option(help="Payroll rows in memory at once, shared by the --jobs processes (claim-hash partitions): bounds memory.", min=1)] = engine.DEFAULT_ROWS_PER_PARTITION,
    workdir: Annotated[Optional[Path], typer.Option(help="An existing folder for the partition files (default: inside --out); on a cluster, storage every worker sees.", file_okay=False, exists=True)] = None,
    payroll_columns: Annotated[Optional[str], typer.Option("--payroll-columns", help='The payroll table\'s columns, when not the payroll table\'s own names, e.g. claim_id="Client",employee_id="Emp #" (docs/payroll.md).')] = None,
    mapping: Annotated[Optional[Path], typer.Option("--mapping", help="A mapping file for the payroll table (qmcredit columns --save-mapping).")] = None,
) -> None:
    """Decide every claim of a claims table against one payroll table (N.J.S.A. 52:27BBB-55)."""
    mapped = None
    try:
        table = _canonical_payroll(payroll, payroll_columns, mapping, workdir or out.parent, out.name)
        mapped = table if table != payroll else None
        # the manifest names the export read and its mapping, not the scratch table made of them
        read_from = {"payroll": payroll, "mapping": mapping} if mapped is not None else None
        payroll = table
        with _progress(None, "claims") as advance:
            if workers or scheduler:
                from .distributed import cluster, dask_map

                with cluster(scheduler, workers) as client:
                    n = len(client.scheduler_info()["workers"])
                    summary = engine.run(claims, payroll, out, periods=periods, jsonl=jsonl, rows_per_partition=rows_per_partition,
                                         min_partitions=2 * max(1, n), mapper=dask_map(client), workdir=workdir, on_progress=advance, on_start=advance.start,
                                         read_from=read_from)
            else:
                summary = engine.run(claims, payroll, out, periods=periods, jsonl=jsonl, rows_per_partition=rows_per_partition,
                                     jobs=jobs, workdir=workdir, on_progress=advance, on_start=advance.start, read_from=read_from)
    except UnreadableTable as e:  # bad input data: exit 1, as an invalid claim
        refuse(e, 1)
    except ClaimError as e:
        refuse(e, 2)
    finally:
        if mapped is not None:
            mapped.unlink(missing_ok=True)
    typer.echo(json.dumps(summary.to_dict(), indent=2))


def _canonical_payroll(payroll: Path, columns: str | None, mapping: Path | None, folder: Path, run: str) -> Path:
    """The payroll table itself when its columns are the payroll table's and nothing is mapped
    (the batch's speed); else the export read through the mapping (``qmcredit.imports``) and
    written as a scratch Parquet payroll table in ``folder`` (beside ``--out``, never in it: the
    run's folder holds only its outputs; removed when the run ends). Pay periods are read claim by
    claim (``qmcredit compute``), not by the batch. A damaged table is named, here
    or where ``engine.run`` meets the damage."""
    import polars as pl

    from .tables import PAYROLL_COLUMNS, scan_text, unreadable

    if columns is None and mapping is None and payroll.suffix.lower() in (".csv", ".parquet", ".pq") and payroll.is_file():
        try:
            names = set(scan_text(payroll).collect_schema().names())
        except (pl.exceptions.PolarsError, OSError):
            names = set()  # a damaged table: named below
        # the payroll table's own columns (``imports.table.is_canonical``, with claim_id), checked
        # without importing the readers of exports: the batch reads while the rules are imported
        if names <= set(PAYROLL_COLUMNS) and {"claim_id", "employee_id", "month", "hours"} <= names:
            return payroll  # damage further in is named when the run meets it (``engine.run``)
    damaged = unreadable([payroll]) if payroll.is_file() else None
    if damaged is not None:
        raise damaged

    from ..imports.options import mapping_from
    from ..loaders import grouped, import_payroll

    read = import_payroll(payroll, mapping=mapping_from(columns, mapping, None, None))
    problems = grouped(read.problems)
    if "claim_id" not in read.table.columns:
        problems.append(Problem(payroll.name, "no claim_id column; map it with --payroll-columns claim_id=\"Header\""))
    if "period_start" in read.table.columns:
        problems.append(Problem(payroll.name, "a pay-period table: the batch reads monthly tables; decide such claims with qmcredit compute (P6)"))
    if problems:
        raise ClaimError(problems)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f".{run}.{payroll.stem}.mapped.parquet"
    read.table.select(pl.col(c) if c in read.table.columns else pl.lit(None, dtype=pl.Utf8).alias(c) for c in PAYROLL_COLUMNS).write_parquet(target)
    return target


def synth(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: claims, periods and payroll tables.", file_okay=False)],
    claims: Annotated[int, typer.Option(help="Number of claims (firms); about 250 payroll rows each on average.", min=1)] = 1000,
    seed: Annotated[int, typer.Option(help="Random seed: the same seed gives the same tables.", min=0)] = 1,
    kind: Annotated[str, typer.Option(help="Table format: parquet or csv.")] = "parquet",
    invalid_share: Annotated[float, typer.Option(help="Share of claims drawn to carry bad header or payroll data, from 0 to 1.", min=0, max=1)] = 0.03,
) -> None:
    """Write a realistic synthetic claims table, periods table and payroll table."""
    if kind not in ("parquet", "csv"):
        raise typer.BadParameter("kind must be parquet or csv")
    from . import synth as synthetic  # here: a batch run does not need it

    try:
        with _progress(claims, "synth") as advance:
            paths = synthetic.write(out, claims, seed, kind=kind, invalid_share=invalid_share, on_chunk=lambda c, r: advance(r, c))
    except OSError as e:  # a folder that cannot be made or written
        refuse(ClaimError([Problem(str(out), f"cannot be written: {e.strerror or e}")]), 2)
    typer.echo(json.dumps({k: str(v) for k, v in paths.items()}, indent=2))
