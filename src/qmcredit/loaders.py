"""Loaders of docs/format.md: a claim JSON with embedded employees, or a JSON header naming a payroll
table (CSV, Parquet or Excel). JSON is parsed with ``Decimal`` so no number passes through a binary
float; every problem is collected and raised together as one ``ClaimError``."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal
from itertools import accumulate, chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from pydantic import ValidationError

from .claim import Claim, ClaimHeader, Employee, problems_from_validation, validate_header
from .imports import Settings, people as P
from .imports.mapping import Mapping
from .jsontext import parse_json
from .payroll import RAW_COLUMNS, first_unknown_month, normalize, row_names
from .problems import ClaimError, Problem

if TYPE_CHECKING:
    from .imports.table import Imported

# The export readers (``imports.table``, ``imports.periods``) are imported by the paths that read a
# table: a claim with embedded employees, the common one, starts without them (tests/test_start_up.py).

#: Delimited text is read as CSV, its delimiter found (comma, semicolon, tab, bar): .tsv, and .txt (Excel's
#: "Unicode Text", tab-separated UTF-16).
TABLE_KINDS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx"}
KEEP = ("employee_id", "month", "month_idx", "hours", "basis", "ownership_interest", "owner_relation", "source")


def _direct(data: bytes, kind: str, name: str) -> tuple[pl.DataFrame, str] | None:
    """A CSV or Parquet table whose header is already the payroll table's, read as before (the
    batch's and large tables' speed), and what its rows' sources say before their numbers; None
    for any other table (``imports`` reads it)."""
    from .imports.table import is_canonical, utf16

    if kind == "csv":
        if utf16(data):  # ``imports`` decodes it
            return None
        first = data[:4096].split(b"\n", 1)[0].decode("utf-8-sig", errors="replace")
        if not is_canonical(next(csv.reader([first]), [])):
            return None
        df = pl.read_csv(io.BytesIO(data), infer_schema=False, truncate_ragged_lines=False)
        offset, unit = 2, "line"
    elif kind == "parquet":
        df = pl.read_parquet(io.BytesIO(data))
        if not is_canonical(df.columns):
            return None
        offset, unit = 1, "row"
    else:
        return None
    df = df.rename({c: c.strip().lower() for c in df.columns})
    if not df.select(pl.col("month").cast(pl.Utf8).str.contains(r"^\s*\d{4}-\d{1,2}\s*$").fill_null(True).all()).item():
        return None  # months written otherwise (08/2006, Jan 2005, dates): the format is found by ``imports``
    extra = [c for c in df.columns if c not in RAW_COLUMNS and c != "claim_id"]
    if extra:
        df = df.drop(extra)
    before = f"{name} {unit} "
    return df.with_columns(row_names(before, pl.int_range(offset, pl.len() + offset)).alias("source")), before


def import_payroll(data: bytes | str | Path, *, kind: str | None = None, name: str = "payroll", mapping: Mapping | None = None,
                   roster: bool = False) -> Imported:
    """Read a payroll table or export (``imports``): the raw columns as text with a ``source``
    column naming each row as a person finds it (CSV line, spreadsheet row, Parquet row), how it
    was read, and the problems of its columns and rows (not raised). ``roster``: a table of
    employees (only an employee id is required)."""
    from .imports.table import Imported, import_table

    what = "roster" if roster else "payroll"  # the option or field that named the table
    if isinstance(data, (str, Path)):
        path = Path(data)
        name = path.name
        kind = kind or TABLE_KINDS.get(path.suffix.lower())
        if not path.is_file():
            why = (f"is a folder, not a table; give the {what} file in it" if path.is_dir() else
                   f"is not a regular file; give a {what} table (.csv, .xlsx, .parquet)" if path.exists() else "not found")
            raise ClaimError([Problem(what, f"table {str(path)!r} {why}")])
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ClaimError([Problem(what, f"table {str(path)!r} cannot be read: {e.strerror}")]) from None
    if kind not in ("csv", "parquet", "xlsx"):
        raise ClaimError([Problem(what, f"{name!r}: unknown table kind; use a .csv (or .tsv, .txt), .parquet or .xlsx file")])
    mapping = mapping or Mapping()
    try:
        direct = None if mapping.columns or roster else _direct(data, kind, name)
        if direct is not None:
            df, before = direct
            return Imported(df, list(df.columns), {c: [c] for c in df.columns if c != "source"}, row_name=(before, ""))
        return import_table(data, kind, name, mapping, roster)
    except ClaimError:
        raise
    except Exception as e:  # the readers raise many types for a malformed file; report it, do not crash
        raise ClaimError([Problem(name, f"cannot be read as {kind}: {str(e).splitlines()[0][:300]}")]) from None


def read_payroll(data: bytes | str | Path, *, kind: str | None = None, name: str = "payroll", mapping: Mapping | None = None) -> pl.DataFrame:
    """``import_payroll``'s table; its problems, grouped, raised as one ``ClaimError``."""
    read = import_payroll(data, kind=kind, name=name, mapping=mapping)
    if read.problems:
        raise ClaimError(grouped(read.problems))
    return read.table


