"""An Excel workbook of tables, written as the Office Open XML parts a spreadsheet reads: one
sheet per table, a bold frozen header row, the rows made as XML text by polars, a column at a
time (a Python call a cell, as spreadsheet libraries make, cost 18 us: 7 s for the claims of a
10-million-row reform).

Cells: text as inline strings; decimal text of a number column (``-?digits[.digits]``) as the
number, its digits written as they are (exact: no float on the way); integers as numbers;
booleans as booleans; nulls as no cell."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import polars as pl

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_STYLES = (  # style 0: normal; 1: bold (the header)
    f'<styleSheet xmlns="{_MAIN}"><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>'
)
#: Characters XML 1.0 cannot hold, written as Excel writes them (``_xHHHH_``).
_CONTROL = [chr(c) for c in range(32) if chr(c) not in "\t\n\r"]
_ROWS_A_CHUNK = 50_000  # rows made as text at once: bounds memory for a statewide claims sheet
NUMBER = r"^-?\d+(\.\d+)?$"


def letters(k: int) -> str:
    """Column ``k`` (0 = A) as Excel names it."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(65 + r) + out
    return out


def _text(value: pl.Expr) -> pl.Expr:
    escaped = value.str.replace_many(["&", "<", ">"], ["&amp;", "&lt;", "&gt;"])
    escaped = escaped.str.replace_many(_CONTROL, [f"_x{ord(c):04X}_" for c in _CONTROL])
    return pl.concat_str(pl.lit('" t="inlineStr"><is><t xml:space="preserve">'), escaped, pl.lit("</t></is></c>"))


def _cell(column: str, dtype: pl.DataType, labels: set[str]) -> pl.Expr:
    """The tail of a cell's XML after ``<c r="A1`` (null: no cell)."""
    value = pl.col(column)
    if dtype == pl.Boolean:
        return pl.concat_str(pl.lit('" t="b"><v>'), value.cast(pl.UInt8).cast(pl.Utf8), pl.lit("</v></c>"))
    if dtype.is_integer():
        return pl.concat_str(pl.lit('"><v>'), value.cast(pl.Utf8), pl.lit("</v></c>"))
    text = value.cast(pl.Utf8)
    if column in labels:
        return _text(text)
    number = pl.concat_str(pl.lit('"><v>'), text, pl.lit("</v></c>"))
    return pl.when(text.str.contains(NUMBER)).then(number).otherwise(_text(text))


def _rows(df: pl.DataFrame, first: int, labels: set[str]) -> pl.Series:
    """Each row of ``df`` as a ``<row>`` of the sheet, the first numbered ``first``."""
    number = pl.int_range(first, first + pl.len(), dtype=pl.Int64).cast(pl.Utf8)
    cells = [pl.concat_str(pl.lit(f'<c r="{letters(k)}'), number, _cell(col, dtype, labels))
             for k, (col, dtype) in enumerate(df.schema.items())]
    return df.select(pl.concat_str(pl.lit('<row r="'), number, pl.lit('">'), pl.concat_str(cells, ignore_nulls=True), pl.lit("</row>"))).to_series()


def _sheet(out, df: pl.DataFrame, labels: set[str], max_rows: int, name: str) -> None:
    """One sheet's XML into ``out`` (a file open for writing): a table longer than ``max_rows``
    rows with its header is cut there, its last row saying how many are left out."""
    fits = df.height if df.height < max_rows else max_rows - 2
    last = fits + 1 + (fits < df.height)
    widths = "".join(f'<col min="{k}" max="{k}" width="{max(10, min(40, len(c) + 2))}" customWidth="1"/>' for k, c in enumerate(df.columns, 1))
    head = "".join(f'<c r="{letters(k)}1" s="1" t="inlineStr"><is><t>{escape(c)}</t></is></c>' for k, c in enumerate(df.columns))
    out.write((f'{_HEAD}<worksheet xmlns="{_MAIN}"><dimension ref="A1:{letters(max(0, df.width - 1))}{last}"/>'
               '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
               f'</sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>{f"<cols>{widths}</cols>" if widths else ""}'
               f'<sheetData><row r="1">{head}</row>').encode())
    for start in range(0, fits, _ROWS_A_CHUNK):
        chunk = df.slice(start, min(_ROWS_A_CHUNK, fits - start))
        out.write("".join(_rows(chunk, start + 2, labels).to_list()).encode())
    if fits < df.height:
        note = f"{df.height - fits:,} more rows, beyond Excel's {max_rows:,} a sheet: every row is in {name}.parquet and {name}.csv"
        out.write(f'<row r="{last}"><c r="A{last}" t="inlineStr"><is><t>{escape(note)}</t></is></c></row>'.encode())
    out.write(b"</sheetData></worksheet>")


def write(tables: dict[str, pl.DataFrame], path: Path, labels: set[str], max_rows: int) -> None:
    """``tables`` as a workbook at ``path``, a sheet each (named after it, at most 31 characters);
    ``labels``: text columns never read as numbers."""
    names = [name[:31] for name in tables]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        sheets = "".join(f'<Override PartName="/xl/worksheets/sheet{k}.xml" ContentType="{_TYPE}.worksheet+xml"/>' for k in range(1, len(names) + 1))
        z.writestr("[Content_Types].xml", f'{_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   f'<Default Extension="xml" ContentType="application/xml"/>'
                   f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPE}.sheet.main+xml"/>'
                   f'<Override PartName="/xl/styles.xml" ContentType="{_TYPE}.styles+xml"/>{sheets}</Types>')
        z.writestr("_rels/.rels", f'{_HEAD}<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="{_DOC}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
        entries = "".join(f'<sheet name={quoteattr(n)} sheetId="{k}" r:id="rId{k}"/>' for k, n in enumerate(names, 1))
        z.writestr("xl/workbook.xml", f'{_HEAD}<workbook xmlns="{_MAIN}" xmlns:r="{_DOC}"><sheets>{entries}</sheets></workbook>')
        rels = "".join(f'<Relationship Id="rId{k}" Type="{_DOC}/worksheet" Target="worksheets/sheet{k}.xml"/>' for k in range(1, len(names) + 1))
        z.writestr("xl/_rels/workbook.xml.rels", f'{_HEAD}<Relationships xmlns="{_RELS}">{rels}'
                   f'<Relationship Id="rId{len(names) + 1}" Type="{_DOC}/styles" Target="styles.xml"/></Relationships>')
        z.writestr("xl/styles.xml", _HEAD + _STYLES)
        for k, (name, df) in enumerate(tables.items(), 1):
            with z.open(f"xl/worksheets/sheet{k}.xml", "w", force_zip64=df.height > 500_000) as out:
                _sheet(out, df, labels, max_rows, name)
