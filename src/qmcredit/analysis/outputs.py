"""The analysis tables as files people use: one Parquet and one CSV file per table, an Excel
workbook with one sheet per table, and the HTML report (``report``).

Tables hold money and positions as text with their exact digits (Parquet, CSV); the workbook
writes them as numbers from their decimal text (``Decimal``, never a float on the way), so a
spreadsheet adds them up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
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


#: A plain decimal text (the tables' exact money and counts), which the sheet holds as a number.
_PLAIN_DECIMAL = r"^-?[0-9]+(\.[0-9]+)?$"


def _columns(ws, df: pl.DataFrame) -> list[tuple[list, Callable]]:
    """Each column of ``df`` as the sheet holds it: its cells (None: no cell, as for an empty
    text) and the typed write of ``ws`` they take. A text column's plain decimal texts (found by
    one polars pass a column) become ``Decimal``, each cell converted once and written with its own
    digits; its other texts stay text (``ws.write`` then chooses per cell); labels, flags and
    counts are written as they are."""
    out = []
    for col, dtype in df.schema.items():
        s = df.get_column(col)
        if dtype == pl.String:
            s = s.set(s == "", None)
        cells = s.to_list()
        if dtype == pl.String and col not in _LABELS:
            plain = s.str.contains(_PLAIN_DECIMAL)
            if plain.sum() == s.len() - s.null_count():
                out.append(([None if v is None else Decimal(v) for v in cells], ws.write_number))
            else:
                out.append(([Decimal(v) if p else v for v, p in zip(cells, plain.to_list())], ws.write))
        elif dtype == pl.String:
            out.append((cells, ws.write_string))
        elif dtype == pl.Boolean:
            out.append((cells, ws.write_boolean))
        else:
            out.append((cells, ws.write_number if dtype.is_numeric() else ws.write))
    return out


def write_workbook(tables: dict[str, pl.DataFrame], path: Path, max_rows: int = EXCEL_ROWS) -> Path:
    """One sheet per table (the sheet named after it), a bold header row, money as numbers,
    streamed row by row (xlsxwriter's constant memory), each cell by its column's typed write. A
    table longer than a sheet's ``max_rows`` (Excel's limit) is cut there: its last row says how
    many rows are left to ``NAME.parquet`` and ``NAME.csv``, which hold them all."""
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
        columns = _columns(ws, df.head(fits))
        writes = [w for _, w in columns]
        for r, row in enumerate(zip(*(cells for cells, _ in columns)), start=1):
            for c, (v, write) in enumerate(zip(row, writes)):
                if v is not None:
                    write(r, c, v)
        if fits < df.height:
            ws.write(fits + 1, 0, f"{df.height - fits:,} more rows, beyond Excel's {max_rows:,} a sheet: every row is in {name}.parquet and {name}.csv")
    wb.close()
    os.replace(tmp, path)
    return path