_EMPLOYEE_FIELDS = frozenset(Employee.model_fields)
_RELATIONS = frozenset(("spouse", "dependant", "ancestor", "descendant"))
_BASES = frozenset(("permanent", "temporary", "seasonal"))
_SPACE = re.compile(r"\s")
_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())  # what ``_SPACE`` finds in ASCII text


def _has_space(text: str) -> bool:
    """Whether ``text`` holds a character ``\\s`` matches: ASCII text (months, the common case) by
    one bytes translation in C, several times faster than the pattern's scan; other text by it."""
    if text.isascii():
        data = text.encode("ascii")
        return len(data.translate(None, _ASCII_SPACE)) != len(data)
    return _SPACE.search(text) is not None


def _plain(raw: Any) -> tuple[str, bool, str | None, str, dict] | None:
    """An employee whose fields need none of ``Employee``'s conversions or messages (id, the
    flags and words, hours keyed by months without spaces), read directly as ``Employee`` reads
    it: (id, ownership_interest, owner_relation, basis, hours); None for any other (``Employee``
    validates it and words its problems)."""
    if type(raw) is not dict or not _EMPLOYEE_FIELDS.issuperset(raw):
        return None
    get = raw.get
    if get("name") is not None or get("ssn") is not None or get("hired") is not None or get("separated") is not None:
        return None
    id_, flag, relation, basis, hours = get("id"), get("ownership_interest"), get("owner_relation"), get("basis"), get("hours")
    if type(id_) is not str or not (id_ := id_.strip()):
        return None
    if flag is None:
        flag = False
    elif type(flag) is not bool:
        return None
    if relation is not None and (type(relation) is not str or (relation := relation.strip().lower()) not in _RELATIONS):
        return None
    if basis is None:
        basis = "permanent"
    elif type(basis) is not str or (basis := basis.strip().lower()) not in _BASES:
        return None
    if hours is None:
        hours = {}
    elif type(hours) is not dict:
        return None
    try:
        if _has_space("".join(hours)):  # a month written with spaces is stripped by ``Employee``
            return None
    except TypeError:  # a key that is not text
        return None
    return id_, flag, relation, basis, hours


def _hours_text(hours: dict) -> tuple[list, list]:
    """The hours of one employee as text (None kept) and the months given as a binary float."""
    values = list(hours.values())
    try:
        "".join(values)
        return values, []  # all text already (the common case): nothing to convert
    except TypeError:
        pass
    floats = [m for m, h in hours.items() if isinstance(h, float)]
    return [None if h is None else format(h, "f") if isinstance(h, Decimal) else str(h) for h in values if not isinstance(h, float)], floats


