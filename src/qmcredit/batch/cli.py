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
from typing import Annotated, Iterator, NoReturn, Optional

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
def _status(text: str):
    """``text`` with a spinner on a terminal while the work in the block goes on; nothing otherwise."""
    if not sys.stderr.isatty():
        yield
        return
    with _stderr().status(text):
        yield


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
    payroll: Annotated[Path, typer.Argument(help="Payroll table (.parquet or .csv): claim_id, employee_id, month, hours, basis, ownership_interest, owner_relation; or a payroll export (.csv, .tsv, .txt, .xlsx, .parquet) with --payroll-columns or --mapping.")],
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
    try:
        with payroll_table(payroll, payroll_columns, mapping, workdir or out.parent, out.name) as (payroll, read_from), \
                _progress(None, "claims") as advance:
            given = {"periods": periods, "jsonl": jsonl, "rows_per_partition": rows_per_partition, "workdir": workdir, "on_progress": advance,
                     "on_start": advance.start, "read_from": read_from}
            if workers or scheduler:
                from .distributed import cluster, dask_map

                with cluster(scheduler, workers) as client:
                    n = len(client.scheduler_info()["workers"])
                    summary = engine.run(claims, payroll, out, min_partitions=2 * max(1, n), mapper=dask_map(client), **given)
            else:
                summary = engine.run(claims, payroll, out, jobs=jobs, **given)
    except UnreadableTable as e:  # bad input data: exit 1, as an invalid claim
        refuse(e, 1)
    except ClaimError as e:
        refuse(e, 2)
    typer.echo(json.dumps(summary.to_dict(), indent=2))


@contextmanager
def payroll_table(payroll: Path, columns: str | None, mapping: Path | None, folder: Path, run: str) -> Iterator[tuple[Path, engine.ReadFrom | None]]:
    """``canonical_payroll``'s table and what it was made of, for the block (the batch's, the
    reform's); a scratch table made of an export removed when the block ends, however it ends."""
    table, read_from = canonical_payroll(payroll, columns, mapping, folder, run)
    try:
        yield table, read_from
    finally:
        if table != payroll:
            table.unlink(missing_ok=True)


def canonical_payroll(payroll: Path, columns: str | None, mapping: Path | None, folder: Path, run: str) -> tuple[Path, engine.ReadFrom | None]:
    """The payroll table itself when its columns are the payroll table's and nothing is mapped
    (the batch's speed); else the export read through the mapping (``qmcredit.imports``) and
    written as a scratch Parquet payroll table in ``folder`` (beside ``--out``, never in it: the
    run's folder holds only its outputs; removed when the run ends), with what it was made of
    (``engine.ReadFrom``): each row keeps its number in the export (``_line``), so that problems
    name the export's rows, and a row the export cannot give (a date not in the column's format,
    a status not mapped) refuses its claim, as a bad row of a payroll table does, not the run.
    Pay periods are read claim by claim (``qmcredit compute``), not by the batch. A damaged table
    is named, here or where ``engine.run`` meets the damage."""
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
            return payroll, None  # damage further in is named when the run meets it (``engine.run``)
    # a damaged Parquet file is named as the batch names it; an export of any other kind (Excel,
    # tab-separated, UTF-16 or code-page text) is read, or refused by name, by ``imports``
    damaged = unreadable([payroll]) if payroll.is_file() and payroll.suffix.lower() in (".parquet", ".pq") else None
    if damaged is not None:
        raise damaged

    from ..imports.options import mapping_from
    from ..loaders import import_payroll

    with _status(f"reading the export {payroll.name} through its columns' mapping"):
        read = import_payroll(payroll, mapping=mapping_from(columns, mapping, None, None))
    refused, problems = _by_claim(read)
    if "claim_id" not in read.table.columns:
        problems.append(Problem(payroll.name, "no claim_id column; map it with --payroll-columns claim_id=\"Header\""))
    if "period_start" in read.table.columns:
        problems.append(Problem(payroll.name, "a pay-period table: the batch reads monthly tables; decide such claims with qmcredit compute (P6)"))
    if problems:
        raise ClaimError(problems)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f".{run}.{payroll.stem}.mapped.parquet"
    before, after = read.row_name
    line = pl.col("source").str.strip_prefix(before).str.strip_suffix(after).cast(pl.UInt32).alias("_line")
    read.table.select(line, *(pl.col(c) if c in read.table.columns else pl.lit(None, dtype=pl.Utf8).alias(c) for c in PAYROLL_COLUMNS)).write_parquet(target)
    left_out = 0 if read.left_out is None else read.left_out.height
    return target, engine.ReadFrom({"payroll": payroll, "mapping": mapping}, read.row_name, refused, left_out,
                                   {"payroll_columns": columns} if columns is not None else {})


def _by_claim(read) -> tuple[dict[str, list[Problem]], list[Problem]]:
    """The problems of an export's rows left out (``Imported.left_out``) by the claim they are of,
    and every other problem, grouped (``loaders.grouped``): the table's own, which refuse the run.
    A row left out that names no claim is no claim's, as a payroll row without a claim id is."""
    import polars as pl

    from ..loaders import grouped

    of_row: dict[str, list[Problem]] = {}
    for p in read.problems:
        of_row.setdefault(p.location, []).append(p)
    refused: dict[str, list[Problem]] = {}
    if read.left_out is not None and "claim_id" in read.left_out.columns:
        for cid, source in read.left_out.select(pl.col("claim_id").str.strip_chars(), "source").iter_rows():
            found = of_row.pop(source.removesuffix(read.row_name[1]), [])  # the hours' columns summed are named after the problems
            if cid and found:  # a row left out for its column's problem (no row-level one) goes with the run
                refused.setdefault(cid, []).extend(found)
    return refused, grouped([p for ps in of_row.values() for p in ps])


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
