"""Loaders of FORMAT.md: a claim JSON with embedded employees, or a JSON header naming a payroll
table (CSV, Parquet or Excel). JSON is parsed with ``Decimal`` so no number passes through a binary
float; every problem is collected and raised together as one ``ClaimError``."""

from __future__ import annotations

import io
from dataclasses import dataclass
from decimal import Decimal
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from .claim import Claim, ClaimHeader, Employee, problems_from_validation
from .jsontext import parse_json
from .payroll import RAW_COLUMNS, REQUIRED_COLUMNS, first_unknown_month, normalize
from .problems import ClaimError, Problem

TABLE_KINDS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx"}
KEEP = ("employee_id", "month", "month_idx", "hours", "basis", "ownership_interest", "owner_relation", "source")


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


def _employees_table(employees: Any, at: str = "") -> tuple[pl.DataFrame, list[Problem]]:
    """Embedded employees -> raw payroll rows, each row naming its JSON location (``at``: the
    prefix of a location of a several-location claim, ``locations[1].``)."""
    cols: dict[str, list] = {c: [] for c in (*RAW_COLUMNS, "source")}
    found: list[Problem] = []
    if not isinstance(employees, list):
        return pl.DataFrame(schema={c: pl.Utf8 for c in cols}), [Problem(f"{at}employees", "must be a list of employees")]
    seen: dict[str, int] = {}
    for i, raw in enumerate(employees):
        try:
            emp = Employee.model_validate(raw)
        except ValidationError as e:
            found += problems_from_validation(e, prefix=f"{at}employees[{i}].")
            continue
        if emp.id in seen:
            found.append(Problem(f"{at}employees[{i}].id", f"{emp.id!r} is also employees[{seen[emp.id]}]; each employee once, with all months"))
            continue
        seen[emp.id] = i
        floats = [m for m, h in emp.hours.items() if isinstance(h, float)]
        for month in floats:
            found.append(Problem(f"{at}employees[{i}].hours.{month}", f"the binary float {emp.hours[month]!r}; give hours as a decimal"))
        hours = {m: h for m, h in emp.hours.items() if not isinstance(h, float)} if floats else emp.hours
        n = len(hours)
        cols["employee_id"] += [emp.id] * n
        cols["month"] += list(hours)
        cols["hours"] += [None if h is None else format(h, "f") if isinstance(h, Decimal) else str(h) for h in hours.values()]
        cols["basis"] += [emp.basis] * n
        cols["ownership_interest"] += ["true" if emp.ownership_interest else "false"] * n
        cols["owner_relation"] += [emp.owner_relation] * n
        cols["source"] += [f"{at}employees[{i}].hours.{m}" for m in hours]
    return pl.DataFrame(cols, schema={c: pl.Utf8 for c in cols}), found


@dataclass
class _Parsed:
    """A claim document read but not yet normalised (the payroll is still raw text). A
    several-location claim (L6) is read as one ``_Parsed`` per location, ``of`` naming its claim."""

    header: ClaimHeader | None
    raw: pl.DataFrame
    found: list[Problem]
    source: str | None
    of: int = 0                        # the claim's number among those read together
    whole: ClaimHeader | None = None   # a location's: its several-location claim's header
    location_id: str | None = None
    several: bool = False


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema={c: pl.Utf8 for c in (*RAW_COLUMNS, "source")})


def _payroll_of(doc: dict, payroll: pl.DataFrame | None, base_dir: Path | None, at: str = "") -> tuple[pl.DataFrame, list[Problem]]:
    """The raw payroll rows of a claim, or of one location of a several-location claim (``at``):
    embedded ``employees``, or the table named by ``payroll`` (relative to ``base_dir``)."""
    found: list[Problem] = []
    if "employees" in doc and (payroll is not None or doc.get("payroll")):
        found.append(Problem(f"{at}employees", "give either embedded employees or a payroll table, not both"))
    if payroll is None and isinstance(doc.get("payroll"), str) and doc["payroll"]:
        path = Path(doc["payroll"])
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            payroll = read_payroll(path)
        except ClaimError as e:
            found += e.problems
    if payroll is not None:
        return payroll, found
    if "employees" in doc:
        raw, emp_problems = _employees_table(doc["employees"], at)
        return raw, found + emp_problems
    if not doc.get("payroll"):
        found.append(Problem(f"{at}employees", "missing: give the employees with their hours, or name a payroll table in \"payroll\""))
    return _empty(), found


def _parse(doc: Any, payroll: pl.DataFrame | None, base_dir: Path | None, source: str | None, of: int = 0) -> list[_Parsed]:
    if not isinstance(doc, dict):
        return [_Parsed(None, _empty(), [Problem("claim", "must be a JSON object (see FORMAT.md)")], source, of)]
    sites = doc.get("locations")
    if isinstance(sites, list):
        return _parse_sites(doc, sites, payroll, base_dir, source, of)
    found: list[Problem] = []
    header = None
    try:
        header = ClaimHeader.model_validate({k: v for k, v in doc.items() if k != "employees"})
    except ValidationError as e:
        found += problems_from_validation(e)
    raw, more = _payroll_of(doc, payroll, base_dir)
    return [_Parsed(header, raw, found + more, source, of)]


