"""A payroll export as it comes (CSV, Excel, Parquet) -> the payroll table's raw columns.

The header row is found below any title rows; columns are mapped (``mapping.guess`` plus the
user's choices); months and dates are read in the format found once per column (``dates``);
status and relation words are mapped to the table's; several hours columns are summed exactly.
Each row keeps a ``source`` naming where a person finds it. A table whose header is already the
payroll table's (FORMAT.md) takes the direct path, as fast as before.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import polars as pl

from ..payroll import hours_text_of
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
    headers: list[str]
    rows: list[list[Any]]
    numbers: list[int]            # each row's number as a person sees it (line, sheet row)
    unit: str                     # "line", "sheet row", "row"
    excel_dates: set[int] = field(default_factory=set)


def _cell(v: Any) -> Any:
    if isinstance(v, str):
        v = v.strip()
        return v or None
    return v


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


def _grid_from_rows(rows: list[list[Any]], numbers: list[int], unit: str, mapping: Mapping, where: str) -> _Grid:
    at = _header_at(rows, mapping)
    if at is None:
        shown = "; ".join(f"{unit} {numbers[i]}: " + ", ".join(repr(str(v)) for v in r if v is not None)
                          for i, r in enumerate(rows[:3]) if any(v is not None for v in r)) or "nothing"
        raise ClaimError([Problem(where, f"no header row naming the payroll's columns (employee id, month or pay period, hours) in its first "
                                          f"{_SCAN} rows; found {shown}; map the columns with --columns or a mapping file")])
    width = max(len(r) for r in rows)
    headers = _names(rows[at] + [None] * (width - len(rows[at])))
    body = [(r + [None] * (width - len(r)), n) for r, n in zip(rows[at + 1:], numbers[at + 1:]) if any(v is not None for v in r)]
    return _Grid(headers, [r for r, _ in body], [n for _, n in body], unit)


def utf16(data: bytes) -> bool:
    """Text that begins with UTF-16's byte-order mark: Excel's "Unicode Text" (tab-separated)."""
    return data[:2] in (b"\xff\xfe", b"\xfe\xff")


def _read_csv_grid(data: bytes, mapping: Mapping, where: str) -> _Grid:
    try:  # UTF-16 with its byte-order mark; else UTF-8; else Windows' code page
        text = data.decode("utf-16") if utf16(data) else data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    sample = "\n".join(text.splitlines()[:_SCAN])
    delimiter = max(",;\t|", key=sample.count)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows, numbers = [], []
    for row in reader:
        rows.append([_cell(v) for v in row])
        numbers.append(reader.line_num)
    if not rows:
        raise ClaimError([Problem(where, "the table is empty")])
    return _grid_from_rows(rows, numbers, "line", mapping, where)


def _excel_text(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.date().isoformat() if v.time() == datetime.min.time() else v.isoformat(sep=" ")
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)  # a cell's number, as Excel shows it
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return _cell(v)


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
                grid = _grid_from_rows(rows, list(range(1, len(rows) + 1)), "sheet row", mapping, where)
            except ClaimError as e:
                failures.append(f"{sheet!r}: {e.problems[0].message}")
                continue
            first = next(i for i, n in enumerate(range(1, len(rows) + 1)) if n == grid.numbers[0]) if grid.numbers else 0
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
    df = pl.read_parquet(io.BytesIO(data))
    dated = {j for j, t in enumerate(df.dtypes) if t in (pl.Date, pl.Datetime)}
    df = df.select(pl.col(c).cast(pl.Utf8) if df.schema[c] != pl.Date else pl.col(c).dt.to_string("%Y-%m-%d") for c in df.columns)
    return _Grid(_names(df.columns), [list(r) for r in df.iter_rows()], list(range(1, df.height + 1)), "row", dated)


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
    if grid.numbers and grid.numbers[0] > 2:
        notes.append(f"header on {grid.unit} {grid.numbers[0] - 1}, below {grid.numbers[0] - 2} title row(s)")
    return map_grid(grid, mapping, name, where, notes, sheets, roster)


def _column(grid: _Grid, header: str) -> list[Any]:
    j = grid.headers.index(header)
    return [r[j] for r in grid.rows]


def map_grid(grid: _Grid, mapping: Mapping, name: str, where: str, notes: list[str], sheets: list[str], roster: bool = False) -> Imported:
    problems: list[Problem] = []
    present = [h for h in grid.headers if h]
    ignored = [h for h in present if grid.rows and all(r[grid.headers.index(h)] is None for r in grid.rows)]
    unnamed = [j for j, h in enumerate(grid.headers) if not h and any(r[j] is not None for r in grid.rows)]
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
        preview = [{h: r[j] for j, h in enumerate(grid.headers) if h} for r in grid.rows[:5]]
        raise Unmapped([Problem(name, f"missing column(s) {', '.join(missing)}; the table's columns: {shown}; "
                                      f"map one with --columns {missing[0]}=\"Header\" (or a mapping file)")],
                       Imported(pl.DataFrame(), present, columns, _formats(grid, columns, mapping), notes, [], sheets, preview))
    notes += [f"{h!r} has no values: ignored" for h in ignored if h not in {x for hs in columns.values() for x in hs}]
    n = len(grid.rows)
    out: dict[str, list] = {}
    totals = [i for i, r in enumerate(grid.rows) if any(isinstance(v, str) and _TOTALS.match(v) for v in r)]
    for i in totals:
        label = next(v for v in grid.rows[i] if isinstance(v, str) and _TOTALS.match(v))
        problems.append(Problem(f"{where} {grid.numbers[i]}", f"{label!r} looks like a totals row: remove it, or end the table above it "
                                                              "(a total is not an employee's hours)"))
    keep = [i for i in range(n) if i not in set(totals)]
    if totals:
        grid = _Grid(grid.headers, [grid.rows[i] for i in keep], [grid.numbers[i] for i in keep], grid.unit, grid.excel_dates)
        n = len(keep)
    source = [f"{where} {k}" for k in grid.numbers]
    formats: dict[str, str] = {}
    chosen = mapping.date_format
    bad_rows: set[int] = set()
    sums = ""
    seen_values: dict[str, dict[str, str | None]] = {}
    # a date column that fits two formats takes the one another date column of the table settles
    detected = {f: dates.detect(f, sorted({str(v) for v in _column(grid, hs[0]) if v is not None}), chosen.get(f),
                                grid.headers.index(hs[0]) in grid.excel_dates) for f, hs in columns.items() if f in DATE_FIELDS}
    settled = {d.format for d in detected.values() if d.format and not d.problem}
    for f, d in detected.items():
        fits = [c for c in d.candidates if c in settled]
        if d.problem and len(fits) == 1:
            detected[f] = dates.detect(f, sorted({str(v) for v in _column(grid, columns[f][0]) if v is not None}), fits[0])
            notes.append(f"{f}: {fits[0]}, as the table's other dates (its values alone fit {' and '.join(d.candidates)})")
    for f, hs in columns.items():
        if f == "hours":
            out["hours"], sums = _hours(grid, hs)
            continue
        values = [None if v is None else str(v) for v in _column(grid, hs[0])]
        if f in DATE_FIELDS:
            found = detected[f]
            if found.problem:
                problems.append(Problem(name, f"{f} ({hs[0]!r}): {found.problem}"))
                bad_rows.update(range(n))
                continue
            if found.format:
                formats[f] = found.format
            fmt = found.format or "?"
            conv = []
            for i, v in enumerate(values):
                if v is None:
                    conv.append(None)
                elif found.values.get(v) is None:
                    conv.append(None)
                    bad_rows.add(i)
                    what = "month" if f == "month" else "date"
                    problems.append(Problem(source[i], f"{f}: {v!r} is not a {what} in the column's format {fmt}; correct it, "
                                                       f"or choose the format with --date-format {f}=FORMAT"))
                else:
                    conv.append(found.values[v])
            if f == "month":
                conv = [c if c is not None or v is not None else "" for c, v in zip(conv, values)]
            out[f] = conv
        elif f in ("basis", "relation", "owner_relation"):
            table = mapping.value_map("basis" if f == "basis" else "relation")
            seen_values[f] = {v: table.get(v.strip().lower()) for v in sorted({v for v in values if v is not None})}
            words = []
            for i, v in enumerate(values):
                w = table.get(v.strip().lower()) if v is not None else ""
                if w is None:
                    bad_rows.add(i)
                    problems.append(Problem(source[i], _unknown_word(f, v)))
                words.append(w)
            if f == "basis":
                out["basis"] = [w or None for w in words]
            else:
                out["owner_relation"] = [None if w in ("owner", "") else w for w in words]
                owners = ["true" if w == "owner" else None for w in words]
                if f == "relation" or "owner" in words:
                    out["_owner"] = owners
        elif f == "ssn":
            out["ssn"] = [None if v is None else re.sub(r"[\s-]", "", v).zfill(9) if re.fullmatch(r"[\d\s-]{7,11}", v) else v for v in values]
        else:
            out[f] = values
    if "_owner" in out:
        mine = out.pop("_owner")
        given = out.get("ownership_interest") or [None] * n
        out["ownership_interest"] = [o or g for o, g in zip(mine, given)]
    if len(columns.get("hours", [])) > 1:  # the trace names the columns summed (RULES.md, open question "paid leave")
        source = [s + sums for s in source]
    table = pl.DataFrame({**out, "source": source}, schema={**{c: pl.Utf8 for c in out}, "source": pl.Utf8})
    left_out = None
    if bad_rows:
        bad = pl.int_range(pl.len()).is_in(sorted(bad_rows))
        table, left_out = table.filter(~bad), table.filter(bad)
    preview = [{h: r[j] for j, h in enumerate(grid.headers) if h} for r in grid.rows[:5]]
    if columns.get("hours") and len(columns["hours"]) > 1:
        notes.append(f"hours = {' + '.join(map(repr, columns['hours']))} (hours worked; paid leave is not counted: RULES.md)")
    return Imported(table, present, columns, formats, notes, problems, sheets, preview, seen_values, left_out, (f"{where} ", sums))


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
            d = dates.detect(f, sorted({str(v) for v in _column(grid, hs[0]) if v is not None}), mapping.date_format.get(f),
                             grid.headers.index(hs[0]) in grid.excel_dates)
            if d.format and not d.problem:
                out[f] = d.format
    return out


def _hours(grid: _Grid, headers: list[str]) -> tuple[list[str | None], str]:
    """The hours of each row: the one column's text, or the exact sum of several (a value that
    is not a number is kept as it is, so the payroll's check names it)."""
    cols = [_column(grid, h) for h in headers]
    if len(cols) == 1:
        return [None if v is None else str(v) for v in cols[0]], ""
    out = []
    for vals in zip(*cols):
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
        out.append(bad if bad is not None else None if not given else format(total.normalize(), "f") if total else "0")
    return out, f" (hours: {' + '.join(headers)})"
