"""The analysis tables as files people use: one Parquet and one CSV file per table, an Excel
workbook with one sheet per table, and the HTML report (``report``).

Tables hold money and positions as text with their exact digits (Parquet, CSV); the workbook
holds them as numbers read from that text (the nearest double, a spreadsheet's number), so a
spreadsheet adds them up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from ..batch.outputs import ours_of, write_parquet

#: The tables an analysis writes: ``cost``'s, and with reforms ``changes``.
TABLES = ("totals", "by_fiscal_year", "by_tax", "by_firm_size", "by_credit_year", "claims", "changes")
#: What an analysis writes into ``--out``: each table's files, the workbook, the report, and with
#: reforms each scenario's folder; ``--out`` may hold these (a former run) and nothing else, since a
#: run replaces it whole (``batch.outputs.whole_folder``).
FILES = frozenset({*(f"{t}.{ext}" for t in TABLES for ext in ("parquet", "csv")), "analysis.xlsx", "report.html", "scenarios"})
#: What an analysis may have left in ``--out``: ``FILES``, a half-written one, a reform's scratch folder.
ours = ours_of(FILES, ".qmcredit-reform-")


#: Text columns that are not numbers, kept as text in the workbook.
_LABELS = {"scenario", "claim_id", "tax", "firm_size", "credit_year", "status", "change", "ineligible_because"}


def write_tables(tables: dict[str, pl.DataFrame], out: Path, beside: Iterable[tuple[pl.DataFrame, Path]] = ()) -> dict[str, Path]:
    """Each table as ``<name>.parquet`` and ``<name>.csv``, and all of them in ``analysis.xlsx``;
    and ``beside``'s tables as the Parquet files named with them. The workbook is written on a
    thread of its own meanwhile: its writer runs on one processor core, and polars writes the
    files on the other (the reform's 325,000-claim sheet took about as long as every other file
    after it, benchmarks/reform.md)."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    with ThreadPoolExecutor(max_workers=1) as book:
        workbook = book.submit(write_workbook, tables, out / "analysis.xlsx")
        try:
            for name, df in tables.items():
                write_parquet(df, out / f"{name}.parquet")
                tmp = out / f".{name}.csv.tmp"
                df.write_csv(tmp)
                os.replace(tmp, out / f"{name}.csv")
                written[name] = out / f"{name}.parquet"
            for df, path in beside:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_parquet(df, path)
        finally:
            written["workbook"] = workbook.result()
    return written


#: Excel's rows a sheet, its header row included.
EXCEL_ROWS = 1_048_576


#: A plain decimal text (the tables' exact money and counts), which the sheet holds as a number.
_PLAIN_DECIMAL = r"^-?[0-9]+(\.[0-9]+)?$"


def _sheet(df: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """``df`` as its sheet holds it, a type a column, in the types the writer is known to write
    cell for cell (text, Float64, Int64, Boolean; any other would be refused rather than trusted),
    and the decimal places each number column's text has (its most). A text column whose every
    text is a plain decimal (money, positions) becomes numbers, its decimal text read once to the
    nearest double, which is what a spreadsheet holds; a text column with any other text stays
    text, so a column is numbers or text, never both; an empty text is no cell; labels stay text."""
    texts = [col for col, dtype in df.schema.items() if dtype == pl.String and col not in _LABELS]
    found = df.select(  # each text column at once: all plain decimals (empty texts aside), and the most decimal places
        *(pl.col(col).filter(pl.col(col) != "").str.contains(_PLAIN_DECIMAL).all().alias(f"plain:{col}") for col in texts),
        *((pl.col(col).str.len_bytes() - 1 - pl.col(col).str.find(".", literal=True)).max().alias(f"places:{col}") for col in texts),
    ).row(0, named=True) if texts else {}
    columns, places = [], {}
    for col, dtype in df.schema.items():
        s = df.get_column(col)
        if dtype == pl.String:
            s = s.set(s == "", None)
            if found.get(f"plain:{col}"):
                places[col] = found[f"places:{col}"] or 0
                s = s.cast(pl.Float64)
        elif dtype.is_integer():
            s = s.cast(pl.Int64)
        elif dtype.is_float():
            s = s.cast(pl.Float64)
        elif dtype != pl.Boolean:
            raise TypeError(f"column {col!r} of type {dtype} has no cell type in the workbook")
        columns.append(s)
    return pl.DataFrame(columns), places


def number_format(places: int) -> str:
    """The spreadsheet's number format that shows a number column with the digits of its table's
    text: thousands separated, ``places`` decimals (``2,500.00`` for ``2500.00``)."""
    return "#,##0" + ("." + "0" * places if places else "")


def _cut(df: pl.DataFrame, name: str, max_rows: int) -> pl.DataFrame:
    """``df`` as a sheet of at most ``max_rows`` rows (its header included): a longer table stops
    one row short, and that row says, in its first column, how many rows are left to
    ``NAME.parquet`` and ``NAME.csv``, which hold them all."""
    if df.height < max_rows:
        return df
    fits = max_rows - 2
    first = df.columns[0]
    note = f"{df.height - fits:,} more rows, beyond Excel's {max_rows:,} a sheet: every row is in {name}.parquet and {name}.csv"
    head = df.head(fits).with_columns(pl.col(first).cast(pl.String))
    return pl.concat([head, pl.DataFrame({first: [note]})], how="diagonal")


def write_workbook(tables: dict[str, pl.DataFrame], path: Path, max_rows: int = EXCEL_ROWS) -> Path:
    """One sheet per table (the sheet named after it), a bold and frozen header row with filters,
    money and positions as numbers (``_sheet``) shown with their table's decimals
    (``number_format``), a table longer than a sheet cut with a note (``_cut``). Written by
    rust_xlsxwriter from the columns (rustpy-xlsxwriter: about 0.7 us a cell, against 10-16 us
    for xlsxwriter's per-cell Python, which made the reform's 325,000-claim sheet cost more than
    the batch's whole decision), to a temporary file that replaces ``path`` only when whole."""
    from rustpy_xlsxwriter import FastExcel, Format

    tmp = path.with_name(f".{path.name}.tmp")
    book = FastExcel(str(tmp), output_format="xlsx").format(bold_headers=True).freeze(row=1)
    for name, df in tables.items():
        typed, places = _sheet(df)
        sheet = _cut(typed, name, max_rows)
        book = book.sheet(name[:31], sheet, column_widths=[max(10, min(40, len(c) + 2)) for c in sheet.columns], autofilter=bool(sheet.width),
                          column_formats={col: Format().set_num_format(number_format(k)) for col, k in places.items()})
    try:
        book.save()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return path
