"""A payroll export as it comes (CSV, Excel, Parquet) -> the payroll table's raw columns.

The header row is found below any title rows; columns are mapped (``mapping.guess`` plus the
user's choices); months and dates are read in the format found once per column (``dates``);
status and relation words are mapped to the table's; several hours columns are summed exactly.
Each row keeps a ``source`` naming where a person finds it. A table whose header is already the
payroll table's (FORMAT.md) takes the direct path, as fast as before.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import polars as pl

from ..payroll import hours_text_of, row_names
from ..problems import ClaimError, Problem
from . import dates
from .mapping import DATE_FIELDS, Mapping, guess

CANONICAL = ("employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation", "claim_id")
PAY_PERIOD = ("period_start", "period_end")
PEOPLE = ("name", "ssn", "hired", "separated")
#: The columns ``import_table`` may give besides ``source`` (text).
OUTPUT = ("claim_id", "employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation", *PAY_PERIOD, *PEOPLE)
_SCAN = 30  # rows searched for the header
_TOTALS = re.compile(r"^\s*(grand\s+|sub\s*-?\s*)?totals?\b|^\s*sum\s*$|^\s*totals?\s*:", re.IGNORECASE)


@dataclass
class Imported:
    """A table read: ``table`` (``OUTPUT`` columns present, as text, and ``source``), how it was
    read (the preview states all of it), and the problems of its columns and rows."""

    table: pl.DataFrame
    headers: list[str]
    columns: dict[str, list[str]]
    formats: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sheets: list[str] = field(default_factory=list)
    preview: list[dict] = field(default_factory=list)   # the first rows as found, by header
    values: dict[str, dict[str, str | None]] = field(default_factory=dict)  # field -> export word -> table word (None: unknown)
    left_out: pl.DataFrame | None = None  # the rows left out of ``table`` for a problem of theirs, as read (whose rows they were)
    row_name: tuple[str, str] = ("", "")  # a row's ``source`` is the first, its number in the file, the second

    def formats_for_saving(self) -> dict[str, str]:
        """The formats found, as a mapping file's ``date_format`` (Excel date cells need none)."""
        return {f: v for f, v in self.formats.items() if v != dates.EXCEL}


class Unmapped(ClaimError):
    """A table whose required fields have no column: ``read`` is how far its reading got (the
    columns and what they were read as), for the user to choose the missing ones."""

    def __init__(self, problems: list[Problem], read: Imported):
        super().__init__(problems)
        self.read = read


@dataclass
class _Grid:
    """A table's rows below its header: ``cells``, one text column a header (named by its place,
    ``"0"``, ``"1"``...), a cell stripped of spaces and None when empty (but a Parquet file's, as
    stored); ``numbers``, each row's number as a person sees it (line, sheet row)."""

    headers: list[str]
    cells: pl.DataFrame
    numbers: pl.Series
    unit: str                     # "line", "sheet row", "row"
    excel_dates: set[int] = field(default_factory=set)

    def column(self, header: str) -> pl.Series:
        return self.cells.get_column(str(self.headers.index(header)))

    def distinct(self, header: str) -> list[str]:
        """The column's distinct values given (not empty), sorted."""
        return sorted(self.column(header).drop_nulls().unique().to_list())

    def first_rows(self, k: int) -> list[dict[str, str | None]]:
        return [{h: r[j] for j, h in enumerate(self.headers) if h} for r in self.cells.head(k).iter_rows()]


#: What ``str.strip()`` takes off a text: every character Python counts as a space (a test checks
#: it), so that a cell is stripped in columns exactly as before, one text at a time.
_SPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
          "\u2028\u2029\u202f\u205f\u3000")


def _stripped(raw: pl.DataFrame) -> pl.DataFrame:
    """Each cell stripped of spaces, None when nothing is left."""
    return raw.select(pl.all().str.strip_chars(_SPACE)).select(pl.when(pl.all() != "").then(pl.all()).name.keep())


