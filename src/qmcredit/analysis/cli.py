"""``qmcredit cost`` and ``qmcredit reform``: thin shells over ``cost``, ``reform`` and the writers."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ..batch.cli import refuse
from ..problems import ClaimError, Problem

if TYPE_CHECKING:
    import polars as pl


def write_all(tables: dict, scenarios: list[dict], out: Path, beside: Iterable[tuple[pl.DataFrame, Path]] = ()) -> dict[str, str]:
    """The tables (Parquet, CSV, workbook) and the HTML report into ``out``, and ``beside``'s
    tables as their Parquet files (``outputs.write_tables``)."""
    from .outputs import write_tables
    from .report import write_report

    written = write_tables(tables, out, beside)
    written["report"] = write_report(tables, scenarios, out / "report.html")
    return {k: str(v) for k, v in written.items()}


def _placed(written: dict[str, str], fresh: Path, out: Path) -> dict[str, str]:
    """The files written into ``fresh``, named where they are once it is ``out``."""
    return {k: str(out.resolve() / Path(v).relative_to(fresh)) for k, v in written.items()}


def cost(
    results: Annotated[Path, typer.Argument(help="A `qmcredit batch` output folder (claims.parquet, ledger.parquet).")],
    claims: Annotated[Path, typer.Option("--claims", help="The claims table the batch decided (for each claim's tax).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: the cost tables (.parquet, .csv), analysis.xlsx, report.html.")],
) -> None:
    """What the credit costs the State: by fiscal year, tax, firm size and credit year (docs/analysis.md)."""
    from ..batch.outputs import whole_folder
    from .cost import read_results
    from .outputs import ours
    from .tables import analysis_tables

    try:
        for name in ("claims.parquet", "ledger.parquet"):
            if not (results / name).is_file():
                raise ClaimError([Problem(str(results), f"no {name}: give the --out folder of `qmcredit batch`")])
        tables = analysis_tables({"baseline": read_results(results, claims)})
        with whole_folder(out, ours) as fresh:
            written = write_all(tables, [{"name": "baseline", "description": "the law as in law/parameters/"}], fresh)
    except ClaimError as e:
        refuse(e, 2)
    typer.echo(json.dumps(_placed(written, fresh, out), indent=2))



def reform(
    claims: Annotated[Path, typer.Argument(help="Claims table (.parquet or .csv), as for `qmcredit batch`.")],
    payroll: Annotated[Path, typer.Argument(help="Payroll table (.parquet or .csv), as for `qmcredit batch`: read once for every scenario.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: the tables (.parquet, .csv), analysis.xlsx, report.html, and each scenario's claims and ledger tables.")],
    reforms: Annotated[list[Path], typer.Option("--reform", help="A reform file (TOML, docs/analysis.md); repeat for several. None: the baseline alone.")] = [],  # noqa: B006
    periods: Annotated[Optional[Path], typer.Option(help="Periods table (.parquet or .csv), as for `qmcredit batch`.")] = None,
    jobs: Annotated[int, typer.Option(help="Local processes deciding partitions at once (default: the machine's cores), at most one per 2 million payroll rows.", min=1)] = os.cpu_count() or 1,
    workers: Annotated[Optional[int], typer.Option(help="Decide partitions on a local Dask cluster of this many worker processes.", min=1)] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Decide partitions on the Dask cluster at this address (workdir must be shared storage).")] = None,
    rows_per_partition: Annotated[int, typer.Option(help="Payroll rows in memory at once, shared by the --jobs processes: bounds memory.", min=1)] = 6_000_000,
    workdir: Annotated[Optional[Path], typer.Option(help="An existing folder for the partition files (default: inside --out); on a cluster, storage every worker sees.", file_okay=False, exists=True)] = None,
    payroll_columns: Annotated[Optional[str], typer.Option("--payroll-columns", help='The payroll table\'s columns, when not the payroll table\'s own names, e.g. claim_id="Client",employee_id="Emp #" (docs/payroll.md).')] = None,
    mapping: Annotated[Optional[Path], typer.Option("--mapping", help="A mapping file for the payroll table (qmcredit columns --save-mapping).")] = None,
) -> None:
    """Decide the same claims under the baseline and under each reform, side by side: per claim,
    in totals, by fiscal year, tax, firm size and credit year (docs/analysis.md)."""
    from ..batch.cli import payroll_table
    from ..batch.outputs import whole_folder
    from ..law.parameter_set import baseline, load_reform
    from .outputs import ours
    from .reform import decide_scenarios
    from .tables import analysis_tables

    try:
        sets = [baseline(), *(load_reform(p) for p in reforms)]
        names = [s.name for s in sets]
        if len(set(names)) < len(names):
            raise ClaimError([Problem("--reform", f"two scenarios are named alike ({', '.join(names)}); give each reform its own name")])
        with payroll_table(payroll, payroll_columns, mapping, workdir or out.parent, out.name) as (payroll, read_from), \
                whole_folder(out, ours) as fresh:  # an export read as the batch reads it
            plan = {"rows_per_partition": rows_per_partition, "workdir": workdir or fresh, "read_from": read_from}
            started = time.perf_counter()
            if workers or scheduler:
                from ..batch.distributed import cluster, dask_map

                with cluster(scheduler, workers) as client:
                    n = len(client.scheduler_info()["workers"])
                    scenarios, info = decide_scenarios(claims, payroll, periods, sets, mapper=dask_map(client), min_partitions=2 * max(1, n), **plan)
            else:
                scenarios, info = decide_scenarios(claims, payroll, periods, sets, jobs=jobs, **plan)
            decided = time.perf_counter()
            tables = analysis_tables({s.params.name: s.costs for s in scenarios})
            described = [{"name": s.params.name, "description": s.params.description, "changes": [c.row() for c in s.params.changes]} for s in scenarios]
            each = [(getattr(s, table), fresh / "scenarios" / s.params.name / f"{table}.parquet") for s in scenarios for table in ("claims", "ledger")]
            written = write_all(tables, described, fresh, each)
    except ClaimError as e:
        refuse(e, 2)
    totals = {row["scenario"]: {k: row[k] for k in ("eligible", "credit", "applied", "refunded", "forfeited", "carried_forward", "cost", "new_positions")}
              for row in tables["totals"].iter_rows(named=True)}
    info["seconds"] |= {"tables_and_files": round(time.perf_counter() - decided, 2), "total": round(time.perf_counter() - started, 2)}
    typer.echo(json.dumps({**info, "totals": totals, "files": _placed(written, fresh, out)}, indent=2))