def _all_plain(employees: list, at: str) -> dict[str, list] | None:
    """``_employees_table``'s lists when every employee is plain (``_plain``), has a distinct id
    and gives its hours as text: each test made over all employees at once (a comprehension or a
    join each, not one call an employee); None otherwise (each employee is then read alone)."""
    if not all(type(e) is dict and _EMPLOYEE_FIELDS.issuperset(e) for e in employees):
        return None
    if any(e.get("name") is not None or e.get("ssn") is not None or e.get("hired") is not None or e.get("separated") is not None
           for e in employees):
        return None
    ids, flags, relations, bases = ([e.get(k) for e in employees] for k in ("id", "ownership_interest", "owner_relation", "basis"))
    hours = [e.get("hours") for e in employees]
    if not all(type(x) is str for x in ids) or not all(type(h) is dict or h is None for h in hours):
        return None
    ids = [x.strip() for x in ids]
    if not all(ids) or len(set(ids)) != len(ids) or not all(f is None or type(f) is bool for f in flags):
        return None
    if not all(r is None or type(r) is str for r in relations) or not all(b is None or type(b) is str for b in bases):
        return None
    relations = [None if r is None else r.strip().lower() for r in relations]
    bases = ["permanent" if b is None else b.strip().lower() for b in bases]
    if not _RELATIONS.issuperset(r for r in relations if r is not None) or not _BASES.issuperset(bases):
        return None
    hours = [h or {} for h in hours]
    months, values = list(chain.from_iterable(hours)), list(chain.from_iterable(map(dict.values, hours)))
    try:
        if _has_space("".join(months)):
            return None
        "".join(values)  # every hour text (else ``_hours_text`` converts them)
    except TypeError:
        return None
    return {
        "employee_id": ids, "basis": bases, "ownership_interest": ["true" if f else "false" for f in flags],
        "owner_relation": relations, "source": [f"{at}employees[{i}].hours." for i in range(len(ids))],
        "_months": list(map(len, hours)), "month": months, "hours": values,
    }


def _employees_table(employees: Any, at: str = "") -> tuple[dict[str, list] | pl.DataFrame, list[Problem], pl.DataFrame | None]:
    """Embedded employees -> raw payroll rows as text columns (lists; ``_text_frame`` makes
    them a table), each row naming its JSON location (``at``: the prefix of a location of a
    several-location claim, ``locations[1].``), and the people. An employee of plain fields is
    read directly; any other is validated by ``Employee``, whose problems are the claim's."""
    if not isinstance(employees, list):
        return _empty(), [Problem(f"{at}employees", "must be a list of employees")], None
    plain = _all_plain(employees, at)
    return (plain, [], None) if plain is not None else _each_employee(employees, at)


def _each_employee(employees: list, at: str) -> tuple[dict[str, list], list[Problem], pl.DataFrame | None]:
    """``_employees_table`` of employees read one by one (``_plain``, else ``Employee``)."""
    cols: dict[str, list] = {c: [] for c in (*_PER_EMPLOYEE, *_PER_MONTH)}
    found: list[Problem] = []
    seen: dict[str, int] = {}
    who: list[dict] = []
    for i, raw in enumerate(employees):
        plain = _plain(raw)
        if plain is not None:
            emp_id, flag, relation, basis, hours = plain
            emp = None
        else:
            try:
                emp = Employee.model_validate(raw)
            except ValidationError as e:
                found += problems_from_validation(e, prefix=f"{at}employees[{i}].")
                continue
            emp_id, flag, relation, basis, hours = emp.id, emp.ownership_interest, emp.owner_relation, emp.basis, emp.hours
        if emp_id in seen:
            found.append(Problem(f"{at}employees[{i}].id", f"{emp_id!r} is also employees[{seen[emp_id]}]; each employee once, with all months"))
            continue
        seen[emp_id] = i
        text, floats = _hours_text(hours)
        for month in floats:
            found.append(Problem(f"{at}employees[{i}].hours.{month}", f"the binary float {hours[month]!r}; give hours as a decimal"))
        months = [m for m, h in hours.items() if not isinstance(h, float)] if floats else list(hours)
        cols["employee_id"].append(emp_id)
        cols["basis"].append(basis)
        cols["ownership_interest"].append("true" if flag else "false")
        cols["owner_relation"].append(relation)
        cols["source"].append(f"{at}employees[{i}].hours.")  # the month is added by ``_text_frame``
        cols["_months"].append(len(months))
        cols["month"] += months
        cols["hours"] += text
        if emp is not None and (emp.name or emp.ssn or emp.hired or emp.separated):
            who.append({"employee_id": emp.id, "source": f"{at}employees[{i}]", "name": emp.name, "ssn": emp.ssn,
                        "hired": emp.hired and emp.hired.isoformat(), "separated": emp.separated and emp.separated.isoformat()})
    # the people (FORMAT.md, "Who the employees are"): one row each
    return cols, found, pl.DataFrame(who, schema={c: pl.Utf8 for c in who[0]}) if who else None


