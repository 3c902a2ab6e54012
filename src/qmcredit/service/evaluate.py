"""The service's one door into the engine: load a claim document (and its payroll table), call
``qmcredit.decide``, and hand back what is to be stored. No database here, no HTTP: a submission
is decided before its transaction opens, so a slow decision never holds a lock.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from fractions import Fraction
from functools import cached_property
from pathlib import PurePath
from typing import Any

import polars as pl
import pyarrow.parquet as pq

import qmcredit
from qmcredit import ClaimError, Problem

from ..determination import joined_rows
from ..loaders import claims_from_docs
from ..payroll import row_names
from . import exact_json
from .together import Together

#: payroll table kinds by file name ending (FORMAT.md, "The payroll table"); JSON is a list of rows.
PAYROLL_KINDS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".json": "json"}


@dataclass(frozen=True)
class Upload:
    """A file as received: its name, media type and bytes; for a payroll export, the mapping its
    columns were read with (``qmcredit.imports.mapping`` as JSON; empty: the reading's guesses)."""

    filename: str
    media_type: str
    content: bytes
    mapping: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


@dataclass(frozen=True)
class Evaluation:
    """A decided claim: the exact document, the engine's claim and determination, and the facts the
    database keys on (taxpayer, location, credit period)."""

    document: str
    claim: qmcredit.Claim
    determination: qmcredit.Determination
    payroll: Upload | None
    rows_json: str | None = None  # the trace's employee-months as text, when made with others' (``_many``)

    @property
    def header(self):
        return self.claim.header

    @cached_property
    def result(self) -> dict:
        """The determination as JSON values, with its trace (B1)."""
        return self.determination.to_dict(explain=True)

    @cached_property
    def _entries(self) -> dict:
        """``to_dict`` with the trace's figure entries but not its employee-months (their text is
        written column-wise), made once for both ``figures`` and ``determination_json``."""
        return self.determination.to_dict(explain=True, rows=False)

    @cached_property
    def figures(self) -> dict:
        """The determination as JSON values without its trace: ``result`` but ``explanation``
        (``to_dict(explain=False)``), what the office keys, ledgers and answers on (the trace is
        only written, as text)."""
        return {k: v for k, v in self._entries.items() if k != "explanation"}

    @cached_property
    def determination_json(self) -> str:
        """The determination JSON of FORMAT.md, exactly as ``qmcredit compute --json`` prints it
        (its employee-month trace written column-wise, ``Determination.to_json``)."""
        return self.determination.to_json(made=self._entries, rows_json=self.rows_json)

    @property
    def year_one_start(self) -> date | None:
        """E4: the first day of credit year one, when the claim is eligible (an ineligible claim
        allows no credit and so takes no credit period)."""
        if not self.figures["eligible"]:
            return None
        start = ((self.figures.get("windows") or {}).get("year_one") or {}).get("start")
        return date.fromisoformat(start) if start else None


#: the longest file name the office keeps (a file system's usual bound on one name)
MAX_FILE_NAME = 255


def check_upload_names(upload: Upload, location: str) -> None:
    """A file's name and media type are stored as text: no NUL characters, and a name no longer
    than a file system takes (it is shown on every page and download of the claim)."""
    if "\x00" in upload.filename or "\x00" in upload.media_type:
        raise ClaimError([Problem(location, "the file name or media type contains a NUL character")])
    if len(upload.filename) > MAX_FILE_NAME:
        raise ClaimError([Problem(location, f"the file name has {len(upload.filename):,} characters; rename the file to at most "
                                            f"{MAX_FILE_NAME} and send it again")])


def payroll_kind(upload: Upload) -> str:
    kind = PAYROLL_KINDS.get(PurePath(upload.filename or "").suffix.lower())
    if kind is None:
        raise ClaimError([Problem("payroll", f"{upload.filename!r}: name the file .csv (or .tsv, .txt), .parquet, .xlsx or .json")])
    return kind


#: the most payroll rows (employee-months) one claim may bring: 20,000 employees for a year
MAX_PAYROLL_ROWS = 250_000
#: the most columns of a payroll table (an export carries many; the mapping picks its own)
MAX_PAYROLL_COLUMNS = 256
#: the most bytes an .xlsx may unpack to (its zip members' declared sizes, checked before reading)
MAX_UNPACKED_BYTES = 100 * 1024 * 1024


def _too_big(upload: Upload, what: str, limit: int, unit: str) -> ClaimError:
    return ClaimError([Problem("payroll", f"{upload.filename!r} has {what}; the office reads at most {limit:,} {unit} "
                               "per claim: split the claim or send the table to `qmcredit batch`")])


def check_payroll_size(upload: Upload, kind: str) -> None:
    """Refuse a table too big to read, from what can be counted without reading it: CSV lines and
    the header's columns, an .xlsx's unpacked size, a Parquet file's row and column counts."""
    data = upload.content
    if kind == "csv":
        rows = data.count(b"\n") - (1 if data.endswith(b"\n") else 0)
        columns = data[:data.find(b"\n")].count(b",") + 1
    elif kind == "xlsx":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                unpacked = sum(i.file_size for i in z.infolist())
        except (zipfile.BadZipFile, ValueError, OSError):
            return  # the reader says why it is no spreadsheet
        if unpacked > MAX_UNPACKED_BYTES:
            raise _too_big(upload, f"{unpacked:,} bytes unpacked", MAX_UNPACKED_BYTES, "bytes unpacked")
        return
    elif kind == "parquet":
        try:
            meta = pq.ParquetFile(io.BytesIO(data)).metadata
        except Exception:  # noqa: BLE001 - pyarrow raises many types for a malformed file; the reader says why
            return
        rows, columns = meta.num_rows, meta.num_columns
    else:
        return
    if rows > MAX_PAYROLL_ROWS:
        raise _too_big(upload, f"{rows:,} rows", MAX_PAYROLL_ROWS, "rows")
    if columns > MAX_PAYROLL_COLUMNS:
        raise _too_big(upload, f"{columns:,} columns", MAX_PAYROLL_COLUMNS, "columns")


def read_payroll(upload: Upload) -> pl.DataFrame:
    """The raw payroll table of an upload; a JSON upload is a list of row objects. Bounded:
    at most ``MAX_PAYROLL_ROWS`` rows, refused before reading where the format tells."""
    kind = payroll_kind(upload)
    check_payroll_size(upload, kind)
    if kind != "json":
        table = qmcredit.read_payroll(upload.content, kind=kind, name=upload.filename, mapping=mapping_of(upload))
        if table.height > MAX_PAYROLL_ROWS:
            raise _too_big(upload, f"{table.height:,} rows", MAX_PAYROLL_ROWS, "rows")
        return table
    try:
        rows = exact_json.loads(upload.content)
    except ClaimError as e:
        raise ClaimError([Problem(f"payroll {p.location}", f"{upload.filename!r}: {p.message}") for p in e.problems]) from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ClaimError([Problem("payroll", f"{upload.filename!r} must be a JSON list of row objects")])
    if len(rows) > MAX_PAYROLL_ROWS:
        raise _too_big(upload, f"{len(rows):,} rows", MAX_PAYROLL_ROWS, "rows")
    columns = ("employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation")
    problems = [Problem(f"payroll[{i}].{k}", f"unknown column; a payroll row has {', '.join(columns)}")
                for i, r in enumerate(rows) for k in r if k not in columns]
    if problems:
        raise ClaimError(problems)
    data = {c: [_cell(r.get(c)) for r in rows] for c in columns}
    return pl.DataFrame(data, schema={c: pl.Utf8 for c in columns}).with_columns(
        row_names(f"{upload.filename} row ", pl.int_range(1, len(rows) + 1)).alias("source")
    )


def mapping_of(upload: Upload):
    """The upload's column mapping (``Upload.mapping``), every mistake in it a ``ClaimError``."""
    from qmcredit.imports.mapping import Mapping, from_dict

    if not upload.mapping:
        return Mapping()
    try:
        doc = exact_json.loads(upload.mapping)
    except (ValueError, UnicodeDecodeError) as e:
        raise ClaimError([Problem("mapping", f"is not JSON: {e}")]) from None
    return from_dict(doc, "mapping")


def _cell(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Decimal):
        return format(v, "f")
    return str(v) if isinstance(v, (int, str)) else exact_json.dumps(v)


def evaluate(document: str | bytes, payroll: Upload | None = None, parsed: Any = None) -> Evaluation:
    """Validate and decide. Raises ``ClaimError`` (every problem, each naming its field).
    ``parsed``: ``document`` as the one parser already read it (the request's body, read once)."""
    if isinstance(document, bytes):
        try:
            document = document.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ClaimError([Problem("claim", f"is not UTF-8 text ({e.reason} at byte {e.start})")]) from None
    doc = exact_json.loads(document) if parsed is None else parsed  # the one parser; the engine is handed the parsed document
    employees = doc.get("employees") if isinstance(doc, dict) else None
    if isinstance(employees, list):
        months = sum(len(e["hours"]) for e in employees if isinstance(e, dict) and isinstance(e.get("hours"), dict))
        if months > MAX_PAYROLL_ROWS:
            raise ClaimError([Problem("employees", f"{months:,} employee-months; the office reads at most "
                                      f"{MAX_PAYROLL_ROWS:,} per claim: split the claim or use `qmcredit batch`")])
    if payroll is None and isinstance(doc, dict) and doc.get("payroll") is not None:
        raise ClaimError([Problem("payroll", "the claim names a payroll table: upload it with the claim "
                                  "(multipart field 'payroll'); the service never reads files of its own")])
    if payroll is not None:
        check_upload_names(payroll, "payroll")
    if payroll is None:
        claim, determination, rows_json = _decided(doc)
        return Evaluation(document, claim, determination, None, rows_json)
    claim = qmcredit.claim_from_dict(doc, payroll=read_payroll(payroll), source="upload")
    return Evaluation(document, claim, _decided_claim(claim), payroll)


def to_store(document: str | bytes, payroll: Upload | None = None, parsed: Any = None) -> Evaluation:
    """``evaluate``, with the determination's text made at once: before a transaction opens, so
    that the writer's lock is not held while it is written."""
    ev = evaluate(document, payroll, parsed)
    ev.determination_json  # noqa: B018 - a cached property: made now, kept
    return ev


def _decided_claim(claim: qmcredit.Claim) -> qmcredit.Determination:
    _check_storable(claim)
    return qmcredit.decide(claim)


def _one(doc: Any) -> tuple[qmcredit.Claim, qmcredit.Determination, None]:
    claim = qmcredit.claim_from_dict(doc, source="upload")  # no base_dir: the loaders open no file
    return claim, _decided_claim(claim), None


def _many(docs: list[Any]) -> list:
    """``_one`` of each document, read and decided in one pass (``compute``'s path over many),
    with the text of the trace's employee-months made for all of them in one pass too."""
    read = claims_from_docs([(doc, None, "upload") for doc in docs])
    out: list = []
    for r in read:
        if isinstance(r, qmcredit.Claim):
            try:
                _check_storable(r)
            except ClaimError as e:
                r = e
        out.append(r)
    claims = [r for r in out if not isinstance(r, Exception)]
    dets = qmcredit.decide_many(claims)
    texts = joined_rows(dets)
    decided = iter(dets)
    return [r if isinstance(r, Exception) else (r, d := next(decided), texts.get(id(d))) for r in out]


#: filings with embedded employees arriving at once are decided together (``together.py``)
_decided = Together(_many, _one)


#: the largest amount the ledger stores (whole cents in a signed 64-bit integer, with room to add)
LARGEST_AMOUNT = Decimal(10) ** 15


def _check_storable(claim: qmcredit.Claim) -> None:
    """What the database keys on must be storable: amounts up to ``LARGEST_AMOUNT`` dollars, text
    without NUL characters. Refused naming the field."""
    if claim.parts:
        raise ClaimError([Problem("locations", "the office keeps one location per claim: file each location as its own claim "
                                  "(the taxpayer's claims are one return, L6)")])
    problems = []
    t, loc = claim.header.taxpayer, claim.header.location
    for where, value in (("taxpayer.id", t.id), ("taxpayer.name", t.name), ("taxpayer.tax", t.tax),
                         ("location.municipality", loc.municipality), ("location.address", loc.address),
                         ("location.operations_source", loc.operations_source)):
        if "\x00" in value:
            problems.append(Problem(where, "contains a NUL character"))
    for i, period in enumerate(claim.header.periods):
        for name in ("liability", "minimum_tax", "alternative_minimum_assessment", "nj_gross_receipts"):
            value = getattr(period, name)
            if value is not None and value > LARGEST_AMOUNT:
                problems.append(Problem(f"periods[{i}].{name}", f"{value} is more than the office keeps ({LARGEST_AMOUNT:,} dollars)"))
        for j, credit in enumerate(period.other_credits):
            if credit.amount > LARGEST_AMOUNT:
                problems.append(Problem(f"periods[{i}].other_credits[{j}].amount",
                                        f"{credit.amount} is more than the office keeps ({LARGEST_AMOUNT:,} dollars)"))
    if problems:
        raise ClaimError(problems)


def names_a_table(document: str | bytes) -> bool:
    """Whether a claim document is a header naming a payroll table (FORMAT.md)."""
    try:
        doc = exact_json.loads(document)
    except ClaimError:
        return False  # evaluate reports it, with its line and column
    return isinstance(doc, dict) and doc.get("payroll") is not None


def form313_figures(evaluation: Evaluation) -> list[dict]:
    """Form 313, Parts I-V, one entry per privilege period; every amount as a string."""
    from qmcredit.form313 import form313

    return plain(form313(evaluation.claim, evaluation.determination))


def plain(value: Any) -> Any:
    """JSON-ready: exact numbers as strings, dates as ISO text."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (Decimal, Fraction)):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        raise TypeError("a binary float reached the service's output")
    return value
