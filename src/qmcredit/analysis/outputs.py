"""The analysis tables as files people use: one Parquet and one CSV file per table, an Excel
workbook with one sheet per table, and the HTML report (``report``).

Tables hold money and positions as text with their exact digits (Parquet, CSV); the workbook
writes them as numbers of those digits (never a float on the way), so a spreadsheet adds them up.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from ..batch.outputs import write_parquet
from . import xlsx

#: Text columns that are not numbers, kept as text in the workbook.
_LABELS = {"scenario", "claim_id", "tax", "firm_size", "credit_year", "status", "change", "ineligible_because"}


def write_tables(tables: dict[str, pl.DataFrame], out: Path) -> dict[str, Path]:
    """Each table as ``<name>.parquet`` and ``<name>.csv``, and all of them in ``analysis.xlsx``."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, df in tables.items():
        write_parquet(df, out / f"{name}.parquet")
        tmp = out / f".{name}.csv.tmp"
        df.write_csv(tmp)
        os.replace(tmp, out / f"{name}.csv")
        written[name] = out / f"{name}.parquet"
    written["workbook"] = write_workbook(tables, out / "analysis.xlsx")
    return written


#: Excel's rows a sheet, its header row included.
EXCEL_ROWS = 1_048_576


def write_workbook(tables: dict[str, pl.DataFrame], path: Path, max_rows: int = EXCEL_ROWS) -> Path:
    """One sheet per table (the sheet named after it), a bold header row, money as numbers
    (``xlsx``). A table longer than a sheet's ``max_rows`` (Excel's limit) is cut there: its last
    row says how many rows are left to ``NAME.parquet`` and ``NAME.csv``, which hold them all."""
    tmp = path.with_name(f".{path.name}.tmp")
    xlsx.write(tables, tmp, _LABELS, max_rows)
    os.replace(tmp, path)
    return path