def _text_frame(rows: list[list[Any]], width: int) -> pl.DataFrame:
    """Rows of texts (or None), some shorter than ``width``, as text columns ``"0"``, ``"1"``..."""
    return pl.DataFrame([r + [None] * (width - len(r)) for r in rows], schema={str(j): pl.String for j in range(width)}, orient="row")


def _score(row: list[Any]) -> int:
    texts = [str(v) for v in row if isinstance(v, str) and v.strip()]
    return len(guess(texts))


def _header_at(rows: list[list[Any]], mapping: Mapping) -> int | None:
    """The first of the first rows naming at least two payroll fields (or every mapped column)."""
    wanted = {h for hs in mapping.columns.values() for h in hs}
    best, at = 1, None
    for i, row in enumerate(rows[:_SCAN]):
        texts = {str(v).strip() for v in row if v is not None}
        if wanted and wanted <= texts:
            return i
        s = _score(row)
        if s > best:
            best, at = s, i
    return at


def _names(cells: list[Any]) -> list[str]:
    """Header cells as names: blanks stay blank (ignored columns), repeats numbered."""
    out, seen = [], {}
    for v in cells:
        name = "" if v is None else str(v).strip()
        if name:
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name} ({seen[name]})"
        out.append(name)
    return out


def _grid_below_header(raw: pl.DataFrame, numbers: pl.Series, unit: str, mapping: Mapping, where: str) -> _Grid:
    """``raw``'s header, found in its first rows, and the rows below it that hold anything, each
    cell stripped (``numbers``: each row's)."""
    cells = _stripped(raw)
    head = [list(r) for r in cells.head(_SCAN).iter_rows()]
    at = _header_at(head, mapping)
    if at is None:
        shown = "; ".join(f"{unit} {numbers[i]}: " + ", ".join(repr(str(v)) for v in r if v is not None)
                          for i, r in enumerate(head[:3]) if any(v is not None for v in r)) or "nothing"
        raise ClaimError([Problem(where, f"no header row naming the payroll's columns (employee id, month or pay period, hours) in its first "
                                          f"{_SCAN} rows; found {shown}; map the columns with --columns or a mapping file")])
    body, numbers = cells.slice(at + 1), numbers.slice(at + 1)
    held = body.select(pl.any_horizontal(pl.all().is_not_null())).to_series()
    if not held.all():
        body, numbers = body.filter(held), numbers.filter(held)
    return _Grid(_names(head[at]), body, numbers, unit)


def utf16(data: bytes) -> bool:
    """Text that begins with UTF-16's byte-order mark: Excel's "Unicode Text" (tab-separated)."""
    return data[:2] in (b"\xff\xfe", b"\xfe\xff")


def _sample(text: str) -> str:
    """The first ``_SCAN`` lines of ``text``, split as ``str.splitlines`` splits (from a prefix
    that holds them: not the whole export's lines)."""
    n = 1 << 16
    while True:
        lines = text[:n].splitlines()
        if len(lines) > _SCAN or n >= len(text):
            return "\n".join(lines[:_SCAN])
        n *= 4


def _read_csv_grid(data: bytes, mapping: Mapping, where: str) -> _Grid:
    utf8 = None  # the text's own bytes when they are UTF-8: polars reads them, not the text encoded again
    try:  # UTF-16 with its byte-order mark; else UTF-8; else Windows' code page
        if utf16(data):
            text = data.decode("utf-16")
        else:
            text, utf8 = data.decode("utf-8-sig"), data.removeprefix(codecs.BOM_UTF8)
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    sample = _sample(text)
    delimiter = max(",;\t|", key=sample.count)
    found = _csv_by_polars(text, utf8 if utf8 is not None else text.encode("utf-8"), delimiter, sample)
    if found is not None:
        raw, numbers = found
    else:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter)
        rows, lines = [], []
        for row in reader:
            rows.append(row)
            lines.append(reader.line_num)
        raw, numbers = _text_frame(rows, max(1, *map(len, rows))) if rows else pl.DataFrame(), pl.Series(lines, dtype=pl.Int64)
    if not raw.height:
        raise ClaimError([Problem(where, "the table is empty")])
    return _grid_below_header(raw, numbers, "line", mapping, where)


