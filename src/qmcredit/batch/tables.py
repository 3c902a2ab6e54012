"""The batch inputs (docs/batch.md): a claims table, an optional periods table, one payroll table.

Every column is read as text, so no hours or money pass through a binary float; a Parquet column
of another type is cast to text. A claims-table row becomes the claim header of FORMAT.md
(``qmcredit.claim/1``) as a plain document, which the core's ``ClaimHeader`` then validates: the
batch never judges a header field itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from ..jsontext import parse_json
from ..payroll import RAW_COLUMNS, Coded
from ..problems import ClaimError, Problem

#: claims-table column -> (object, field) of the FORMAT.md header; ``options`` and ``periods``
#: hold JSON text.
CLAIM_FIELDS = {
    "taxpayer_id": ("taxpayer", "id"),
    "taxpayer_name": ("taxpayer", "name"),
    "tax": ("taxpayer", "tax"),
    "uez_benefit": ("taxpayer", "uez_benefit"),
    "earlier_credit_period_start": ("taxpayer", "earlier_credit_period_start"),
    "municipality": ("location", "municipality"),
    "address": ("location", "address"),
    "operations_began": ("location", "operations_began"),
    "operations_source": ("location", "operations_source"),
    "as_of": (None, "as_of"),
}
JSON_COLUMNS = ("options", "periods")
PERIOD_FIELDS = (
    "start", "end", "liability", "minimum_tax", "alternative_minimum_assessment", "nj_gross_receipts",
    "s_corporation", "group_payroll_5m", "group_payroll", "combined_group_member",
)
BOOLEAN_FIELDS = ("uez_benefit", "s_corporation", "group_payroll_5m", "combined_group_member")
PAYROLL_COLUMNS = ("claim_id", *RAW_COLUMNS)

_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")
_PERIOD_TEXT_FIELDS = tuple(f for f in PERIOD_FIELDS if f not in BOOLEAN_FIELDS)
_PERIOD_FLAGS = tuple(f for f in PERIOD_FIELDS if f in BOOLEAN_FIELDS)  # after the text fields, as in PERIOD_FIELDS
_PERIOD_CELLS = (*_PERIOD_TEXT_FIELDS, *_PERIOD_FLAGS, "other_credits")  # a periods-table row after claim_id, as period_doc reads it
_TEXT_AT = tuple((f, 1 + _PERIOD_CELLS.index(f)) for f in _PERIOD_TEXT_FIELDS)
_FLAG_AT = tuple((f, 1 + _PERIOD_CELLS.index(f)) for f in _PERIOD_FLAGS)


def kind_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise ClaimError([Problem(str(path), "unknown table kind; use a .csv or .parquet file")])


def scan_text(path: Path, rows: tuple[int, int] | None = None) -> pl.LazyFrame:
    """A table as text columns with lower-case names (CSV read without inference, Parquet cast).
    ``rows`` = (first, count): only those rows, with ``_line``, each row's number as a person
    counts it (``first_line``); the slice is taken before anything else, so that a Parquet
    reader reads only the row groups it needs."""
    scan = (lambda: pl.scan_csv(path, infer_schema=False)) if kind_of(path) == "csv" else (lambda: pl.scan_parquet(path))
    names = scan().collect_schema().names()
    lf = scan()  # a scan whose schema was asked for no longer takes the slice into the reader
    given = kind_of(path) == "parquet" and LINE in names
    if rows is not None:
        lf = (lf if given else lf.with_row_index("_line", offset=first_line(path))).slice(*rows)
    return lf.select(*(["_line"] if rows is not None else []), *(pl.col(n).cast(pl.Utf8).alias(n.strip().lower()) for n in names if n != LINE or not given))


#: A Parquet payroll table's column of each row's number in the export it was made of
#: (``batch.cli``), which row locations then give; a table without it is numbered as it is read.
LINE = "_line"


def first_line(path: Path) -> int:
    """The number a person gives the first data row: line 2 of a CSV (after its header), row 1 of
    Parquet."""
    return 2 if kind_of(path) == "csv" else 1


def flag_of(text: str) -> bool | None:
    """A flag cell's text as true or false, or None when it reads as neither."""
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


def _value(field: str, text: str | None) -> Any:
    """Table text -> the header document's value; a bad flag stays text so validation names it."""
    if text is None or text.strip() == "":
        return None
    if field in BOOLEAN_FIELDS and (flag := flag_of(text)) is not None:
        return flag
    return text


def _json(column: str, text: str | None, problems: list[Problem]) -> Any:
    if text is None or text.strip() == "":
        return None
    try:
        return parse_json(text)
    except ClaimError as e:
        problems += [Problem(column, f"{p.location}: {p.message}") for p in e.problems]
        return None


