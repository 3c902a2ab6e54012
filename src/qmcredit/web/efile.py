"""Form 313's figures for preparers' software (issue 16): one row per line and period, the same
strings the PDF prints (``form.forms_for``), as JSON or CSV.

Columns: ``period_start``, ``period_end``, ``part`` (``header``, ``I`` to ``V``, ``II-rider``),
``line`` (the form's number: ``7``, ``16b``, Part II ``a.ssn``, Part V ``2(c)B`` for line 2(c) in
column B; line 16's unlettered amounts ``16other``, credits not named on the form, and
``16erc.ID``, this credit as the return's location ID takes it, L6), ``label`` (the line's text)
and ``value`` (as printed; ``pending`` where the determination has not decided it, empty where the
form's line is blank). A claim with several locations (L6) has a first column ``location``, the
location's id: one row per location, line and period.
"""

from __future__ import annotations

import csv
import io
import json

from .form import Form313

COLUMNS = ("period_start", "period_end", "part", "line", "label", "value")
PART_II_FIELDS = ("ssn", "name", "from", "to")


def columns(forms: list[Form313]) -> tuple[str, ...]:
    return ("location", *COLUMNS) if any(f.location_id for f in forms) else COLUMNS


def rows(forms: list[Form313]) -> list[dict]:
    out = []
    several = any(f.location_id for f in forms)
    for f in forms:
        def add(part: str, line: str, label: str, value: str) -> None:
            out.append({**({"location": f.location_id} if several else {}), **dict(zip(COLUMNS, (f.start, f.end, part, line, label, value)))})

        add("header", "form_version", "Form 313 layout followed", f.version["id"])
        add("header", "form_year", "Form year", str(f.version["form_year"]))
        if f.version["warning"]:
            add("header", "layout_warning", "The form year's own layout is not recorded", f.version["warning"])
        add("header", "name", "Name as shown on return", f.taxpayer_name)
        add("header", "federal_id", "Federal ID number", f.taxpayer_id)
        if f.version["unitary_id"]:
            add("header", "unitary_id", "Unitary ID number, if applicable", f.unitary_id)
        if f.version["combined_return_oval"]:
            add("header", "combined_return", "Combined return member not sharing its credit (oval)", "X" if f.combined_group_member else "")
        for part in f.parts:
            for ln in (*part.lines, *part.after):
                if not ln.no and not ln.value:
                    continue  # line 16's caption: the total is the row with the figure
                line = f"16{ln.no[:-1]}" if ln.no.endswith(")") else (ln.no or ln.key)
                add(part.number, line, ln.text, ln.value)
            if part.number == "II":
                for row in part.table[1:]:
                    if any(row[1:]):
                        for name, v in zip(PART_II_FIELDS, row[1:]):
                            add("II", f"{row[0].rstrip('.')}.{name}", name, v)
            if part.number == "V" and part.table:
                head, *body = part.table
                for row in body:
                    no = row[0].split(" ", 1)[0].rstrip(".")
                    for col, v in zip(head[1:], row[1:]):
                        letter, year = col.split(": ")
                        add("V", f"{no}{letter}", f"{row[0]} (column {letter}, tax year ending {year})", v)
        for row in f.rider[1:]:
            for name, v in zip(PART_II_FIELDS, row[1:]):
                add("II-rider", f"{row[0].rstrip('.')}.{name}", name, v)
    return out


def to_json(forms: list[Form313]) -> str:
    return json.dumps(rows(forms), indent=1, ensure_ascii=False) + "\n"


def to_csv(forms: list[Form313]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns(forms), lineterminator="\n")
    w.writeheader()
    w.writerows(rows(forms))
    return buf.getvalue()