#: How a delimiter is written in a regular expression's class and outside one.
_IN_PATTERN = {",": ",", ";": ";", "\t": r"\t", "|": r"\|"}


def _well_quoted(delimiter: str) -> str:
    """A record whose every quote is a quoted field's (opening it, closing it, or doubled inside):
    fields, each quoted whole (line breaks and all) or holding no quote and no line break, between
    delimiters."""
    d = _IN_PATTERN[delimiter]
    one = f'(?:"(?:[^"]|"")*"|[^"{d}\\r\\n]*)'
    return rf"^{one}(?:{d}{one})*\r?$"


def _lines(text: str) -> pl.Series:
    """``text``'s lines (split at line feeds), as a column."""
    return pl.Series([text]).str.split("\n").list.explode(empty_as_null=True)


def _records(text: str, lines: pl.Series, delimiter: str) -> tuple[pl.Series, int] | None:
    """The line on which each record of CSV ``text`` ends (its number as the csv module counts
    it) and the most fields a record may hold, when every quote is a quoted field's
    (``_well_quoted``: the readers differ on a quote closed before its field ends, or left open at
    the end); None otherwise. A quoted field spans lines where a line leaves an odd number of
    quotes open: the lines up to the one that closes it are one record."""
    quotes = lines.str.count_matches('"', literal=True)
    frame = pl.DataFrame({"line": lines, "record": ((quotes.cum_sum() - quotes) % 2 == 0).cum_sum(),
                          "fields": lines.str.count_matches(delimiter, literal=True)}).with_row_index("n", offset=1)
    if text.endswith("\n"):
        frame = frame.head(-1)  # the end of the last line, not a line
    records = frame.group_by("record", maintain_order=True).agg(pl.col("line").str.join("\n"), pl.col("fields").sum() + 1, pl.col("n").max())
    if not records.get_column("line").str.contains(_well_quoted(delimiter)).all():
        return None
    return records.get_column("n"), records.get_column("fields").max()


def _csv_by_polars(text: str, data: bytes, delimiter: str, sample: str) -> tuple[pl.DataFrame, pl.Series] | None:
    """CSV ``text``'s fields read by polars (about twenty times as fast as the csv module, which
    reads it otherwise) and each row's number (the line it ends on), where polars reads the rows
    as the csv module does: when every quote is a quoted field's (``_well_quoted``, each line
    alone, else ``_records``, each record of lines) and every line ends in a line feed (a
    carriage return alone ends a line for the csv module, not for polars). None otherwise, or
    when polars refuses the text: the csv module reads those. A test checks that the two agree on
    the texts polars takes. ``data``: the text in UTF-8. When each line is a record, ``sample``,
    the first lines, gives the fields most lines have, and only a longer line makes polars count
    every line's."""
    if not text or text.count("\r") != text.count("\r\n"):
        return None
    read = lambda width: pl.read_csv(data, has_header=False, separator=delimiter, quote_char='"',  # noqa: E731
                                     schema={str(j): pl.String for j in range(width)})
    lines = _lines(text) if '"' in text else None
    if lines is not None and not lines.str.contains(_well_quoted(delimiter)).all():
        found = _records(text, lines, delimiter)  # records over several lines, or quotes the readers differ on
        if found is None:
            return None
        numbers, width = found
        try:
            return read(width), numbers
        except pl.exceptions.PolarsError:
            return None
    for every_line in (False, True):  # a record a line
        if every_line:
            lines = _lines(text) if lines is None else lines
        width = 1 + ((lines.str.count_matches(delimiter, literal=True).max() or 0) if every_line
                     else max(line.count(delimiter) for line in sample.split("\n")))
        try:
            raw = read(width)
        except pl.exceptions.PolarsError:
            continue
        return raw, pl.int_range(1, raw.height + 1, eager=True)
    return None