def period_doc(row: tuple, problems: list[Problem], where: str) -> dict:
    """A periods-table row of ``periods_by_claim`` as a FORMAT.md period document: a blank cell is
    left out, a flag read as true or false (or kept as text for validation to name),
    ``other_credits`` parsed from its JSON."""
    doc = {}
    for f, i in _TEXT_AT:  # _value, inlined: a statewide batch has millions of periods
        text = row[i]
        if text is not None and text.strip():
            doc[f] = text
    for f, i in _FLAG_AT:
        text = row[i]
        if text is not None and (low := text.strip().lower()):
            doc[f] = True if low in _TRUE else False if low in _FALSE else text
    credits = row[-1]
    if credits is not None:
        credits = _json(f"{where}.other_credits", credits, problems)
        if credits is not None:
            doc["other_credits"] = credits
    return doc


def header_doc(row: dict, periods: list[dict] | None) -> tuple[dict, list[Problem]]:
    """One claims-table row (and its periods-table rows, in table order) -> a FORMAT.md header
    document, plus the problems of its JSON columns."""
    problems: list[Problem] = []
    doc: dict[str, Any] = {"taxpayer": {}, "location": {}}
    for column, (obj, field) in CLAIM_FIELDS.items():
        value = _value(field, row.get(column))
        if value is not None:
            (doc[obj] if obj else doc)[field] = value
    options = _json("options", row.get("options"), problems)
    if options is not None:
        doc["options"] = options
    nested = _json("periods", row.get("periods"), problems)
    if nested is not None and periods:
        problems.append(Problem("periods", "given both in the claims table and in the periods table; give them once"))
    elif nested is not None:
        doc["periods"] = nested
    elif periods:
        doc["periods"] = [period_doc(p, problems, f"periods[{i}]") for i, p in enumerate(periods)]
    return doc, problems


def read_tables(claims: Path, periods: Path | None = None) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The claims table and, when given, the periods table (one row per period, in table order),
    each checked for its columns, claim ids stripped. The periods stay flat: the batch partitions
    both tables by claim and gathers a claim's periods only when it reads its header."""
    table = scan_text(claims).collect()
    if "claim_id" not in table.columns:
        raise ClaimError([Problem(str(claims), "missing column claim_id; see docs/batch.md")])
    unknown = [c for c in table.columns if c not in ("claim_id", *CLAIM_FIELDS, *JSON_COLUMNS)]
    if unknown:
        raise ClaimError([Problem(str(claims), f"unknown column(s) {', '.join(unknown)}; see docs/batch.md")])
    table = table.with_columns(pl.col("claim_id").str.strip_chars())
    if periods is None:
        return table, None
    ptable = scan_text(periods).collect()
    unknown = [c for c in ptable.columns if c not in ("claim_id", *PERIOD_FIELDS, "other_credits")]
    if "claim_id" not in ptable.columns or unknown:
        raise ClaimError([Problem(str(periods), f"needs claim_id and the period columns of docs/batch.md; unknown: {', '.join(unknown) or 'none'}")])
    return table, ptable.with_columns(pl.col("claim_id").str.strip_chars())


def periods_by_claim(periods: pl.DataFrame | None) -> dict[str, list[tuple]]:
    """Each claim's periods-table rows, in table order: ``claim_id`` and the cells of
    ``_PERIOD_CELLS`` (a column the table lacks is empty), for ``period_doc``."""
    found: dict[str, list[tuple]] = {}
    if periods is not None:
        cells = periods.select(pl.col(c) if c in periods.columns else pl.lit(None, dtype=pl.Utf8).alias(c) for c in ("claim_id", *_PERIOD_CELLS))
        for row in cells.iter_rows():
            found.setdefault(row[0], []).append(row)
    return found


def scan_payroll(path: Path, rows: tuple[int, int] | None = None, strip: bool = True) -> pl.LazyFrame:
    """The payroll table as text, with ``_line``: the row's number in the file as a person counts
    it (for the problems of B1 and of bad rows). ``rows`` = (first, count): only those rows.
    ``strip``: claim ids without surrounding spaces (without it, the reader strips them)."""
    lf = scan_text(path, (0, None) if rows is None else rows)
    names = _payroll_columns(path, lf.collect_schema().names())
    lf = lf.select("_line", *names)
    return lf.with_columns(pl.col("claim_id").str.strip_chars()) if strip else lf


def _payroll_columns(path: Path, names: list[str]) -> list[str]:
    """The payroll columns among ``names`` (lower case), in table order; a ClaimError when a
    required one is missing."""
    missing = [c for c in ("claim_id", "employee_id", "month", "hours") if c not in names]
    if missing:
        raise ClaimError([Problem(str(path), f"missing column(s) {', '.join(missing)}; a payroll table has columns {', '.join(PAYROLL_COLUMNS)}")])
    return [c for c in PAYROLL_COLUMNS if c in names]


