"""What the reading of an export found, as a person checks it: each column's field, the format
of its dates, what its words mean, the first rows and the problems (``qmcredit columns``)."""

from __future__ import annotations

from .mapping import FIELDS, Mapping
from .people import masked
from .table import Imported


def field_of(read: Imported) -> dict[str, str]:
    return {h: f for f, hs in read.columns.items() for h in hs}


def lines(read: Imported, problems: list, rows: int = 5) -> list[str]:
    fields = field_of(read)
    width = max([len(repr(h)) for h in read.headers] + [8])
    out = [*(f"read: {n}" for n in read.notes), "", f"{'column':<{width}}  field"]
    for h in read.headers:
        f = fields.get(h)
        extra = ""
        if f in read.formats:
            extra = f"  format {read.formats[f]}"
        elif f in read.values:
            extra = "  " + ", ".join(f"{v!r} -> {w if w else ('(unknown)' if w is None else '(none)')}" for v, w in list(read.values[f].items())[:8])
        out.append(f"{h!r:<{width}}  {f or '(not used)'}{' (summed)' if f == 'hours' and len(read.columns['hours']) > 1 else ''}{extra}")
    unmapped = [f for f in ("employee_id", "month", "hours") if f not in read.columns] if "period_start" not in read.columns else []
    if unmapped:
        out.append(f"not found: {', '.join(unmapped)}")
    if read.preview and rows:
        out += ["", "first rows:"]
        for r in read.preview[:rows]:
            out.append("  " + ", ".join(f"{k}={masked(str(v)) if fields.get(k) == 'ssn' else v}" for k, v in r.items() if v is not None))
    if problems:
        out += ["", f"{len(problems)} problem(s):", *(f"  {p}" for p in problems)]
    else:
        out += ["", f"{read.table.height} row(s) read, no problems"]
    return out


def chosen_mapping(read: Imported, given: Mapping) -> Mapping:
    """What to save for next year: every column's field as read, the formats found, and the
    user's value maps and sheet."""
    columns = {f: read.columns[f] for f in FIELDS if f in read.columns}
    return Mapping(columns, given.values, {**read.formats_for_saving(), **given.date_format}, given.sheet)
