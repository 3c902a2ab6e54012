"""Which column of an export is which field of the payroll table, and what its values mean.

``guess`` reads a header as payroll systems write it ("Employee ID", "Pay Period", "Hours
Worked", "Emp Type", ...); a ``Mapping`` (from ``--columns``, a mapping file, or the upload page)
overrides any guess. A mapping file (TOML or JSON) holds ``columns``, ``values``, ``date_format``
and ``sheet``, and is saved once (``save``) and reused each year.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..problems import ClaimError, Problem

#: The fields a column may be mapped to, in the order they are shown. ``hours`` may take several
#: columns (their sum is the row's hours: RULES.md, open question "paid leave"); ``relation`` is
#: one column for both P1 fields (Owner -> ownership_interest, Son -> descendant, ...).
FIELDS = (
    "claim_id", "employee_id", "name", "ssn", "month", "period_start", "period_end", "hours", "basis",
    "ownership_interest", "owner_relation", "relation", "hired", "separated",
)
DATE_FIELDS = ("month", "period_start", "period_end", "hired", "separated")


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9#]+", " ", str(text).lower()).strip()


# Header words, by field, as exports spell them (compared after lower-casing and turning
# punctuation into spaces). The first field whose list holds a header takes it.
_NAMES: dict[str, tuple[str, ...]] = {
    "claim_id": ("claim_id", "claim id", "claim"),
    "employee_id": ("employee id", "employee_id", "emp id", "empid", "employee number", "employee no", "employee #", "emp no",
                    "emp #", "emp number", "ee id", "ee #", "employee code", "emp code", "worker id", "staff id", "id", "badge",
                    "file #", "file number", "payroll id", "personnel number", "clock #"),
    "name": ("name", "employee name", "emp name", "full name", "employee", "worker", "ee name", "employee full name"),
    "ssn": ("ssn", "social security number", "social security", "soc sec", "ss #", "ss number", "ssn #", "tax id", "tin"),
    "month": ("month", "pay month", "period", "pay period", "payroll month", "work month", "month worked", "pay date",
              "check date", "period ending", "period end date", "month ending"),
    "period_start": ("period_start", "period start", "pay period start", "period begin", "period beginning", "start date",
                     "pay period begin", "pay period beginning", "period from", "from", "begin date", "week start"),
    "period_end": ("period_end", "period end", "pay period end", "period ending date", "end date", "pay period ending",
                   "period to", "to", "week ending", "week end"),
    "hours": ("hours", "hours worked", "hrs", "hrs worked", "total hours", "regular hours", "reg hours", "reg hrs", "overtime",
              "overtime hours", "ot hours", "ot hrs", "ot", "worked hours", "work hours", "hours paid"),
    "basis": ("basis", "status", "employment type", "employment status", "emp type", "emp status", "type", "employee type",
              "employee status", "job type", "position type", "classification", "class", "ft pt", "ft/pt"),
    "ownership_interest": ("ownership_interest", "ownership interest", "owner", "is owner", "owner y n", "has ownership"),
    "owner_relation": ("owner_relation", "owner relation", "relation to owner", "relationship to owner"),
    "relation": ("relation", "relationship", "ownership", "family", "family relation", "related to owner", "owner family"),
    "hired": ("hired", "hire date", "date hired", "date of hire", "start", "employment start", "hired on", "doh"),
    "separated": ("separated", "separation date", "termination date", "term date", "date terminated", "end of employment",
                  "terminated", "separated on", "dot"),
}
_BY_NAME = {_key(n): f for f, names in _NAMES.items() for n in names}
# Paid leave is not hours worked (RULES.md, open question "paid leave"): such columns are never
# guessed as hours, though a mapping may name them.
_LEAVE = re.compile(r"\b(pto|vacation|vac|holiday|hol|sick|leave|bereavement|jury|personal)\b")

#: Value maps by field: an export's words for the payroll table's. Not "Contract": a contract
#: employee is temporary, an independent contractor is no employee at all (whose hours, counted
#: as a temporary's part-time equivalent, would raise the credit): the user says which. A mapping file's ``values``
#: adds to or replaces these; values are compared lower-cased, without surrounding spaces.
VALUES: dict[str, dict[str, str]] = {
    "basis": {
        "ft": "permanent", "pt": "permanent", "full time": "permanent", "full-time": "permanent", "part time": "permanent",
        "part-time": "permanent", "f": "permanent", "p": "permanent", "regular": "permanent", "reg": "permanent",
        "perm": "permanent", "permanent": "permanent", "fte": "permanent", "salaried": "permanent", "hourly": "permanent",
        "regular full time": "permanent", "regular part time": "permanent",
        "temp": "temporary", "temporary": "temporary", "t": "temporary", "tmp": "temporary",
        "seasonal": "seasonal", "season": "seasonal", "s": "seasonal", "seas": "seasonal",
    },
    "relation": {
        "owner": "owner", "owners": "owner", "shareholder": "owner", "partner": "owner", "member": "owner", "officer owner": "owner",
        "spouse": "spouse", "wife": "spouse", "husband": "spouse",
        "son": "descendant", "daughter": "descendant", "child": "descendant", "grandson": "descendant",
        "granddaughter": "descendant", "grandchild": "descendant", "descendant": "descendant",
        "father": "ancestor", "mother": "ancestor", "parent": "ancestor", "grandfather": "ancestor",
        "grandmother": "ancestor", "grandparent": "ancestor", "ancestor": "ancestor",
        "dependant": "dependant", "dependent": "dependant",
        "": "", "none": "", "n/a": "", "na": "", "-": "", "no": "", "employee": "", "unrelated": "",
    },
}
_CANONICAL = {"basis": ("permanent", "temporary", "seasonal"), "relation": ("owner", "spouse", "dependant", "ancestor", "descendant", "")}


@dataclass
class Mapping:
    """What a user said about a table: ``columns`` (field -> header, or several headers for
    ``hours``), ``values`` (field -> {export word: table word}), ``date_format`` (field ->
    a format name of ``dates.FORMATS``), ``sheet`` (an Excel sheet's name or 1-based number)."""

    columns: dict[str, list[str]] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    date_format: dict[str, str] = field(default_factory=dict)
    sheet: str | None = None

    def merged(self, other: Mapping) -> Mapping:
        """This mapping with ``other``'s choices over it (the command line over a file)."""
        values = {f: {**self.values.get(f, {}), **other.values.get(f, {})} for f in {*self.values, *other.values}}
        return Mapping({**self.columns, **other.columns}, values, {**self.date_format, **other.date_format}, other.sheet or self.sheet)

    def value_map(self, name: str) -> dict[str, str]:
        return {**VALUES.get(name, {}), **{k.strip().lower(): v for k, v in self.values.get(name, {}).items()}}

    def to_dict(self) -> dict:
        out: dict = {"columns": {f: (h[0] if len(h) == 1 else h) for f, h in self.columns.items()}}
        if self.values:
            out["values"] = self.values
        if self.date_format:
            out["date_format"] = self.date_format
        if self.sheet is not None:
            out["sheet"] = self.sheet
        return out


def _problem(where: str, message: str) -> ClaimError:
    return ClaimError([Problem(where, message)])


def from_dict(doc: object, where: str = "mapping") -> Mapping:
    """A mapping from its JSON/TOML form, every mistake named."""
    if not isinstance(doc, dict):
        raise _problem(where, "must be an object with columns, values, date_format, sheet")
    problems = [Problem(f"{where}.{k}", "unknown key; a mapping has columns, values, date_format, sheet")
                for k in doc if k not in ("columns", "values", "date_format", "sheet")]
    columns: dict[str, list[str]] = {}
    for f, h in (doc.get("columns") or {}).items():
        heads = [h] if isinstance(h, str) else h
        if f not in FIELDS:
            problems.append(Problem(f"{where}.columns.{f}", f"unknown field; map columns to {', '.join(FIELDS)}"))
        elif not isinstance(heads, list) or not heads or not all(isinstance(x, str) for x in heads):
            problems.append(Problem(f"{where}.columns.{f}", "must be a column's header (or, for hours, a list of headers)"))
        elif len(heads) > 1 and f != "hours":
            problems.append(Problem(f"{where}.columns.{f}", "only hours may take several columns (their sum)"))
        else:
            columns[f] = list(heads)
    values: dict[str, dict[str, str]] = {}
    for f, m in (doc.get("values") or {}).items():
        if f not in _CANONICAL:
            problems.append(Problem(f"{where}.values.{f}", f"values are mapped for {', '.join(_CANONICAL)}"))
        elif not isinstance(m, dict) or not all(isinstance(v, str) for v in m.values()):
            problems.append(Problem(f"{where}.values.{f}", "must map an export's words to words, e.g. {\"FT\": \"permanent\"}"))
        else:
            bad = [v for v in m.values() if v.strip().lower() not in _CANONICAL[f]]
            if bad:
                problems.append(Problem(f"{where}.values.{f}", f"{bad[0]!r} is not one of {', '.join(repr(x) for x in _CANONICAL[f])}"))
            values[f] = {str(k): v.strip().lower() for k, v in m.items()}
    from .dates import FORMATS

    dates = doc.get("date_format") or {}
    if isinstance(dates, str):
        dates = {f: dates for f in DATE_FIELDS}
    for f, fmt in dates.items():
        if f not in DATE_FIELDS or fmt not in FORMATS:
            problems.append(Problem(f"{where}.date_format.{f}", f"give a field of {', '.join(DATE_FIELDS)} and a format of {', '.join(FORMATS)}"))
    sheet = doc.get("sheet")
    if sheet is not None and not isinstance(sheet, (str, int)):
        problems.append(Problem(f"{where}.sheet", "must be a sheet's name or its number (1 is the first)"))
    if problems:
        raise ClaimError(problems)
    return Mapping(columns, values, dict(dates), None if sheet is None else str(sheet))


def load(path: str | Path) -> Mapping:
    """Read a mapping file (``.toml`` or ``.json``)."""
    p = Path(path)
    if not p.is_file():
        raise _problem(str(p), "mapping file not found")
    try:
        doc = tomllib.loads(p.read_text()) if p.suffix.lower() == ".toml" else json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise _problem(str(p), f"cannot be read as {'TOML' if p.suffix.lower() == '.toml' else 'JSON'}: {e}") from None
    return from_dict(doc, p.name)


def _toml_value(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(json.dumps(x) for x in v) + "]"
    return json.dumps(v)  # a JSON string is a TOML basic string


def dumps(m: Mapping, toml: bool) -> str:
    d = m.to_dict()
    if not toml:
        return json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    lines = ["# qmcredit payroll mapping (docs/payroll.md): header of the export for each field"]
    if "sheet" in d:
        lines.append(f"sheet = {_toml_value(d['sheet'])}")
    for table in ("columns", "date_format"):
        if table in d:
            lines += ["", f"[{table}]", *(f"{k} = {_toml_value(v)}" for k, v in d[table].items())]
    for f, m2 in d.get("values", {}).items():
        lines += ["", f"[values.{f}]", *(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in m2.items())]
    return "\n".join(lines) + "\n"


def save(m: Mapping, path: str | Path) -> None:
    """Write the mapping file ``path`` whole (``files.written_whole``), TOML or JSON by its suffix."""
    from ..files import written_whole

    p = Path(path)
    with written_whole(p) as tmp:
        tmp.write_text(dumps(m, p.suffix.lower() == ".toml"))


def parse_columns(text: str) -> Mapping:
    """``--columns employee_id="Employee ID",hours="Hours Worked"`` (``hours=A+B`` sums two)."""
    columns: dict[str, list[str]] = {}
    problems = []
    for part in _split(text):
        f, eq, head = part.partition("=")
        f, head = f.strip(), head.strip()
        if len(head) >= 2 and head[0] == head[-1] and head[0] in "\"'":
            head = head[1:-1]
        if not eq or not head:
            problems.append(Problem("--columns", f"{part!r}: write field=\"Header\", e.g. employee_id=\"Employee ID\""))
        elif f not in FIELDS:
            problems.append(Problem("--columns", f"{f!r} is not a field; map columns to {', '.join(FIELDS)}"))
        else:
            columns[f] = [h.strip() for h in head.split("+")] if f == "hours" else [head]
    if problems:
        raise ClaimError(problems)
    return Mapping(columns)


def _split(text: str) -> list[str]:
    """Split on commas outside quotes."""
    out, cur, quote = [], "", None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            out.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur)
    return [p for p in out if p.strip()]


def guess(headers: list[str], mapping: Mapping | None = None) -> dict[str, list[str]]:
    """The field of each header: the mapping's choices first, then the common names; several
    hours columns (regular, overtime) are summed, paid-leave columns never guessed."""
    mapping = mapping or Mapping()
    chosen = {f: list(h) for f, h in mapping.columns.items()}
    taken = {h for hs in chosen.values() for h in hs}
    for h in headers:
        if h in taken or not str(h).strip():
            continue
        f = _BY_NAME.get(_key(h))
        if f is None:
            k = _key(h)
            if _LEAVE.search(k):
                continue
            if re.search(r"\b(hours|hrs)\b", k) and not re.search(r"\b(rate|pay|amount|wage|\$)\b", k):
                f = "hours"
            elif re.search(r"\b(employee|emp|ee)\b.*\b(id|no|number|#|code)\b", k):
                f = "employee_id"
            else:
                continue
        if f in mapping.columns:
            continue
        if f == "hours":
            chosen.setdefault("hours", []).append(h)
        elif f not in chosen:
            chosen[f] = [h]
    if "month" in chosen and "period_start" in chosen and "month" not in mapping.columns:
        del chosen["month"]  # "Pay Period" beside start and end dates names the period, not its month
    return chosen