def read_coded(path: Path, rows: tuple[int, int] | None = None) -> tuple[pl.DataFrame, Coded] | None:
    """``scan_payroll(path, rows, strip=False)`` of a Parquet table, collected, but with its text
    columns as codes (``payroll.lookup``'s ``coded``): each row's place in the column's dictionary,
    which Parquet keeps for such columns, so that no text is copied or hashed row by row. The frame
    holds ``_line`` and the columns of another type, as text. None when the table's column names
    collide once in lower case (``scan_payroll`` then reports it)."""
    import pyarrow as pa  # here: only a worker reading Parquet needs it
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    schema = file.schema_arrow
    named = {n.strip().lower(): n for n in schema.names}
    if len(named) != len(schema.names):
        return None
    wanted = _payroll_columns(path, list(named))
    text = [c for c in wanted if pa.types.is_string(schema.field(named[c]).type) or pa.types.is_large_string(schema.field(named[c]).type)]
    file = pq.ParquetFile(path, read_dictionary=[named[c] for c in text])
    first, count = rows or (0, file.metadata.num_rows)
    given = LINE in schema.names  # a table made of an export: each row's number in it
    columns = [named[c] for c in wanted] + ([LINE] if given else [])
    groups, start, skip, tail = [], 0, 0, 0
    for g in range(file.metadata.num_row_groups):  # the row groups holding the rows
        n = file.metadata.row_group(g).num_rows
        if start < first + count and first < start + n:
            skip = skip if groups else first - start
            groups.append(g)
            tail = first + count - start  # the rows wanted of the last group, so far this one
            whole = n
        start += n
    if len(groups) > 1 and 4 * tail < whole:  # a run cut just after a row group starts: only its first rows decoded
        table = file.read_row_groups(groups[:-1], columns=columns, use_threads=True)
        head = []
        for batch in file.iter_batches(batch_size=tail, row_groups=groups[-1:], columns=columns, use_threads=True):
            head.append(batch)
            tail -= batch.num_rows
            if tail <= 0:
                break
        table = pa.concat_tables([table, pa.Table.from_batches(head, schema=table.schema)]).slice(skip, count)
    else:
        table = file.read_row_groups(groups, columns=columns, use_threads=True).slice(skip, count)
    table = table.unify_dictionaries()
    arrow = {c: table.column(named[c]) for c in wanted}
    # Arrow tables converted whole: a polars Series made of an Arrow array imports pyarrow.compute
    # (0.03 s a process).
    read = pl.from_arrow(pa.table({c: arrow[c] for c in wanted if c not in text}
                                  | {c: pa.chunked_array([chunk.indices for chunk in arrow[c].chunks], type=arrow[c].type.index_type) for c in text}))
    line = first_line(path) + first
    lines = (pl.from_arrow(table.column(LINE)).cast(pl.UInt32) if given
             else pl.int_range(line, line + table.num_rows, dtype=pl.UInt32, eager=True))
    frame = pl.DataFrame([lines.alias("_line")]).with_columns(read.get_column(c).cast(pl.Utf8) for c in wanted if c not in text)
    coded: Coded = {}
    for c in text:  # codes are never negative
        values = arrow[c].chunks[0].dictionary if arrow[c].num_chunks else pa.array([], pa.string())
        coded[c] = (read.get_column(c).reinterpret(signed=False), pl.from_arrow(pa.table({c: values})).get_column(c).cast(pl.Utf8))
    return frame, coded


def claim_id_type(path: Path) -> str:
    """The type of a table's claim_id column as its file declares it (a CSV's is text)."""
    if kind_of(path) == "csv":
        return "String"
    types = {n.strip().lower(): t for n, t in pl.read_parquet_schema(path).items()}
    return str(types.get("claim_id", "String"))


class UnreadableTable(ClaimError):
    """A table file that cannot be read (damaged, truncated, not UTF-8): bad input, not a fault."""


def unreadable(paths: list[Path]) -> UnreadableTable | None:
    """Why a table cannot be read, naming the file and the place: a Parquet file without its
    footer (truncated or damaged), a CSV with bytes that are not UTF-8 (its line and byte). None
    when every table reads."""
    import pyarrow.parquet as pq

    for path in paths:
        if kind_of(path) == "parquet":
            try:
                pq.ParquetFile(path).metadata
            except Exception as e:  # noqa: BLE001 - pyarrow raises several types for a damaged file
                return UnreadableTable([Problem(str(path), f"is not a whole Parquet file ({str(e).splitlines()[0][:200]}): "
                                                      "it may be truncated; write it again")])
            continue
        place = _first_bad_utf8(path)
        if place is not None:
            line, offset = place
            return UnreadableTable([Problem(f"{path} line {line}", f"byte {offset:,} is not UTF-8 text: save the table as UTF-8")])
    return None


def _first_bad_utf8(path: Path, block: int = 1 << 24) -> tuple[int, int] | None:
    """(line, byte offset) of the first byte of ``path`` that is not UTF-8, if any."""
    import codecs

    decoder, offset, lines = codecs.getincrementaldecoder("utf-8")(), 0, 1
    with path.open("rb") as f:
        while chunk := f.read(block):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as e:
                return lines + chunk.count(b"\n", 0, max(0, e.start)), offset + max(0, e.start)
            offset += len(chunk)
            lines += chunk.count(b"\n")
    return None