def _excel_text(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, datetime):
        return v.date().isoformat() if v.time() == datetime.min.time() else v.isoformat(sep=" ")
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)  # a cell's number, as Excel shows it
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _read_excel_grid(data: bytes, mapping: Mapping, where: str) -> tuple[_Grid, list[str], str]:
    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        names = wb.sheetnames
        listed = ", ".join(f"{i + 1} {n!r}" for i, n in enumerate(names))
        if mapping.sheet is not None:
            s = mapping.sheet
            chosen = names[int(s) - 1] if s.isdigit() and 1 <= int(s) <= len(names) else s if s in names else None
            if chosen is None:
                raise ClaimError([Problem(where, f"no sheet {s!r}; its sheets: {listed}")])
            candidates = [chosen]
        else:
            candidates = names
        found: list[tuple[str, _Grid]] = []
        failures: list[str] = []
        for sheet in candidates:
            raw = [list(r) for r in wb[sheet].iter_rows(values_only=True)]
            if not any(any(v is not None for v in r) for r in raw):
                failures.append(f"{sheet!r} is empty")
                continue
            is_date = [[isinstance(v, (date, datetime)) for v in r] for r in raw]
            rows = [[_excel_text(v) for v in r] for r in raw]
            try:
                grid = _grid_below_header(_text_frame(rows, max(map(len, rows))), pl.int_range(1, len(rows) + 1, eager=True), "sheet row",
                                          mapping, where)
            except ClaimError as e:
                failures.append(f"{sheet!r}: {e.problems[0].message}")
                continue
            first = grid.numbers[0] - 1 if grid.numbers.len() else 0
            grid.excel_dates = {j for j in range(len(grid.headers)) if any(len(r) > j and r[j] for r in is_date[first:])}
            found.append((sheet, grid))
            if mapping.sheet is not None or sheet == names[0]:
                break
        if not found:
            raise ClaimError([Problem(where, f"no payroll table found: {'; '.join(failures)}; its sheets: {listed}; choose one with --sheet")])
        if len(found) > 1:
            raise ClaimError([Problem(where, f"the first sheet has no payroll table and several others have one: "
                                             f"{', '.join(repr(s) for s, _ in found)}; choose one with --sheet (its sheets: {listed})")])
        sheet, grid = found[0]
        return grid, names, sheet
    finally:
        wb.close()


def _read_parquet_grid(data: bytes) -> _Grid:
    """A Parquet file's columns as text, as stored (not stripped), a date as ``YYYY-MM-DD``."""
    df = pl.read_parquet(io.BytesIO(data))
    dated = {j for j, t in enumerate(df.dtypes) if t in (pl.Date, pl.Datetime)}
    cells = df.select((pl.col(c).cast(pl.Utf8) if df.schema[c] != pl.Date else pl.col(c).dt.to_string("%Y-%m-%d")).alias(str(j))
                      for j, c in enumerate(df.columns))
    return _Grid(_names(df.columns), cells, pl.int_range(1, df.height + 1, eager=True), "row", dated)


def is_canonical(headers: list[str]) -> bool:
    """A header that is already the payroll table's: read directly, nothing mapped."""
    names = [h.strip().lower() for h in headers]
    return bool(names) and all(n in CANONICAL for n in names) and {"employee_id", "month", "hours"} <= set(names)


def read_grid(data: bytes, kind: str, name: str, mapping: Mapping) -> tuple[_Grid, list[str], str | None]:
    if kind == "csv":
        return _read_csv_grid(data, mapping, name), [], None
    if kind == "xlsx":
        return _read_excel_grid(data, mapping, name)
    return _read_parquet_grid(data), [], None


