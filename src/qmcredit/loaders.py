"""Loaders of FORMAT.md: a claim JSON with embedded employees, or a JSON header naming a payroll
table (CSV, Parquet or Excel). JSON is parsed with ``Decimal`` so no number passes through a binary
float; every problem is collected and raised together as one ``ClaimError``."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from .claim import Claim, ClaimHeader, Employee, problems_from_validation
from .payroll import RAW_COLUMNS, REQUIRED_COLUMNS, month_of, normalize, problems
from .problems import ClaimError, Problem

TABLE_KINDS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx"}
_HEADER_FIELDS = set(ClaimHeader.model_fields)


def _json_number(text: str) -> Decimal:
    return Decimal(text)


def parse_json(text: str | bytes, source: str | None = None) -> Any:
    """JSON with every number as ``Decimal`` (never a binary float)."""
    try:
        return json.loads(text, parse_float=_json_number, parse_int=_json_number)
    except UnicodeDecodeError as e:
        raise ClaimError([Problem("claim", f"is not UTF-8 text ({e.reason} at byte {e.start})")], source) from None
    except json.JSONDecodeError as e:
        raise ClaimError([Problem(f"line {e.lineno} column {e.colno}", f"not valid JSON: {e.msg}")], source) from None


def read_payroll(data: bytes | str | Path, *, kind: str | None = None, name: str = "payroll") -> pl.DataFrame:
    """Read a payroll table as raw columns (text where the format allows) with a ``source`` column
    naming each row as a person finds it: CSV line, spreadsheet row, Parquet row."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        name = path.name
        kind = kind or TABLE_KINDS.get(path.suffix.lower())
        if not path.is_file():
            raise ClaimError([Problem("payroll", f"table {str(path)!r} not found")])
        data = path.read_bytes()
    if kind not in ("csv", "parquet", "xlsx"):
        raise ClaimError([Problem("payroll", f"{name!r}: unknown table kind; use a .csv, .parquet or .xlsx file")])
    try:
        if kind == "csv":
            df = pl.read_csv(io.BytesIO(data), infer_schema=False, truncate_ragged_lines=False)
            offset, unit = 2, "line"
        elif kind == "parquet":
            df = pl.read_parquet(io.BytesIO(data))
            offset, unit = 1, "row"
        else:
            df = pl.read_excel(io.BytesIO(data), engine="openpyxl", infer_schema_length=0)
            offset, unit = 2, "sheet row"
    except Exception as e:  # the readers raise many types for a malformed file; report it, do not crash
        raise ClaimError([Problem(name, f"cannot be read as {kind}: {str(e).splitlines()[0][:300]}")]) from None
    df = df.rename({c: c.strip().lower() for c in df.columns})
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ClaimError([Problem(name, f"missing column(s) {', '.join(missing)}; a payroll table has columns {', '.join(RAW_COLUMNS)}")])
    extra = [c for c in df.columns if c not in RAW_COLUMNS and c != "claim_id"]
    if extra:
        df = df.drop(extra)
    return df.with_row_index("_i").with_columns(
        pl.format(f"{name} {unit} {{}}", pl.col("_i") + offset).alias("source")
    ).drop("_i")


def _employees_table(employees: Any) -> tuple[pl.DataFrame, list[Problem]]:
    """Embedded employees -> raw payroll rows, each row naming its JSON location."""
    cols: dict[str, list] = {c: [] for c in (*RAW_COLUMNS, "source")}
    found: list[Problem] = []
    if not isinstance(employees, list):
        return pl.DataFrame(schema={c: pl.Utf8 for c in cols}), [Problem("employees", "must be a list of employees")]
    seen: dict[str, int] = {}
    for i, raw in enumerate(employees):
        try:
            emp = Employee.model_validate(raw)
        except ValidationError as e:
            found += problems_from_validation(e, prefix=f"employees[{i}].")
            continue
        if emp.id in seen:
            found.append(Problem(f"employees[{i}].id", f"{emp.id!r} is also employees[{seen[emp.id]}]; each employee once, with all months"))
            continue
        seen[emp.id] = i
        own = "true" if emp.ownership_interest else "false"
        for month, hours in emp.hours.items():
            if isinstance(hours, float):
                found.append(Problem(f"employees[{i}].hours.{month}", f"the binary float {hours!r}; give hours as a decimal"))
                continue
            cols["employee_id"].append(emp.id)
            cols["month"].append(month)
            cols["hours"].append(None if hours is None else (format(hours, "f") if isinstance(hours, Decimal) else str(hours)))
            cols["basis"].append(emp.basis)
            cols["ownership_interest"].append(own)
            cols["owner_relation"].append(emp.owner_relation)
            cols["source"].append(f"employees[{i}].hours.{month}")
    return pl.DataFrame(cols, schema={c: pl.Utf8 for c in cols}), found


def _first_unknown_month(header: ClaimHeader) -> int | None:
    """With ``as_of``, the first month that is not over by that day (unknown, not zero)."""
    if header.as_of is None:
        return None
    nxt = header.as_of.toordinal() + 1
    from datetime import date

    over = date.fromordinal(nxt).day == 1
    return month_of(header.as_of) + (1 if over else 0)


def claim_from_dict(doc: Any, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None) -> Claim:
    """Validate a claim document (parsed with Decimal numbers) into a ``Claim``."""
    if not isinstance(doc, dict):
        raise ClaimError([Problem("claim", "must be a JSON object (see FORMAT.md)")], source)
    found: list[Problem] = []
    header_doc = {k: v for k, v in doc.items() if k != "employees"}
    header = None
    try:
        header = ClaimHeader.model_validate(header_doc)
    except ValidationError as e:
        found += problems_from_validation(e)
    if "employees" in doc and (payroll is not None or doc.get("payroll")):
        found.append(Problem("employees", "give either embedded employees or a payroll table, not both"))
    if payroll is None and doc.get("payroll") and isinstance(doc.get("payroll"), str):
        path = Path(doc["payroll"])
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            payroll = read_payroll(path)
        except ClaimError as e:
            found += [Problem("payroll", p.message) if p.location == "payroll" else p for p in e.problems]
    if payroll is not None:
        raw = payroll
    elif "employees" in doc:
        raw, emp_problems = _employees_table(doc["employees"])
        found += emp_problems
    else:
        if not doc.get("payroll"):
            found.append(Problem("employees", "missing: give the employees with their hours, or name a payroll table in \"payroll\""))
        raw = pl.DataFrame(schema={c: pl.Utf8 for c in (*RAW_COLUMNS, "source")})
    as_of = _first_unknown_month(header) if header is not None else None
    table = normalize(raw.lazy(), as_of_idx=as_of).collect()
    found += problems(table)
    if found:
        raise ClaimError(found, source)
    table = table.drop("problem").select("employee_id", "month", "month_idx", "hours", "basis", "ownership_interest", "owner_relation", "source")
    return Claim(header, table, source)


def claim_from_json(text: str | bytes, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None) -> Claim:
    return claim_from_dict(parse_json(text, source), payroll=payroll, base_dir=base_dir, source=source)


def load_claim(path: str | Path) -> Claim:
    """Load a claim file: JSON (embedded employees, or a header naming its payroll table, relative
    to the header's folder)."""
    p = Path(path)
    if not p.is_file():
        raise ClaimError([Problem(str(p), "no such file")], str(p))
    try:
        text = p.read_bytes()
    except OSError as e:
        raise ClaimError([Problem(str(p), f"cannot be read: {e.strerror}")], str(p)) from None
    return claim_from_json(text, base_dir=p.parent, source=str(p))
