"""The analysis tables as files people use: one Parquet and one CSV file per table, an Excel
workbook with one sheet per table, and the HTML report (``report``).

Tables hold money and positions as text with their exact digits (Parquet, CSV); the workbook
writes them as numbers from their decimal text (``Decimal``, never a float on the way), so a
spreadsheet adds them up.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal
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


#: Excel's rows a sheet, its header row included.
EXCEL_ROWS = 1_048_576


_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _cell(column: str, value):
    """A table's cell as the sheet holds it: a plain decimal text (the tables' exact money and
    counts) as that number, written with its own digits; any other text as text."""
    if value is None or column in _LABELS or not isinstance(value, str) or not _PLAIN_DECIMAL.fullmatch(value):
        return value
    return Decimal(value)


def write_workbook(tables: dict[str, pl.DataFrame], path: Path, max_rows: int = EXCEL_ROWS) -> Path:
    """One sheet per table (the sheet named after it), a bold header row, money as numbers,
    streamed row by row (xlsxwriter's constant memory). A table longer than a sheet's ``max_rows``
    (Excel's limit) is cut there: its last row says how many rows are left to ``NAME.parquet``
    and ``NAME.csv``, which hold them all."""
    import xlsxwriter

    tmp = path.with_name(f".{path.name}.tmp")
    wb = xlsxwriter.Workbook(str(tmp), {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False,
                                        "strings_to_urls": False})
    bold = wb.add_format({"bold": True})
    for name, df in tables.items():
        ws = wb.add_worksheet(name[:31])
        for k, col in enumerate(df.columns):
            ws.set_column(k, k, max(10, min(40, len(col) + 2)))
        ws.freeze_panes(1, 0)
        ws.write_row(0, 0, df.columns, bold)
        fits = df.height if df.height < max_rows else max_rows - 2
        columns = df.columns
        for r, row in enumerate(df.head(fits).iter_rows(), start=1):
            ws.write_row(r, 0, [_cell(col, v) for col, v in zip(columns, row)])
        if fits < df.height:
            ws.write(fits + 1, 0, f"{df.height - fits:,} more rows, beyond Excel's {max_rows:,} a sheet: every row is in {name}.parquet and {name}.csv")
    wb.close()
    os.replace(tmp, path)
    return path