def import_table(data: bytes, kind: str, name: str, mapping: Mapping | None = None, roster: bool = False) -> Imported:
    """Read and map an export (``kind``: csv, xlsx, parquet); raises ``ClaimError`` when no table
    is found at all; every other problem is in ``Imported.problems``."""
    mapping = mapping or Mapping()
    grid, sheets, sheet = read_grid(data, kind, name, mapping)
    where = f"{name} sheet {sheet!r} row" if sheet is not None and len(sheets) > 1 else f"{name} {grid.unit}"
    notes = []
    if sheet is not None and len(sheets) > 1:
        notes.append(f"sheet {sheet!r} (of {', '.join(repr(s) for s in sheets)})")
    if grid.numbers.len() and grid.numbers[0] > 2:
        notes.append(f"header on {grid.unit} {grid.numbers[0] - 1}, below {grid.numbers[0] - 2} title row(s)")
    return map_grid(grid, mapping, name, where, notes, sheets, roster)


def map_grid(grid: _Grid, mapping: Mapping, name: str, where: str, notes: list[str], sheets: list[str], roster: bool = False) -> Imported:
    """The grid's columns mapped to the payroll table's, in columns: each column's values read
    once each (dates, status and relation words), then given to its rows."""
    problems: list[Problem] = []
    n = grid.cells.height
    nulls = grid.cells.null_count().row(0) if grid.cells.width else ()
    present = [h for h in grid.headers if h]
    ignored = [h for h, k in zip(grid.headers, nulls) if h and n and k == n]
    unnamed = [j for j, (h, k) in enumerate(zip(grid.headers, nulls)) if not h and k < n]
    if unnamed:
        notes.append(f"{len(unnamed)} column(s) without a header ignored")
    columns = guess([h for h in present if h not in ignored] if not mapping.columns else present, mapping)
    for f, hs in mapping.columns.items():
        for h in hs:
            if h not in present:
                problems.append(Problem(name, f"columns.{f}: {h!r} is not a column of the table; its columns: {', '.join(map(repr, present))}"))
    if problems:
        raise ClaimError(problems)
    if "month" in columns and "period_start" in columns and "month" in mapping.columns and "period_start" in mapping.columns:
        problems.append(Problem(name, "map either month or period_start and period_end, not both: a table has one form or the other (FORMAT.md)"))
    need = ["employee_id"] if roster else ["employee_id", "hours"] + (
        ["period_start", "period_end"] if "period_start" in columns or "period_end" in columns else ["month"])
    missing = [f for f in need if f not in columns]
    if missing:
        read = {h: f for f, hs in columns.items() for h in hs}
        shown = ", ".join(f"{h!r}" + (f" (read as {read[h]})" if h in read else "") for h in present)
        raise Unmapped([Problem(name, f"missing column(s) {', '.join(missing)}; the table's columns: {shown}; "
                                      f"map one with --columns {missing[0]}=\"Header\" (or a mapping file)")],
                       Imported(pl.DataFrame(), present, columns, _formats(grid, columns, mapping), notes, [], sheets, grid.first_rows(5)))
    notes += [f"{h!r} has no values: ignored" for h in ignored if h not in {x for hs in columns.values() for x in hs}]
    grid = _totals_out(grid, where, problems)
    n = grid.cells.height
    source = pl.select(row_names(f"{where} ", pl.lit(grid.numbers))).to_series()
    formats: dict[str, str] = {}
    chosen = mapping.date_format
    bad = pl.repeat(False, n, eager=True)
    sums = ""
    seen_values: dict[str, dict[str, str | None]] = {}
    out: dict[str, pl.Series] = {}
    # a date column that fits two formats takes the one another date column of the table settles
    detected = {f: dates.detect(f, grid.distinct(hs[0]), chosen.get(f), grid.headers.index(hs[0]) in grid.excel_dates)
                for f, hs in columns.items() if f in DATE_FIELDS}
    settled = {d.format for d in detected.values() if d.format and not d.problem}
    for f, d in detected.items():
        fits = [c for c in d.candidates if c in settled]
        if d.problem and len(fits) == 1:
            detected[f] = dates.detect(f, grid.distinct(columns[f][0]), fits[0])
            notes.append(f"{f}: {fits[0]}, as the table's other dates (its values alone fit {' and '.join(d.candidates)})")
    for f, hs in columns.items():
        if f == "hours":
            out["hours"], sums = _hours(grid, hs)
            continue
        values = grid.column(hs[0])
        if f in DATE_FIELDS:
            found = detected[f]
            if found.problem:
                problems.append(Problem(name, f"{f} ({hs[0]!r}): {found.problem}"))
                bad = pl.repeat(True, n, eager=True)
                continue
            if found.format:
                formats[f] = found.format
            what = "month" if f == "month" else "date"
            conv, unread = _each_value(values, found.values)
            problems += (Problem(s, f"{f}: {v!r} is not a {what} in the column's format {found.format or '?'}; correct it, "
                                    f"or choose the format with --date-format {f}=FORMAT") for s, v in _at(unread, source, values))
            bad |= unread
            out[f] = pl.select(pl.when(values.is_null()).then(pl.lit("")).otherwise(conv)).to_series() if f == "month" else conv
        elif f in ("basis", "relation", "owner_relation"):
            table = mapping.value_map("basis" if f == "basis" else "relation")
            seen_values[f] = {v: table.get(v.strip().lower()) for v in grid.distinct(hs[0])}
            words, unknown = _each_value(values, seen_values[f])
            problems += (Problem(s, _unknown_word(f, v)) for s, v in _at(unknown, source, values))
            bad |= unknown
            if f == "basis":
                out["basis"] = words
            else:
                out["owner_relation"] = pl.select(pl.when(words != "owner").then(words)).to_series()
                if f == "relation" or (words == "owner").any():
                    out["_owner"] = pl.select(pl.when(words == "owner").then(pl.lit("true"))).to_series()
        elif f == "ssn":
            out["ssn"] = _each_value(values, {v: re.sub(r"[\s-]", "", v).zfill(9) if re.fullmatch(r"[\d\s-]{7,11}", v) else v
                                              for v in grid.distinct(hs[0])})[0]
        else:
            out[f] = values
    if "_owner" in out:
        mine = out.pop("_owner")
        out["ownership_interest"] = pl.select(pl.coalesce(mine, out["ownership_interest"]) if "ownership_interest" in out else mine).to_series()
    if len(columns.get("hours", [])) > 1:  # the trace names the columns summed (RULES.md, open question "paid leave")
        source = source + sums
    table = pl.DataFrame([s.alias(c).cast(pl.Utf8) for c, s in out.items()] + [source.alias("source")])
    left_out = None
    if bad.any():
        table, left_out = table.filter(~bad), table.filter(bad)
    if columns.get("hours") and len(columns["hours"]) > 1:
        notes.append(f"hours = {' + '.join(map(repr, columns['hours']))} (hours worked; paid leave is not counted: RULES.md)")
    return Imported(table, present, columns, formats, notes, problems, sheets, grid.first_rows(5), seen_values, left_out, (f"{where} ", sums))


