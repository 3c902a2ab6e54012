"""The determination of FORMAT.md (``qmcredit.determination/1``) and its explanation (rule B1).

Immutable; ``to_dict`` gives the public JSON. Besides the FORMAT.md fields it carries optional
ones: ``checks`` (every eligibility condition), ``monthly`` (the 36 months), ``periods[].detail``
(the lines of Form 313 Parts IV and V), ``pending`` (what ``as_of`` leaves undecided),
``not_yet_applied``, ``warnings``, and ``explanation``: each figure with its rule, citation,
parameters, inputs and the figures it depends on, down to every employee-month.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from itertools import accumulate
from pathlib import Path
from typing import Iterator

import polars as pl

from .files import written_whole
from .law.eligibility import Check
from .law.ledger import Ledger
from .law.positions import STATUS, Month
from .law.windows import PERIOD_NAMES, Windows
from .money import cents_text, exact_decimal, exact_decimal_text, exact_ratio, fraction_text, money
from .payroll import HOURS_DECIMALS, HOURS_SCALE, month_text

FORMAT = "qmcredit.determination/1"


def hours_text(scaled: int) -> str:
    whole, frac = divmod(scaled, HOURS_SCALE)
    return f"{whole}" if frac == 0 else f"{whole}.{str(frac).rjust(HOURS_DECIMALS, '0').rstrip('0')}"


def hours_text_expr(scaled: pl.Expr) -> pl.Expr:
    """``hours_text`` of a column of scaled hours (zero or more)."""
    whole, frac = (scaled // HOURS_SCALE).cast(pl.Utf8), scaled % HOURS_SCALE
    return pl.when(frac == 0).then(whole).otherwise(
        pl.concat_str(whole, pl.lit("."), frac.cast(pl.Utf8).str.zfill(HOURS_DECIMALS).str.strip_chars_end("0")))


#: The trace's employee-months (B1), as ``employee_month_table`` writes them: text, exact.
TRACE_COLUMNS = ("employee_id", "month", "period", "hours", "status", "rule", "source", "equivalents", "counted_hours")


TRACE_SCHEMA = {"claim_id": pl.Utf8, "location": pl.Utf8, **dict.fromkeys(TRACE_COLUMNS, pl.Utf8)}


def trace_table(dets: list["Determination"]) -> pl.DataFrame:
    """B1's employee-months of ``dets`` as ``write_trace`` writes them: ``claim_id``,
    ``location`` (null for a one-location claim), then ``TRACE_COLUMNS``; each determination's
    names repeated over its rows in one query (not one query a claim)."""
    parts = [(d.claim_id, loc, t) for d in dets for loc, t in d.trace_parts()]
    if not parts:
        return pl.DataFrame(schema=TRACE_SCHEMA)
    keys = pl.DataFrame({"claim_id": [c for c, _, _ in parts], "location": [loc for _, loc, _ in parts]},
                        schema={"claim_id": pl.Utf8, "location": pl.Utf8})
    heights = pl.Series([t.height for _, _, t in parts], dtype=pl.Int64)
    which = pl.int_range(len(parts), eager=True).repeat_by(heights).explode(empty_as_null=False)
    return keys[which].hstack(pl.concat([t for _, _, t in parts], rechunk=False).select(TRACE_COLUMNS))


def write_trace(table: pl.DataFrame, path: Path) -> None:
    """B1's employee-months (``trace_table``'s, of every determination) written whole to the
    Parquet file ``path``, one row each, atomically: a temporary file beside it, renamed over it."""
    with written_whole(path) as tmp:
        table.write_parquet(tmp)


_NO_ROWS = '"rows": []}]}'  # how a determination's JSON text ends when its employee-months are left to be joined in


def _json_string(column: str) -> pl.Expr:
    """Text as a JSON string, escaped as ``json.dumps(..., ensure_ascii=False)`` escapes it."""
    return pl.struct(pl.col(column).alias("")).struct.json_encode().str.slice(4).str.head(-1)


#: What ``json.dumps(..., ensure_ascii=False)`` escapes in a string: quotes, backslashes, control characters.
_ESCAPED = ['"', "\\", *map(chr, range(32))]


@functools.cache  # one expression for every claim, with and without escapes
def _row_json(escape: bool) -> pl.Expr:
    """Each employee-month's ``employee_month_rows`` entry as ``json.dumps`` writes it: the id and
    source as JSON strings (``escape``: escaped, needed only when one holds a character of
    ``_ESCAPED``; else quoted as they are), the other columns digits, dates and fixed words,
    written as they are. Adjacent fixed texts are one literal (each piece costs a pass a row)."""
    quoted = lambda c: ('"', pl.col(c), '"')  # noqa: E731
    string = lambda c: (_json_string(c),) if escape else quoted(c)  # noqa: E731
    optional = lambda c: pl.concat_str(pl.lit(f', "{c}": "'), pl.col(c), pl.lit('"')).fill_null("")  # noqa: E731
    pieces: list[str | pl.Expr] = []
    for p in ('{"employee_id": ', *string("employee_id"), ', "month": ', *quoted("month"),
              ', "period": ', pl.format('"{}"', pl.col("period")).fill_null("null"), ', "hours": ', *quoted("hours"),
              ', "status": ', *quoted("status"), ', "rule": ', *quoted("rule"), ', "source": ', *string("source"),
              optional("equivalents"), optional("counted_hours"), "}"):
        if isinstance(p, str) and pieces and isinstance(pieces[-1], str):
            pieces[-1] += p
        else:
            pieces.append(p)
    return pl.concat_str(*(pl.lit(p) if isinstance(p, str) else p for p in pieces)).alias("_json")


def employee_month_jsons(tables: list[pl.DataFrame]) -> list[str]:
    """``Determination.employee_month_json`` of each of ``tables`` (``employee_month_table``'s),
    all of them in one columnar pass: each row's text (``_row_json``), then each table's run of
    rows joined from a slice of that one column (a group-by over the tables was 40% slower)."""
    if not tables:
        return []
    rows = pl.concat(tables, rechunk=False)
    escape = rows.select(pl.any_horizontal(pl.col("employee_id", "source").str.contains_any(_ESCAPED)).any()).item()
    texts = rows.select(_row_json(bool(escape))).to_series()
    heights = [t.height for t in tables]
    return [f"[{texts.slice(start, n).str.join(', ').item()}]" for start, n in zip(accumulate(heights, initial=0), heights)]


def to_json_lines(dets: list["Determination"], explain: bool = True, rows_file: str | None = None, chunk: int = 100) -> Iterator[str]:
    """``Determination.to_json`` of each of ``dets``, in order; the employee-months of ``chunk``
    determinations at a time written in one pass (``employee_month_jsons``: one query, not one
    per claim; the text of a few claims held at once)."""
    for start in range(0, len(dets), chunk):
        part = dets[start:start + chunk]
        rows = joined_rows(part, explain, rows_file)
        yield from (d.to_json(explain, rows_file=rows_file, rows_json=rows.get(id(d))) for d in part)


def joined_rows(dets: list["Determination"], explain: bool = True, rows_file: str | None = None) -> dict[int, str]:
    """The employee-months' text of each of ``dets`` whose ``to_json`` joins it in, by ``id``,
    all made in one pass (``employee_month_jsons``)."""
    joined = [d for d in dets if d.rows_joined(explain, rows_file=rows_file)]
    return dict(zip(map(id, joined), employee_month_jsons([d.employee_months for d in joined])))


def employee_month_table(classified: pl.DataFrame) -> pl.DataFrame:
    """B1: the classified employee-months (``law.positions.classify``, of one claim or many, by
    ``claim_id``) as the trace gives them, sorted by claim, employee and month: ``TRACE_COLUMNS``
    as exact text; ``equivalents`` (counted hours / full-time hours, ``exact_decimal``) only for
    a part-time equivalent, ``counted_hours`` only when P4a capped its hours, else null."""
    pte = pl.col("status") == "part_time_equivalent"
    keys = ("claim_id", "employee_id", "month_idx")
    df = classified if _sorted_by(classified, keys) else classified.sort(*keys)  # claims' rows come sorted as read: no sort to pay
    # payrolls repeat a few hour values: each distinct one written once
    hours = df.select(pl.concat([pl.col("hours"), pl.col("counted_hours")]).unique()).to_series()
    texts = hours.to_frame().select(hours_text_expr(pl.col("hours"))).to_series()
    # and a few equivalents (P4: counted hours x ft_den / ft_num): each distinct one written once, joined on whole numbers
    ratio = ["counted_hours", "ft_num", "ft_den"]
    quotients = df.lazy().filter(pte).select(ratio).unique().collect().with_columns(  # lazy: only ``ratio`` filtered, not every column
        (pl.col("counted_hours").cast(pl.Int128) * pl.col("ft_den")).alias("_num"), pl.col("ft_num").cast(pl.Int128).alias("_den"))
    quotients = quotients.select(*ratio, pl.lit(True).alias("_pte"), exact_decimal_text(quotients, "_num", "_den").alias("equivalents"))
    # only the columns written are joined (the classified rows carry a dozen more)
    written = ["claim_id", "employee_id", "month", "period", "hours", "status", "source", *ratio]
    return df.select(*written, pte.alias("_pte")).join(quotients, on=[*ratio, "_pte"], how="left", maintain_order="left").select(
        "claim_id", "employee_id", "month",
        pl.col("period").replace_strict(dict(enumerate(PERIOD_NAMES)), default=None, return_dtype=pl.Utf8),
        pl.col("hours").replace_strict(hours, texts, return_dtype=pl.Utf8), "status",
        pl.col("status").replace_strict({k: r for k, (r, _) in STATUS.items()}, return_dtype=pl.Utf8).alias("rule"), "source", "equivalents",
        pl.when(pte & (pl.col("counted_hours") != pl.col("hours"))).then(pl.col("counted_hours").replace_strict(hours, texts, return_dtype=pl.Utf8))
        .alias("counted_hours"),
    )


def employee_months_by_claim(classified: pl.DataFrame) -> dict[tuple[int], pl.DataFrame]:
    """B1: each claim's ``employee_month_table`` (without ``claim_id``), by ``(claim_id,)``: slices
    of the one table, whose rows come claim by claim (a slice shares the table's memory; a
    partition by claim copied every row)."""
    table = employee_month_table(classified)
    runs = table.get_column("claim_id").rle()
    heights = runs.struct.field("len").to_list()
    rows = table.drop("claim_id")
    return {(cid,): rows.slice(start, n) for cid, n, start in zip(runs.struct.field("value").to_list(), heights, accumulate(heights, initial=0))}


def _sorted_by(df: pl.DataFrame, keys: tuple[str, ...]) -> bool:
    """Whether the rows of ``df`` are in the order of ``keys`` (each row at or after the one
    before it; a null anywhere: not known to be)."""
    after = pl.col(keys[-1]) >= pl.col(keys[-1]).shift()
    for k in reversed(keys[:-1]):
        after = (pl.col(k) > pl.col(k).shift()) | ((pl.col(k) == pl.col(k).shift()) & after)
    return bool(df.select(after.slice(1).fill_null(False).all()).item())


_month_text = functools.cache(month_text)  # a claim's 36 months, shared by the claims of a run


@functools.lru_cache(maxsize=65536)  # a run's months repeat a few thousand sums of hours
def _equivalents(hours: int, per: int, den: int) -> tuple[str, str, int, str]:
    """A month's equivalent hours (scaled) as text, its equivalents (P4: ``hours x per / den``, as
    ``exact_ratio`` writes them), and that text's whole part and decimals."""
    text = exact_ratio(hours * per, den)
    whole, _, frac = text.partition(".")
    return hours_text(hours), text, int(whole), frac