def _parse_sites(doc: dict, sites: list, payroll: pl.DataFrame | None, base_dir: Path | None, source: str | None, of: int) -> list[_Parsed]:
    """A several-location claim (L6): the header, then each location's own payroll."""
    found: list[Problem] = []
    if payroll is not None or "employees" in doc or doc.get("payroll"):
        found.append(Problem("locations", "with several locations each location gives its own employees or payroll, not the claim"))
    header = None
    try:
        header = ClaimHeader.model_validate({**doc, "locations": [
            {k: v for k, v in site.items() if k != "employees"} if isinstance(site, dict) else site for site in sites]})
    except ValidationError as e:
        found += problems_from_validation(e)
    out = []
    for i, site in enumerate(sites):
        raw, more = _payroll_of(site, None, base_dir, f"locations[{i}].") if isinstance(site, dict) else (_empty(), [])
        part = header.part(header.locations[i]) if header is not None else None
        out.append(_Parsed(part, raw, (found if i == 0 else []) + more, source, of, header,
                           site.get("id") if isinstance(site, dict) else None, True))
    if not out:
        out.append(_Parsed(None, _empty(), found, source, of, None, None, True))
    return out


def _finish(parsed: list[_Parsed]) -> list[Claim | ClaimError]:
    """Normalise every claim's payroll in one columnar pass (no per-claim start-up cost)."""
    columns = (*RAW_COLUMNS, "source")
    frames = [
        p.raw if p.raw.columns == list(columns) and all(t == pl.Utf8 for t in p.raw.dtypes)
        else p.raw.select(*(pl.col(c).cast(pl.Utf8) if c in p.raw.columns else pl.lit(None, dtype=pl.Utf8).alias(c) for c in columns))
        for p in parsed
    ]
    claim_id = pl.Series("claim_id", list(chain.from_iterable(repeat(i, f.height) for i, f in enumerate(frames))), dtype=pl.Int64)
    cuts = pl.DataFrame({
        "claim_id": range(len(parsed)),
        "_cut": [first_unknown_month(p.header.as_of) if p.header is not None else None for p in parsed],
    }, schema={"claim_id": pl.Int64, "_cut": pl.Int32})
    rows = pl.concat(frames, how="vertical", rechunk=False).with_columns(claim_id)
    table = normalize(rows.lazy().join(cuts.lazy(), on="claim_id", how="left"), as_of_idx=pl.col("_cut")).collect()
    bad = table.filter(pl.col("problem").is_not_null())
    row_problems: dict[int, list[Problem]] = {}
    for cid, source, message in bad.select("claim_id", "source", "problem").iter_rows():
        row_problems.setdefault(cid, []).append(Problem(source, message))
    good = table.select("claim_id", *KEEP).partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
    out: list[Claim | ClaimError] = []
    for i, p in enumerate(parsed):
        found = p.found + row_problems.get(i, [])
        if found or p.header is None:
            out.append(ClaimError(found, p.source))
        else:
            rows = good.get((i,))
            out.append(Claim(p.header, rows if rows is not None else table.select(KEEP).clear(), p.source, location_id=p.location_id))
    return _claims(parsed, out)


def _claims(parsed: list[_Parsed], results: list[Claim | ClaimError]) -> list[Claim | ClaimError]:
    """The locations of each several-location claim gathered into its ``Claim`` (``parts``), or
    into one ``ClaimError`` with every location's problems."""
    out: list[Claim | ClaimError] = []
    k = 0
    while k < len(parsed):
        p = parsed[k]
        if not p.several:
            out.append(results[k])
            k += 1
            continue
        group = [j for j in range(k, len(parsed)) if parsed[j].several and parsed[j].of == p.of]
        mine = [results[j] for j in group]
        if p.whole is None or any(isinstance(r, ClaimError) for r in mine):
            out.append(ClaimError([q for r in mine if isinstance(r, ClaimError) for q in r.problems], p.source))
        else:
            out.append(Claim(p.whole, pl.concat([r.payroll for r in mine]), p.source, parts=tuple(mine)))
        k = group[-1] + 1
    return out


def claims_from_docs(docs: list[tuple[Any, Path | None, str | None]]) -> list[Claim | ClaimError]:
    """Validate many claim documents (doc, base_dir, source) at once; each result is a ``Claim``
    or the ``ClaimError`` listing all of that claim's problems."""
    return _finish([x for i, (doc, base_dir, source) in enumerate(docs) for x in _parse(doc, None, base_dir, source, i)])


def claim_from_dict(doc: Any, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None) -> Claim:
    """Validate a claim document (parsed with Decimal numbers) into a ``Claim``."""
    (result,) = _finish(_parse(doc, payroll, base_dir, source))
    if isinstance(result, ClaimError):
        raise result
    return result


def claim_from_json(text: str | bytes, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None) -> Claim:
    return claim_from_dict(parse_json(text, source), payroll=payroll, base_dir=base_dir, source=source)


def _read_doc(path: Path) -> Any:
    if not path.is_file():
        raise ClaimError([Problem(str(path), "no such file")], str(path))
    try:
        return parse_json(path.read_bytes(), str(path))
    except OSError as e:
        raise ClaimError([Problem(str(path), f"cannot be read: {e.strerror}")], str(path)) from None


def load_claim(path: str | Path) -> Claim:
    """Load a claim file: JSON (embedded employees, or a header naming its payroll table, relative
    to the header's folder)."""
    p = Path(path)
    return claim_from_dict(_read_doc(p), base_dir=p.parent, source=str(p))


def load_claims(paths: list[str | Path]) -> list[Claim | ClaimError]:
    """Load many claim files with one normalisation pass; a bad file gives its ``ClaimError``."""
    docs, errors = [], {}
    for k, path in enumerate(map(Path, paths)):
        try:
            docs.append((_read_doc(path), path.parent, str(path)))
        except ClaimError as e:
            errors[k] = e
            docs.append((None, None, str(path)))
    results = claims_from_docs(docs)
    return [errors.get(k, r) for k, r in enumerate(results)]