def _totals_out(grid: _Grid, where: str, problems: list[Problem]) -> _Grid:
    """The grid without its rows that look like totals (a cell like ``Total`` or ``Grand total:``),
    each a problem. Only the rows with a cell that holds "total" or "sum" in any case (or the long s,
    which ``_TOTALS`` takes for an s) are looked at, cell by cell."""
    named = (pl.col(c).str.contains_any(["total", "sum"], ascii_case_insensitive=True) | pl.col(c).str.contains("\u017f", literal=True)
             for c in grid.cells.columns)
    near = grid.cells.with_row_index("_i").filter(pl.any_horizontal(named))
    totals = []
    for i, *row in near.iter_rows():
        label = next((v for v in row if v is not None and _TOTALS.match(v)), None)
        if label is not None:
            totals.append(i)
            problems.append(Problem(f"{where} {grid.numbers[i]}", f"{label!r} looks like a totals row: remove it, or end the table above it "
                                                                   "(a total is not an employee's hours)"))
    if not totals:
        return grid
    keep = ~pl.int_range(grid.cells.height, eager=True).is_in(totals)
    return _Grid(grid.headers, grid.cells.filter(keep), grid.numbers.filter(keep), grid.unit, grid.excel_dates)


def _each_value(values: pl.Series, read: dict[str, str | None]) -> tuple[pl.Series, pl.Series]:
    """``values`` read through ``read`` (each distinct value's reading), and where a value given
    has none (None)."""
    if not read:
        out = pl.repeat(None, values.len(), dtype=pl.String, eager=True)
    else:
        out = values.replace_strict(list(read), list(read.values()), default=None, return_dtype=pl.String)
    return out, values.is_not_null() & out.is_null()