@dataclass
class _Parsed:
    """A claim document read but not yet normalised (the payroll is still raw text). A
    several-location claim (L6) is read as one ``_Parsed`` per location, ``of`` naming its claim."""

    header: ClaimHeader | None
    raw: pl.DataFrame | dict[str, list]  # a table, or embedded employees' rows as text columns (RAW_COLUMNS, source)
    found: list[Problem]
    source: str | None
    people: pl.DataFrame | None = None
    of: int = 0                        # the claim's number among those read together
    whole: ClaimHeader | None = None   # a location's: its several-location claim's header
    location_id: str | None = None
    several: bool = False


#: ``_employees_table``'s lists: one entry per employee (``_months``: how many months it gives), one per employee-month
_PER_EMPLOYEE = ("employee_id", "basis", "ownership_interest", "owner_relation", "source", "_months")
_PER_MONTH = ("month", "hours")


def _text_frame(cols: dict[str, list]) -> pl.DataFrame:
    """``_employees_table``'s lists (of one claim or, with ``claim_id`` per employee, of many) as
    one row per employee-month: each employee's fields repeated over its months (in polars, not
    one Python string per row: the employees' rows gathered, each once a month), each row's
    source completed with its month."""
    per_employee = [c for c in cols if c not in _PER_MONTH]
    people = pl.DataFrame({c: cols[c] for c in per_employee},
                          schema={c: pl.Int64 if c in ("claim_id", "_months") else pl.Utf8 for c in per_employee})
    each = people.select(pl.int_range(pl.len(), dtype=pl.UInt32).repeat_by("_months").explode(empty_as_null=False)).to_series()
    rows = people.drop("_months")[each]  # one gather of every column (repeating each column was a third slower)
    months = pl.DataFrame({c: cols[c] for c in _PER_MONTH}, schema=dict.fromkeys(_PER_MONTH, pl.Utf8))
    return rows.hstack(months).select(
        *RAW_COLUMNS, pl.col("source") + pl.col("month"), *(["claim_id"] if "claim_id" in cols else []))


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema={c: pl.Utf8 for c in (*RAW_COLUMNS, "source")})


def _roster(settings: Settings, found: list[Problem]) -> pl.DataFrame | None:
    """The roster table (``--roster``), read as any export: employee id and any of the people's
    columns, status and relation."""
    if settings.roster is None:
        return None
    try:
        read = import_payroll(settings.roster, roster=True)
    except ClaimError as e:
        found += e.problems
        return None
    found += read.problems
    return read.table


