"""``qmcredit cost`` and ``qmcredit reform``: thin shells over ``cost``, ``reform`` and the writers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..problems import ClaimError, Problem


def write_all(tables: dict, scenarios: list[dict], out: Path) -> dict[str, str]:
    """The tables (Parquet, CSV, workbook) and the HTML report into ``out``."""
    from .outputs import write_tables
    from .report import write_report

    written = write_tables(tables, out)
    written["report"] = write_report(tables, scenarios, out / "report.html")
    return {k: str(v) for k, v in written.items()}


def _fail(e: ClaimError) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(f"error: {e}", markup=False)
    raise typer.Exit(2) from None


def cost(
    results: Annotated[Path, typer.Argument(help="A `qmcredit batch` output folder (claims.parquet, ledger.parquet).")],
    claims: Annotated[Path, typer.Option("--claims", help="The claims table the batch decided (for each claim's tax).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder: the cost tables (.parquet, .csv), analysis.xlsx, report.html.")],
) -> None:
    """What the credit costs the State: by fiscal year, tax, firm size and credit year (docs/analysis.md)."""
    from .cost import read_results
    from .tables import analysis_tables

    try:
        for name in ("claims.parquet", "ledger.parquet"):
            if not (results / name).is_file():
                raise ClaimError([Problem(str(results), f"no {name}: give the --out folder of `qmcredit batch`")])
        tables = analysis_tables({"baseline": read_results(results, claims)})
    except ClaimError as e:
        _fail(e)
    typer.echo(json.dumps(write_all(tables, [{"name": "baseline", "description": "the law as in law/parameters/"}], out), indent=2))