_UNDECIDED_LINE = dict.fromkeys(("applied", "refund", "forfeited", "carried_forward"))  # a pending period's movements (as_of)


@dataclass(frozen=True)
class Determination:
    claim_id: str
    taxpayer_id: str
    eligible: bool
    checks: tuple[Check, ...]
    windows: Windows
    months: tuple[Month, ...]                 # 36, base first
    full_time_hours: Fraction
    averages: dict[str, Fraction | None]
    new_positions: dict[str, Fraction | None]
    credit: dict[str, Decimal | None]
    sustained_effort_ratio: Fraction | None
    ledger: Ledger
    pending: dict | None
    warnings: tuple[str, ...]
    explanation: tuple[dict, ...]           # empty when decided with explain=False
    employee_months: pl.DataFrame | None = None  # this claim's ``employee_month_table`` (B1)
    locations: tuple["Determination", ...] = ()  # a several-location return (L6): each location's, in the claim's order

    # -- presentation -------------------------------------------------------------------------
    def monthly_rows(self) -> list[dict]:
        """The 36 months (P5): full-time positions, equivalent hours, equivalents (P4: the hours
        over the full-time hours, ``Month.equivalents``) and positions; null after ``as_of``."""
        ft = self.full_time_hours
        per, den = ft.denominator, HOURS_SCALE * ft.numerator  # equivalents = hours x per / den, in whole numbers
        rows = []
        for i, m in enumerate(self.months):
            if not m.known:
                rows.append({"month": _month_text(m.idx), "period": PERIOD_NAMES[i // 12], "known": False, "full_time": None,
                             "equivalent_hours": None, "equivalents": None, "positions": None})
                continue
            hours, equivalents, whole, frac = _equivalents(m.equivalent_hours, per, den)
            # positions = full_time + equivalents: the same denominator, so the same decimals (and
            # the same rounding when it does not terminate); only the whole part grows
            positions = f"{whole + m.full_time}.{frac}" if m.equivalent_hours >= 0 and m.full_time >= 0 else \
                exact_ratio(m.full_time * den + m.equivalent_hours * per, den)
            rows.append({
                "month": _month_text(m.idx), "period": PERIOD_NAMES[i // 12], "known": True, "full_time": m.full_time,
                "equivalent_hours": hours, "equivalents": equivalents, "positions": positions,
            })
        return rows

    def employee_month_rows(self) -> list[dict]:
        """B1: every employee-month of the claim, how it was counted, and its source row."""
        if self.employee_months is None:
            return []
        out = []
        for *row, eq, counted in zip(*(self.employee_months.get_column(c).to_list() for c in TRACE_COLUMNS)):
            d = dict(zip(TRACE_COLUMNS, row))
            if eq is not None:
                d["equivalents"] = eq
                if counted is not None:
                    d["counted_hours"] = counted
            out.append(d)
        return out

    def period_rows(self, room: bool = True) -> list[dict]:
        """FORMAT.md ``periods[]`` with ``detail`` (Form 313 Parts IV and V); ``room=False`` for a
        location of a several-location return (the room is the return's)."""
        periods = []
        for (start, end), r, line in zip(self.ledger.dates, self.ledger.rooms, self.ledger.lines):
            p = {"start": start.isoformat(), "end": end.isoformat(), "allowed": None if line.pending else cents_text(line.allowed)}
            if room:
                p["room"] = cents_text(r.room)
            if line.pending:
                p.update(_UNDECIDED_LINE)
            else:
                p.update(applied=cents_text(line.applied), refund=cents_text(line.refund), forfeited=cents_text(line.forfeited),
                         carried_forward=cents_text(line.carried_forward))
            detail = {**(r.to_dict() if room else {}), "allows": list(line.allows), "pending": line.pending,
                      "origins": {o.origin: o.to_dict() for o in line.origins}}
            p["detail"] = detail
            periods.append(p)
        return periods

    def trace_parts(self) -> list[tuple[str | None, pl.DataFrame]]:
        """(location, ``employee_month_table``) of this determination: of each location of a
        several-location return, else one with no location."""
        parts = [(d.claim_id, d.employee_months) for d in self.locations] if self.locations else [(None, self.employee_months)]
        return [(loc, t) for loc, t in parts if t is not None]

    def employee_month_json(self) -> str:
        """``employee_month_rows`` as JSON text, each row's made in one columnar pass (``_row_json``)."""
        return employee_month_jsons([self.employee_months])[0]

    def to_dict(self, explain: bool = True, rows_file: str | None = None, rows: bool = True) -> dict:
        pos = lambda x: None if x is None else exact_decimal(x)  # noqa: E731
        cash = lambda x: None if x is None else money(x)  # noqa: E731
        totals_pending = self.ledger.pending_from is not None
        out = {
            "format": FORMAT,
            "claim_id": self.claim_id,
            "taxpayer_id": self.taxpayer_id,
            "eligible": self.eligible,
            "ineligible_because": [{"rule": c.rule, "cite": c.cite, "message": c.message} for c in self.checks if not c.passed],
            "windows": self.windows.to_dict(),
            "average_positions": None if self.locations else {k: pos(v) for k, v in self.averages.items()},
            "new_positions": None if self.locations else {k: pos(v) for k, v in self.new_positions.items()},
            "credit": {k: cash(v) for k, v in self.credit.items()},
            "sustained_effort_ratio": pos(self.sustained_effort_ratio),
            "periods": self.period_rows(),
            "refund": None if totals_pending else cents_text(self.ledger.refund),
            "carried_forward": None if totals_pending else cents_text(self.ledger.carried_forward),
            "not_yet_applied": self.ledger.not_yet_applied,
            "pending": self.pending,
            "warnings": list(self.warnings),
            "checks": [c.to_dict() for c in self.checks],
        }
        if self.locations:
            out["locations"] = [d.location_dict(explain, rows_file) for d in self.locations]
            if explain:
                out["explanation"] = self.explanation_entries([])
            return out
        out["monthly"] = self.monthly_rows()
        if explain:
            out["explanation"] = [*self.explanation_entries(out["monthly"]), {
                "figure": "employee_months", "rule": "B1", "cite": "N.J.S.A. 52:27BBB-55(d)",
                "reading": "every employee and month: whether and how the hours were counted",
                "statuses": {k: {"rule": r, "reading": t} for k, (r, t) in STATUS.items()},
                **({"rows": self.employee_month_rows() if rows else []} if rows_file is None else {"rows_file": rows_file}),
            }]
        return out

    def location_dict(self, explain: bool = True, rows_file: str | None = None) -> dict:
        """FORMAT.md ``locations[]``: one location of a several-location return, its share of the
        return's periods (without the room, which is the return's)."""
        d = self.to_dict(explain, rows_file)
        keep = ("eligible", "ineligible_because", "windows", "average_positions", "new_positions", "credit", "sustained_effort_ratio",
                "refund", "carried_forward", "not_yet_applied", "pending", "warnings", "checks", "monthly", "explanation")
        return {"id": self.claim_id, **{k: d[k] for k in keep if k in d}, "periods": self.period_rows(room=False)}

    def rows_joined(self, explain: bool = True, indent: int | None = None, rows_file: str | None = None) -> bool:
        """Whether ``to_json`` joins the employee-months' text (``employee_month_json``) into the rest."""
        return indent is None and explain and rows_file is None and not self.locations and self.employee_months is not None

    def to_json(self, explain: bool = True, indent: int | None = None, rows_file: str | None = None, rows_json: str | None = None,
                made: dict | None = None) -> str:
        """``to_dict`` as JSON text; ``rows_file``: the employee-months are in that file
        (``write_trace``), named instead of listed; ``rows_json``: their text, already made
        (``to_json_lines``); ``made``: ``to_dict(explain, rows=False)``, already made (the office
        keys on it too). A determination holds no cycles: the encoder's check for them (a table of
        every list and object it is inside) is left out, 12% of its time."""
        if not self.rows_joined(explain, indent, rows_file):
            return json.dumps(self.to_dict(explain, rows_file), indent=indent, ensure_ascii=False, check_circular=False)
        made = made if made is not None else self.to_dict(explain, rows=False)
        text = json.dumps(made, ensure_ascii=False, check_circular=False)  # the rows last: their text joined in
        if not text.endswith(_NO_ROWS):
            raise AssertionError("the employee-months are not the determination's last entry")
        return f"{text[:-len(_NO_ROWS)]}\"rows\": {rows_json if rows_json is not None else self.employee_month_json()}}}]}}"

    def explanation_entries(self, monthly: list[dict] | None = None) -> list[dict]:
        """The figure entries of the trace, each average with its twelve months (P5) as inputs."""
        monthly = monthly if monthly is not None else self.monthly_rows()
        out = []
        for e in self.explanation:
            if e["rule"] == "P5":
                months = [{k: r[k] for k in ("month", "known", "full_time", "equivalent_hours", "equivalents")}
                          for r in monthly if r["period"] == e["inputs"]["period"]]
                e = {**e, "inputs": {**e["inputs"], "months": months}}
            out.append(e)
        return out

    def figure(self, name: str) -> dict | None:
        return next((e for e in self.explanation_entries() if e["figure"] == name), None)


def exact(x: Fraction | None) -> str | None:
    return None if x is None else fraction_text(x)