def _payroll_rows(raw: pl.DataFrame, header: ClaimHeader | None, roster: pl.DataFrame | None, found: list[Problem],
                  who: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Raw rows -> raw monthly rows and the people (of the rows, or ``who``): the roster joined,
    pay periods allocated (P6)."""
    if roster is not None and not roster.is_empty():
        fills = [c for c in P.ROSTER_FILLS if c in roster.columns and c not in raw.columns]
        if fills:
            raw = raw.join(roster.select(pl.col("employee_id").str.strip_chars(), *fills).unique("employee_id", keep="first"),
                           left_on=pl.col("employee_id").cast(pl.Utf8).str.strip_chars(), right_on="employee_id", how="left",
                           suffix="_roster").drop("employee_id_roster", strict=False)
    people, problems = P.extract(raw if who is None else who)
    found += problems
    if roster is not None:
        roster_people, problems = P.extract(roster)
        found += problems
        people = P.joined(people, roster_people)
    if "period_start" in raw.columns or "period_end" in raw.columns:
        if "month" in raw.columns:
            found.append(Problem("payroll", "give each row's month or its pay period (period_start, period_end), not both (docs/format.md)"))
        from .imports.periods import monthly as pay_period_months

        how = header.options.pay_period_allocation if header is not None else "weekdays"
        raw, problems = pay_period_months(raw.with_columns(pl.lit(None, dtype=pl.Utf8).alias(c) for c in ("period_start", "period_end") if c not in raw.columns), how)
        found += problems
    return raw, (people if not people.is_empty() else None)


def _payroll_of(doc: dict, payroll: pl.DataFrame | None, base_dir: Path | None, settings: Settings, header: ClaimHeader | None,
                at: str = "") -> tuple[pl.DataFrame | dict[str, list], list[Problem], pl.DataFrame | None]:
    """The raw monthly payroll rows of a claim, or of one location of a several-location claim
    (``at``), its problems and its people: embedded ``employees``, or the table named by
    ``payroll`` (read only from ``base_dir``, the folder a caller grants; never otherwise)."""
    found: list[Problem] = []
    if "employees" in doc and (payroll is not None or doc.get("payroll")):
        found.append(Problem(f"{at}employees", "give either embedded employees or a payroll table, not both"))
    if payroll is None and isinstance(doc.get("payroll"), str) and doc["payroll"]:
        if base_dir is None:  # only a caller that grants a folder (the CLI's load_claim) lets a claim name a file
            found.append(Problem(f"{at}payroll", "names a payroll table file, which is read only from a claim file's folder; "
                                            "give the table with the claim"))
        else:
            try:
                read = import_payroll(base_dir / doc["payroll"], mapping=settings.mapping)
                payroll = read.table
                found += read.problems
            except ClaimError as e:
                found += e.problems
    if payroll is not None:
        raw, people = _payroll_rows(payroll, header, _roster(settings, found), found)
        return raw, found, people
    if "employees" in doc:
        raw, emp_problems, who = _employees_table(doc["employees"], at)
        found += emp_problems
        if isinstance(raw, dict) and settings.roster is None:  # the rows stay lists: ``_finish`` makes one table of all claims'
            people, problems = P.extract(who) if who is not None else (None, [])
            found += problems
            return raw, found, (people if people is not None and not people.is_empty() else None)
        if isinstance(raw, dict):
            raw = _text_frame(raw)
        raw, people = _payroll_rows(raw, header, _roster(settings, found), found, who)
        return raw, found, people
    if not doc.get("payroll"):
        found.append(Problem(f"{at}employees", "missing: give the employees with their hours, or name a payroll table in \"payroll\""))
    return _empty(), found, None


def _parse(doc: Any, payroll: pl.DataFrame | None, base_dir: Path | None, source: str | None, settings: Settings | None = None,
           of: int = 0) -> list[_Parsed]:
    if not isinstance(doc, dict):
        return [_Parsed(None, _empty(), [Problem("claim", "must be a JSON object (see docs/format.md)")], source, of=of)]
    settings = settings or Settings()
    sites = doc.get("locations")
    if isinstance(sites, list):
        return _parse_sites(doc, sites, payroll, base_dir, source, settings, of)
    header, found = validate_header({k: v for k, v in doc.items() if k != "employees"})
    raw, more, people = _payroll_of(doc, payroll, base_dir, settings, header)
    return [_Parsed(header, raw, found + more, source, people, of)]


def _parse_sites(doc: dict, sites: list, payroll: pl.DataFrame | None, base_dir: Path | None, source: str | None,
                 settings: Settings, of: int) -> list[_Parsed]:
    """A several-location claim (L6): the header, then each location's own payroll."""
    found: list[Problem] = []
    if payroll is not None or "employees" in doc or doc.get("payroll"):
        found.append(Problem("locations", "with several locations each location gives its own employees or payroll, not the claim"))
    header, problems = validate_header({**doc, "locations": [
        {k: v for k, v in site.items() if k != "employees"} if isinstance(site, dict) else site for site in sites]})
    found += problems
    out = []
    for i, site in enumerate(sites):
        part = header.part(header.locations[i]) if header is not None else None
        raw, more, people = (_payroll_of(site, None, base_dir, settings, part, f"locations[{i}].") if isinstance(site, dict)
                             else (_empty(), [], None))
        out.append(_Parsed(part, raw, (found if i == 0 else []) + more, source, people, of, header,
                           site.get("id") if isinstance(site, dict) else None, True))
    if not out:
        out.append(_Parsed(None, _empty(), found, source, None, of, None, None, True))
    return out


def _finish(parsed: list[_Parsed]) -> list[Claim | ClaimError]:
    """Normalise every claim's payroll in one columnar pass (no per-claim start-up cost): the
    embedded employees' rows of consecutive claims become one table, not one each."""
    columns = (*RAW_COLUMNS, "source")
    frames: list[pl.DataFrame] = []
    lists: dict[str, list] = {c: [] for c in (*_PER_EMPLOYEE, *_PER_MONTH, "claim_id")}

    def flush() -> None:
        if lists["claim_id"]:
            frames.append(_text_frame(lists))
            for v in lists.values():
                v.clear()

    for i, p in enumerate(parsed):
        if isinstance(p.raw, dict):
            for c in (*_PER_EMPLOYEE, *_PER_MONTH):
                lists[c] += p.raw[c]
            lists["claim_id"] += [i] * len(p.raw["source"])
            continue
        flush()
        f = p.raw if p.raw.columns == list(columns) and all(t == pl.Utf8 for t in p.raw.dtypes) else p.raw.select(
            *(pl.col(c).cast(pl.Utf8) if c in p.raw.columns else pl.lit(None, dtype=pl.Utf8).alias(c) for c in columns))
        frames.append(f.with_columns(pl.lit(i, dtype=pl.Int64).alias("claim_id")))
    flush()
    cuts = pl.DataFrame({
        "claim_id": range(len(parsed)),
        "_cut": [first_unknown_month(p.header.as_of) if p.header is not None else None for p in parsed],
    }, schema={"claim_id": pl.Int64, "_cut": pl.Int32})
    rows = pl.concat(frames, how="vertical", rechunk=False) if frames else pl.DataFrame(
        schema={**{c: pl.Utf8 for c in columns}, "claim_id": pl.Int64})
    table = normalize(rows.lazy().join(cuts.lazy(), on="claim_id", how="left"), as_of_idx=pl.col("_cut")).collect()
    bad = table.filter(pl.col("problem").is_not_null())
    row_problems: dict[int, list[Problem]] = {}
    for cid, source, message in bad.select("claim_id", "source", "problem").iter_rows():
        row_problems.setdefault(cid, []).append(Problem(source, message))
    good = _by_claim(table)
    out: list[Claim | ClaimError] = []
    for i, p in enumerate(parsed):
        found = p.found + row_problems.get(i, [])
        if found or p.header is None:
            out.append(ClaimError(grouped(found), p.source))
        else:
            rows = good.get((i,))
            out.append(Claim(p.header, rows if rows is not None else table.select(KEEP).clear(), p.source, p.people, location_id=p.location_id))
    return _claims(parsed, out)


def _by_claim(table: pl.DataFrame) -> dict[tuple[int], pl.DataFrame]:
    """The ``KEEP`` columns of each claim's rows of ``table``, by ``(claim_id,)``: slices of the
    one table when its rows come claim by claim, in order (as ``_finish`` makes it: a slice
    shares the table's memory, a partition copies every row)."""
    ids = table.get_column("claim_id")
    rows = table.select(KEEP)
    if not ids.is_sorted():
        return rows.with_columns(ids).partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
    runs = ids.rle()
    starts = accumulate(runs.struct.field("len").to_list(), initial=0)
    return {(cid,): rows.slice(start, n) for cid, n, start in zip(runs.struct.field("value").to_list(), runs.struct.field("len").to_list(), starts)}


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
            people = [r.people for r in mine if r.people is not None]
            out.append(Claim(p.whole, pl.concat([r.payroll for r in mine]), p.source, pl.concat(people) if people else None, parts=tuple(mine)))
        k = group[-1] + 1
    return out


_QUOTED = re.compile(r"'[^']*'|\b\d{4}-\d{2}(-\d{2})?\b|\b\d+(\.\d+)?\b")
_SHOWN = 5  # rows named in a grouped problem


def _kind(p: Problem) -> str:
    """What a problem says, without the value it quotes: the problems of one column and kind."""
    if p.message.startswith("employee ") and "more than one row" in p.message:
        return "duplicate row"
    return _QUOTED.sub("_", p.message)


_ROW = re.compile(r"^(.*\b)(line|row) (\d+)$")
_TABLE_ROW = re.compile(r"\b(line|row) \d+|(^|\.)employees\[\d+\]\.hours\.")


def _rows_text(locations: list[str]) -> str:
    """``t.csv line 8; t.csv line 9`` -> ``t.csv lines 8, 9``."""
    parts = [_ROW.match(x) for x in locations]
    if all(parts) and len({(m.group(1), m.group(2)) for m in parts}) == 1:
        return f"{parts[0].group(1)}{parts[0].group(2)}s {', '.join(m.group(3) for m in parts)}"
    return "; ".join(locations)


def grouped(problems: list[Problem]) -> list[Problem]:
    """One problem per column and kind of problem (FORMAT.md: every distinct problem, at once):
    a problem of many rows is given once, with the count, the first one's words and the first
    rows, e.g. ``month: 288 rows like this: '08/2006' is not a calendar month ...``."""
    groups: dict[object, list[Problem]] = {}
    for k, p in enumerate(problems):  # only a table's rows are grouped; each field of the header stays itself
        groups.setdefault(_kind(p) if _TABLE_ROW.search(p.location) else k, []).append(p)
    out = []
    for ps in groups.values():
        if len(ps) == 1:
            out.append(ps[0])
            continue
        first = ps[0]
        column, sep, rest = first.message.partition(": ")
        more = f" and {len(ps) - _SHOWN} more" if len(ps) > _SHOWN else ""
        where = _rows_text([p.location for p in ps[:_SHOWN]]) + more
        if sep and " " not in column:
            message = f"{column}: {len(ps)} rows like this: {rest}"
        else:
            message = f"{len(ps)} rows like this: {first.message}"
        out.append(Problem(where, message))
    return out


def claims_from_docs(docs: list[tuple[Any, Path | None, str | None]], settings: Settings | None = None) -> list[Claim | ClaimError]:
    """Validate many claim documents (doc, base_dir, source) at once; each result is a ``Claim``
    or the ``ClaimError`` listing all of that claim's problems. ``settings``: how to read the
    payroll tables they name (a mapping, a roster)."""
    return _finish([x for i, (doc, base_dir, source) in enumerate(docs) for x in _parse(doc, None, base_dir, source, settings, i)])


def claim_from_dict(doc: Any, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None,
                    settings: Settings | None = None) -> Claim:
    """Validate a claim document (parsed with Decimal numbers) into a ``Claim``. A ``payroll`` file
    the document names is read only when ``base_dir`` is given: the folder it is read from (a
    relative name is taken from there); without it no file is opened."""
    (result,) = _finish(_parse(doc, payroll, base_dir, source, settings))
    if isinstance(result, ClaimError):
        raise result
    return result


def claim_from_json(text: str | bytes, *, payroll: pl.DataFrame | None = None, base_dir: Path | None = None, source: str | None = None) -> Claim:
    return claim_from_dict(parse_json(text, source), payroll=payroll, base_dir=base_dir, source=source)


def _read_doc(path: Path) -> Any:
    if not path.is_file():
        why = ("is a folder; give the claim files in it (a shell's FOLDER/*.json)" if path.is_dir() else
               "is not a regular file; give a claim file (JSON)" if path.exists() else "no such file")
        raise ClaimError([Problem(str(path), why)], str(path))
    try:
        return parse_json(path.read_bytes(), str(path))
    except OSError as e:
        raise ClaimError([Problem(str(path), f"cannot be read: {e.strerror}")], str(path)) from None


def load_claim(path: str | Path, settings: Settings | None = None) -> Claim:
    """Load a claim file: JSON (embedded employees, or a header naming its payroll table, relative
    to the header's folder, read with ``settings``)."""
    p = Path(path)
    return claim_from_dict(_read_doc(p), base_dir=p.parent, source=str(p), settings=settings)


def load_claims(paths: list[str | Path], settings: Settings | None = None) -> list[Claim | ClaimError]:
    """Load many claim files with one normalisation pass; a bad file gives its ``ClaimError``."""
    docs, errors = [], {}
    for k, path in enumerate(map(Path, paths)):
        try:
            docs.append((_read_doc(path), path.parent, str(path)))
        except ClaimError as e:
            errors[k] = e
            docs.append((None, None, str(path)))
    results = claims_from_docs(docs, settings)
    return [errors.get(k, r) for k, r in enumerate(results)]
