"""The analysis tables as files people use: one Parquet and one CSV file per table, an Excel
workbook with one sheet per table, and the HTML report (``report``).

Tables hold money and positions as text with their exact digits (Parquet, CSV); the workbook
writes them as numbers from their decimal text (``Decimal``, never a float on the way), so a
spreadsheet adds them up.
"""

from __future__ import annotations

import os
from decimal import Decimal, InvalidOperation
from pathlib import Path

import polars as pl

from ..batch.outputs import write_parquet

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


def _cell(column: str, value):
    if value is None or column in _LABELS or not isinstance(value, str):
        return value
    try:
        return Decimal(value)
    except InvalidOperation:
        return value


def write_workbook(tables: dict[str, pl.DataFrame], path: Path) -> Path:
    """One sheet per table (the sheet named after it), a bold header row, money as numbers."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    from openpyxl.cell import WriteOnlyCell
    from openpyxl.utils import get_column_letter

    wb = Workbook(write_only=True)  # streamed: a statewide claims sheet writes in seconds
    for name, df in tables.items():
        ws = wb.create_sheet(name[:31])
        for k, col in enumerate(df.columns, start=1):
            ws.column_dimensions[get_column_letter(k)].width = max(10, min(40, len(col) + 2))
        ws.freeze_panes = "A2"
        head = []
        for col in df.columns:
            cell = WriteOnlyCell(ws, value=col)
            cell.font = Font(bold=True)
            head.append(cell)
        ws.append(head)
        for row in df.iter_rows():
            ws.append([_cell(col, v) for col, v in zip(df.columns, row)])
    tmp = path.with_name(f".{path.name}.tmp")
    wb.save(tmp)
    os.replace(tmp, path)
    return path