def _at(where: pl.Series, source: pl.Series, values: pl.Series) -> list[tuple[str, str]]:
    """The rows ``where`` holds: each one's source and value."""
    rows = where.arg_true()
    return list(zip(source.gather(rows).to_list(), values.gather(rows).to_list()))


_CONTRACTOR = re.compile(r"contract|1099|independent|freelance|consultant", re.IGNORECASE)


def _unknown_word(field: str, word: str) -> str:
    """The problem of a status or relation the mapping does not know, and how to map it. A word
    for a contractor reads two ways (a contract employee is temporary; an independent contractor
    is no employee, whose rows leave the payroll): the message says both."""
    if field != "basis":
        return f"{field}: {word!r} is not a known relation to an owner; map it in the mapping file's values.relation (e.g. {word!r} = 'descendant')"
    if _CONTRACTOR.search(word):
        return (f"basis: {word!r} is not a known status: a contract employee is temporary, but an independent contractor is not an "
                f"employee and their rows leave the payroll; say which in the mapping file's values.basis (e.g. {word!r} = 'temporary')")
    return f"basis: {word!r} is not a known status; map it in the mapping file's values.basis (e.g. {word!r} = 'permanent')"


def _formats(grid: _Grid, columns: dict[str, list[str]], mapping: Mapping) -> dict[str, str]:
    """The format of each date column, found alone (for a table not read to the end)."""
    out = {}
    for f, hs in columns.items():
        if f in DATE_FIELDS:
            d = dates.detect(f, grid.distinct(hs[0]), mapping.date_format.get(f), grid.headers.index(hs[0]) in grid.excel_dates)
            if d.format and not d.problem:
                out[f] = d.format
    return out


def _hours(grid: _Grid, headers: list[str]) -> tuple[pl.Series, str]:
    """The hours of each row: the one column's text, or the exact sum of several, made once for
    each distinct set of values (a value that is not a number is kept as it is, so the payroll's
    check names it)."""
    if len(headers) == 1:
        return grid.column(headers[0]), ""
    given = pl.DataFrame([grid.column(h).alias(f"h{k}") for k, h in enumerate(headers)])
    sets = given.unique()
    sums = sets.with_columns(pl.Series("hours", [_sum(headers, vals) for vals in sets.iter_rows()], dtype=pl.String))
    summed = given.join(sums, on=sets.columns, how="left", nulls_equal=True, maintain_order="left").get_column("hours")
    return summed, f" (hours: {' + '.join(headers)})"


def _sum(headers: list[str], vals: tuple) -> str | None:
    total, bad, given = Decimal(0), None, False
    for h, v in zip(headers, vals):
        if v is None or str(v).strip() == "":
            continue
        given = True
        try:
            d = Decimal(hours_text_of(str(v)))  # a comma not a thousands separator stays, refused
            if not d.is_finite():
                raise InvalidOperation
            total += d
        except InvalidOperation:
            bad = bad or f"{v} ({h})"
    return bad if bad is not None else None if not given else format(total.normalize(), "f") if total else "0"
