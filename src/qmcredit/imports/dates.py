"""Months and dates as people write them, the format found once per column.

Each format is tried on a column's distinct values (a payroll has a few hundred); the format
that reads every value is the column's. When two read every value and disagree (``01/02/2005``:
D/M or M/D) the column is refused until the user chooses (``--date-format`` or the mapping file's
``date_format``); values no format reads are reported, grouped, with the column's format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_MONTHS.update({"sept": 9, "january": 1, "february": 2, "march": 3, "april": 4, "june": 6, "july": 7, "august": 8,
                "september": 9, "october": 10, "november": 11, "december": 12})


def _year(y: str) -> int:
    """A two-digit year is 19yy from 70 on, else 20yy (how spreadsheets read them)."""
    n = int(y)
    return n if len(y) == 4 else (1900 + n if n >= 70 else 2000 + n)


def _ymd(y: str, m: str | int, d: str | int | None) -> tuple[int, int, int | None] | None:
    mm = _MONTHS.get(m.lower().rstrip(".")) if isinstance(m, str) and not m.isdigit() else int(m)
    if mm is None or not 1 <= mm <= 12:
        return None
    yy = _year(y)
    if d is None:
        return yy, mm, None
    try:
        date(yy, mm, int(d))
    except ValueError:
        return None
    return yy, mm, int(d)


_TIME = r"(?:[ T]00:00(?::00(?:\.0+)?)?)?"
_MON = r"([A-Za-z]{3,9}\.?)"

#: Format name -> (pattern, reader of the groups -> (year, month, day or None)). Names are what
#: the preview states and ``date_format`` takes.
FORMATS: dict[str, tuple[re.Pattern, object]] = {
    "YYYY-MM": (re.compile(r"^(\d{4})[-/.](\d{1,2})$"), lambda y, m: _ymd(y, m, None)),
    "MM/YYYY": (re.compile(r"^(\d{1,2})[-/.](\d{4})$"), lambda m, y: _ymd(y, m, None)),
    "YYYYMM": (re.compile(r"^(\d{4})(\d{2})$"), lambda y, m: _ymd(y, m, None)),
    "Mon YYYY": (re.compile(r"^" + _MON + r"[ ,\-/']*(\d{4}|\d{2})$"), lambda m, y: _ymd(y, m, None)),
    "YYYY-MM-DD": (re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})" + _TIME + "$"), lambda y, m, d: _ymd(y, m, d)),
    "MM/DD/YYYY": (re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})" + _TIME + "$"), lambda m, d, y: _ymd(y, m, d)),
    "DD/MM/YYYY": (re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})" + _TIME + "$"), lambda d, m, y: _ymd(y, m, d)),
    "DD Mon YYYY": (re.compile(r"^(\d{1,2})[ \-/]" + _MON + r"[ \-/,]*(\d{4}|\d{2})$"), lambda d, m, y: _ymd(y, m, d)),
    "Mon DD, YYYY": (re.compile(r"^" + _MON + r" (\d{1,2}),? (\d{4})$"), lambda m, d, y: _ymd(y, m, d)),
}
MONTH_ONLY = ("YYYY-MM", "MM/YYYY", "YYYYMM", "Mon YYYY")
EXCEL = "Excel date cells"


def read(fmt: str, text: str) -> tuple[int, int, int | None] | None:
    pattern, reader = FORMATS[fmt]
    m = pattern.match(text.strip())
    return reader(*m.groups()) if m else None


@dataclass(frozen=True)
class Detected:
    """A column's format and its values read: ``values`` maps each distinct text to its canonical
    text (``YYYY-MM`` for a month, ``YYYY-MM-DD`` for a date), or None when the format does not
    read it; ``problem``: a message refusing the whole column (an ambiguous format)."""

    format: str | None
    values: dict[str, str | None]
    problem: str | None = None
    candidates: tuple[str, ...] = ()  # with ``problem``: the formats that fit every value


def _text(ymd: tuple[int, int, int | None], month: bool) -> str:
    y, m, d = ymd
    return f"{y:04d}-{m:02d}" if month or d is None else f"{y:04d}-{m:02d}-{d:02d}"


def detect(field: str, distinct: list[str], chosen: str | None = None, excel: bool = False) -> Detected:
    """The format of a column of ``field`` (``month``: a month or a date, taken as its month;
    other fields: a date) from its distinct non-empty values; ``chosen``: the user's format;
    ``excel``: the values came from Excel date cells (already ``YYYY-MM-DD``)."""
    month = field == "month"
    names = [chosen] if chosen else [f for f in FORMATS if month or f not in MONTH_ONLY]
    reads = {f: {v: read(f, v) for v in distinct} for f in names}
    if excel and not chosen:
        reads = {"YYYY-MM-DD": reads.get("YYYY-MM-DD") or {v: read("YYYY-MM-DD", v) for v in distinct}}
    full = [f for f, r in reads.items() if all(x is not None for x in r.values())]
    label = lambda f: EXCEL if excel and f == "YYYY-MM-DD" else f  # noqa: E731
    if len(full) > 1:
        texts = {f: tuple(_text(reads[f][v], month) for v in distinct) for f in full}
        if len(set(texts.values())) > 1:
            example = next(v for v in distinct if len({_text(reads[f][v], month) for f in full}) > 1)
            return Detected(None, {}, candidates=tuple(full), problem=(
                f"the values fit {' and '.join(full)} ({example!r} is {' or '.join(_text(reads[f][example], month) for f in full)}); "
                f"choose one with --date-format {field}={full[0].replace(' ', '_')!s} or the mapping file's date_format"))
        full = full[:1]
    if full:
        f = full[0]
        return Detected(label(f), {v: _text(reads[f][v], month) for v in distinct})
    if not distinct:
        return Detected(None, {})
    best = max(reads, key=lambda f: sum(x is not None for x in reads[f].values()))
    if not any(x is not None for x in reads[best].values()):  # not one value reads: the column, not its rows
        return Detected(None, {}, problem=_unread(field, distinct, chosen))
    return Detected(label(best), {v: (None if reads[best][v] is None else _text(reads[best][v], month)) for v in distinct})


#: Excel's day numbers, a date cell saved as a number (``38718``): day 1 is 1900-01-01, counted
#: from 1899-12-30 as if 1900 were a leap year; the last is 9999-12-31. ``payroll`` names them too.
EXCEL_DAY = r"^(\d{1,7})(?:\.0+)?$"
EXCEL_EPOCH = date(1899, 12, 30)
EXCEL_LAST_DAY = 2_958_465
_EXCEL_DAY = re.compile(EXCEL_DAY)


def _unread(field: str, distinct: list[str], chosen: str | None) -> str:
    """Why a column none of whose values reads as a date is refused, and the fix; a column of
    whole numbers that are days of Excel's calendar (``38718``: a date cell saved as a number)
    is named as such, not read as dates: nothing says that is what they are."""
    example = distinct[0]
    what = f"in the format {chosen}" if chosen else f"in any format ({', '.join(f for f in FORMATS if field == 'month' or f not in MONTH_ONLY)})"
    said = f"no value reads as a {'month' if field == 'month' else 'date'} {what}, e.g. {example!r}"
    days = [int(float(v)) for v in distinct if _EXCEL_DAY.match(v.strip())]
    if len(days) == len(distinct) and all(1 <= d <= EXCEL_LAST_DAY for d in days):
        first = EXCEL_EPOCH.toordinal() + days[0]
        return (f"{said}: these look like Excel day numbers ({days[0]} would be {date.fromordinal(first).isoformat()}); "
                "format the column as dates in Excel and save the export again")
    return f"{said}; write them as {'YYYY-MM' if field == 'month' else 'YYYY-MM-DD'}, or choose the format with --date-format {field}=FORMAT"


def parse_choice(text: str) -> dict[str, str]:
    """``--date-format month=MM/YYYY,period_start=MM/DD/YYYY`` (or one format for every date
    column: ``--date-format DD/MM/YYYY``); ``_`` may stand for a space."""
    out = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        f, eq, fmt = part.partition("=")
        if not eq:
            f, fmt = "*", part
        fmt = fmt.strip().replace("_", " ")
        out[f.strip()] = fmt
    return out
