"""What the credit costs the State, from a batch's outputs (``claims.parquet``, ``ledger.parquet``)
and the claims table (for each claim's tax): exact cents and exact decimals, never floats.

Readings (docs/analysis.md):

- **Cost** = credit applied against tax (L4) + credit refunded (R1): the two ways the credit
  reduces revenue. Forfeited credit (L5) costs nothing; credit carried out of the last period
  given is a cost still to come, reported apart.
- **Fiscal year**: the State's, July 1 - June 30, named by the June it ends. A period's
  application, refund and forfeiture fall in the fiscal year in which **the period ends**: the
  credit reduces the tax of that privilege period, which accrues to the period (the return
  follows it, by a date extensions move, so its filing date would spread one period's tax over
  years).
- **Firm size**: the employees in the base period, read as the base-period average positions
  (P5) rounded up to a whole employee (a firm averaging 9.2 positions had at least 10 people):
  ``0`` (none), ``1-9``, ``10-49``, ``50-249``, ``250+``. The average is the figure as the
  determination reports it (``average_base``).
- **New positions** of a claim: the larger of its years' new positions (C1), the jobs added over
  the base period, counted once; **position-years**: year one's plus year two's. Counted for
  claims that are eligible (E5).
- Ledger lines left undecided by ``as_of`` (``pending``) are left out of every money total; the
  claims that have them are counted (``pending_claims``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from pathlib import Path

import polars as pl

from ..batch.outputs import in_order
from ..money import from_cents, money, money_text

SIZE_BANDS = ("0", "1-9", "10-49", "50-249", "250+")
NO_POSITIONS = Decimal("0.000000")


def fiscal_year(day: date) -> int:
    """The State fiscal year (July 1 - June 30) holding ``day``, named by the June it ends."""
    return day.year + 1 if day.month >= 7 else day.year


def size_band(average_base: Decimal) -> str:
    """Firm size by base-period employees: the base average rounded up to a whole employee."""
    employees = int(average_base.to_integral_value(rounding="ROUND_CEILING"))
    if employees == 0:
        return "0"
    return "1-9" if employees < 10 else "10-49" if employees < 50 else "50-249" if employees < 250 else "250+"


def _cents(text: str | None) -> int | None:
    """Money text of two decimals (``money_text``, the determination's) as whole cents."""
    if text is None:
        return None
    whole, _, cents = text.partition(".")
    if len(cents) != 2 or not (whole.lstrip("-") + cents).isdigit():
        raise ValueError(f"{text!r} is not money with two decimals")
    return int(whole + cents)


def _cents_of(frame: pl.DataFrame, columns: Iterable[str], made_here: bool = False) -> list[pl.Expr]:
    """``_cents`` of text columns, as expressions (null stays null); a value that is not money of
    two decimals is refused as ``_cents`` refuses it (``made_here``: written by ``money_text``
    in this process, so known to be such money)."""
    columns = list(columns)
    bad = pl.col(columns).is_not_null() & ~pl.col(columns).str.contains(r"^-?\d+\.\d\d$")
    if not made_here and frame.select(bad).select(pl.any_horizontal(pl.all()).any()).item():
        for k in columns:
            for v in frame.get_column(k).drop_nulls():
                _cents(v)
    # each text now -?digits.dd: read as a two-place decimal, its integer is the cents (exact)
    return [pl.col(k).cast(pl.Decimal(18, 2)).to_physical().cast(pl.Int64).alias(k) for k in columns]


@dataclass(slots=True)
class Line:
    """One ledger period of a claim, in cents; ``year_one``: year one's allowed, applied and
    forfeited in it (L4, Form 313 Part V; year two's are the rest; R1 refunds year one only)."""

    fiscal_year: int
    allowed: int
    applied: int
    refunded: int
    forfeited: int
    year_one: tuple[int, int, int]


@dataclass(slots=True)
class ClaimCost:
    """One claim's cost figures, as the office reads them from a determination (``from_determination``)."""

    claim_id: str
    tax: str | None
    decided: bool
    eligible: bool
    size: str | None
    credit: tuple[int, int]           # C2, cents (0 where undecided)
    new: tuple[Decimal, Decimal]      # C1 (0 where undecided or not eligible)
    lines: tuple[Line, ...]           # decided ledger lines
    carried_forward: int              # out of the last decided line
    carried_year_one: int             # of it, year one's (L4)
    pending: bool                     # some ledger line is undecided (as_of)


#: ``Costs.claims``' columns: money in cents; positions as their decimal text.
CLAIM_COLUMNS = {
    "claim_id": pl.Utf8, "tax": pl.Utf8, "decided": pl.Boolean, "eligible": pl.Boolean, "size": pl.Utf8,
    "credit_one": pl.Int64, "credit_two": pl.Int64, "new_one": pl.Utf8, "new_two": pl.Utf8,
    "carried_forward": pl.Int64, "carried_year_one": pl.Int64, "pending": pl.Boolean,
}
#: ``Costs.lines``' columns: each decided ledger line, in period order within its claim (``n``).
LINE_COLUMNS = {
    "claim_id": pl.Utf8, "n": pl.UInt32, "fiscal_year": pl.Int32, "allowed": pl.Int64, "applied": pl.Int64, "refunded": pl.Int64,
    "forfeited": pl.Int64, "allowed_one": pl.Int64, "applied_one": pl.Int64, "forfeited_one": pl.Int64,
}
_LINE_MONEY = ("allowed", "applied", "refunded", "forfeited", "allowed_one", "applied_one", "forfeited_one")


@dataclass(frozen=True)
class Costs:
    """A scenario's claims' cost figures as two tables (``CLAIM_COLUMNS``, ``LINE_COLUMNS``), in
    claim order: what ``ClaimCost`` holds, a row per claim and a row per decided ledger line."""

    claims: pl.DataFrame
    lines: pl.DataFrame

    @cached_property
    def figures(self) -> pl.DataFrame:
        """``per_claim`` of these claims, worked out once: the cost tables, the claims table and
        the comparison with the baseline each read it."""
        return per_claim(self)


def frame_of(costs: list[ClaimCost]) -> Costs:
    """``ClaimCost`` objects (the office's) as ``Costs``."""
    claims = pl.DataFrame([(c.claim_id, c.tax, c.decided, c.eligible, c.size, *c.credit, *(str(n) for n in c.new), c.carried_forward,
                            c.carried_year_one, c.pending) for c in costs], schema=CLAIM_COLUMNS, orient="row")
    lines = pl.DataFrame([(c.claim_id, n, ln.fiscal_year, ln.allowed, ln.applied, ln.refunded, ln.forfeited, *ln.year_one)
                          for c in costs for n, ln in enumerate(c.lines)], schema=LINE_COLUMNS, orient="row")
    return Costs(claims, lines)


def _employees(average_base: pl.Expr) -> pl.Expr:
    """Base averages as decimal text (non-negative) rounded up to whole employees (``size_band``)."""
    whole = average_base.str.splitn(".", 2).struct.field("field_0").cast(pl.Int64)
    return whole + average_base.str.contains(r"\.\d*[1-9]").cast(pl.Int64)


def _band(employees: pl.Expr) -> pl.Expr:
    """``size_band`` of ``_employees``: a column, so that it is worked out once, not in each test
    of the chain (an eager query does not share a repeated expression: 90 ms against 29 ms at
    325,379 claims)."""
    return (pl.when(employees == 0).then(pl.lit("0")).when(employees < 10).then(pl.lit("1-9")).when(employees < 50).then(pl.lit("10-49"))
            .when(employees < 250).then(pl.lit("50-249")).otherwise(pl.lit("250+")))


def read_claims(claims: pl.DataFrame, ledger: pl.DataFrame, taxes: pl.DataFrame, made_here: bool = False) -> Costs:
    """Each claim of a batch's ``claims`` and ``ledger`` tables (schemas of ``batch.outputs``);
    ``taxes``: claim id -> tax (``taxes_of``). ``made_here``: tables this process has just
    made (``analysis.reform``), in order, their money written by ``money_text``: not checked
    again (a table read from a file is: ``_cents_of``)."""
    if not made_here:
        ledger = in_order(ledger, "claim_id", "period")
    money = ("allowed", "applied", "refund", "forfeited", "allowed_year_one", "applied_year_one", "forfeited_year_one",
             "carried_forward", "carried_forward_year_one")
    done = ledger.filter(pl.col("applied").is_not_null()) if ledger.get_column("applied").null_count() else ledger
    done = done.with_columns(_cents_of(done, money, made_here))
    cid, row = pl.col("claim_id"), pl.int_range(pl.len(), dtype=pl.UInt32)
    lines = done.select(
        "claim_id", (row - pl.when(cid.ne_missing(cid.shift())).then(row).forward_fill()).alias("n"),  # its place among its claim's rows
        (pl.col("end").dt.year() + (pl.col("end").dt.month() >= 7).cast(pl.Int32)).cast(pl.Int32).alias("fiscal_year"),
        "allowed", "applied", pl.col("refund").alias("refunded"), "forfeited", pl.col("allowed_year_one").alias("allowed_one"),
        pl.col("applied_year_one").alias("applied_one"), pl.col("forfeited_year_one").alias("forfeited_one"),
    ).cast(LINE_COLUMNS)
    last = done.filter(cid.ne_missing(cid.shift(-1))).select("claim_id", "carried_forward", pl.col("carried_forward_year_one").alias("carried_year_one"))
    pending = ledger.filter(pl.col("applied").is_null()).select(cid.unique(maintain_order=True), pl.lit(True).alias("pending"))
    claims = claims if made_here else in_order(claims, "claim_id")
    claims = claims.with_columns(*_cents_of(claims, ("credit_year_one", "credit_year_two"), made_here), _employees(pl.col("average_base")).alias("_employees"))
    decided = pl.col("status") == "decided"
    eligible = decided & pl.col("eligible").fill_null(False)
    new = lambda k: pl.when(eligible & pl.col(k).is_not_null()).then(pl.col(k)).otherwise(pl.lit(str(NO_POSITIONS)))  # noqa: E731
    out = claims.select(
        "claim_id", decided.alias("decided"), eligible.alias("eligible"),
        pl.when(decided & pl.col("_employees").is_not_null()).then(_band(pl.col("_employees"))).alias("size"),
        pl.col("credit_year_one").fill_null(0).alias("credit_one"), pl.col("credit_year_two").fill_null(0).alias("credit_two"),
        new("new_year_one").alias("new_one"), new("new_year_two").alias("new_two"),
    ).join(taxes, on="claim_id", how="left", maintain_order="left").join(last, on="claim_id", how="left", maintain_order="left").join(
        pending, on="claim_id", how="left", maintain_order="left",
    ).with_columns(pl.col("carried_forward", "carried_year_one").fill_null(0), pl.col("pending").fill_null(False))
    return Costs(out.select(list(CLAIM_COLUMNS)).cast(CLAIM_COLUMNS), lines)


def from_determination(claim_id: str, tax: str | None, det: dict) -> ClaimCost:
    """A decided one-location claim's cost figures from its determination (FORMAT.md, as stored
    or as ``Determination.to_dict`` gives it; numbers as text or ``Decimal``): the figures
    ``read_claims`` reads from the batch's tables, the year of origin from each period's detail."""
    text = lambda v: None if v is None else str(v)  # noqa: E731
    cents = lambda v: 0 if v is None else _cents(text(v))  # noqa: E731
    eligible = bool(det.get("eligible"))
    new = tuple(Decimal(text(v)) if eligible and v is not None else NO_POSITIONS
                for v in ((det.get("new_positions") or {}).get(k) for k in ("year_one", "year_two")))
    base = (det.get("average_positions") or {}).get("base")
    periods = det.get("periods") or []
    done = [p for p in periods if p.get("applied") is not None]
    lines = []
    for p in done:
        one = ((p.get("detail") or {}).get("origins") or {}).get("year_one") or {}
        lines.append(Line(fiscal_year(date.fromisoformat(p["end"])), *(cents(p.get(k)) for k in ("allowed", "applied", "refund", "forfeited")),
                          tuple(cents(one.get(k)) for k in ("allowed", "applied", "forfeited"))))
    last_one = ((done[-1].get("detail") or {}).get("origins") or {}).get("year_one") or {} if done else {}
    credit = det.get("credit") or {}
    return ClaimCost(claim_id, tax, True, eligible, size_band(Decimal(text(base))) if base is not None else None,
                     (cents(credit.get("year_one")), cents(credit.get("year_two"))), new, tuple(lines),
                     cents(done[-1].get("carried_forward")) if done else 0, cents(last_one.get("closing")), len(done) < len(periods))


def _places(text: pl.Expr) -> pl.Expr:
    """The decimals of decimal text, at least those of ``NO_POSITIONS`` (a sum's ``str`` has the most of its terms)."""
    return pl.max_horizontal(text.str.splitn(".", 2).struct.field("field_1").str.len_chars().fill_null(0), pl.lit(6)).cast(pl.Int32)


def per_claim(costs: Costs) -> pl.DataFrame:
    """Each claim's figures: its lines summed (cents), its cost, its new positions (C1: the larger
    year's, as its text) and their places, and the fiscal year of its last decided period."""
    # a group keeps its rows' order, the lines' period order (``n``): its last is the last period's
    sums = costs.lines.group_by("claim_id", maintain_order=True).agg(*(pl.col(k).sum() for k in _LINE_MONEY), pl.col("fiscal_year").last().alias("last_fy"))
    frame = costs.claims.join(sums, on="claim_id", how="left", maintain_order="left").with_columns(pl.col(_LINE_MONEY).fill_null(0))
    # each year's places and decimal value made once, as columns (an eager query repeats a repeated expression)
    frame = frame.with_columns(_places(pl.col("new_one")).alias("_places_one"), _places(pl.col("new_two")).alias("_places_two"))
    scale = frame.select(pl.max_horizontal(pl.col("_places_one").max(), pl.col("_places_two").max())).item() or 6
    frame = frame.with_columns(pl.col("new_one").cast(pl.Decimal(38, scale)).alias("_one"), pl.col("new_two").cast(pl.Decimal(38, scale)).alias("_two"))
    first, one, two = pl.col("_one") >= pl.col("_two"), pl.col("_one"), pl.col("_two")  # max(): the first of equals
    return frame.with_columns(
        (pl.col("applied") + pl.col("refunded")).alias("cost"), (pl.col("credit_one") + pl.col("credit_two")).alias("credit"),
        pl.when(first).then(pl.col("new_one")).otherwise(pl.col("new_two")).alias("new_positions"),
        pl.when(first).then(one).otherwise(two).alias("_new"), (one + two).alias("_years"),
        pl.when(first).then(pl.col("_places_one")).otherwise(pl.col("_places_two")).alias("_new_places"),
        pl.max_horizontal("_places_one", "_places_two").alias("_years_places"),
    ).drop("_places_one", "_places_two", "_one", "_two")


_MONEY = ("credit", "allowed", "applied", "refunded", "forfeited", "carried_forward", "cost")


def _positions(value, places) -> Decimal:
    """A sum of positions (``Decimal`` or None for none) with its terms' most decimals."""
    return (Decimal(value) if value is not None else NO_POSITIONS).quantize(Decimal(1).scaleb(-max(6, places or 6)))


def _sums(frame: pl.DataFrame, key: str | None) -> dict:
    """Each group's (``key``'s values; None: one group of all rows) claims, counts and sums."""
    aggs = [pl.len().alias("claims"), pl.col("eligible").sum().alias("eligible"), (pl.col("credit") > 0).sum().alias("claims_with_credit"),
            *(pl.col(k).sum() for k in _MONEY), pl.col("_new").sum().alias("new"), pl.col("_years").sum().alias("years"),
            pl.col("_new_places").max().alias("new_places"), pl.col("_years_places").max().alias("years_places")]
    rows = frame.select(aggs).with_columns(pl.lit(None).alias("key")) if key is None else frame.group_by(key).agg(aggs).rename({key: "key"})
    return {r["key"]: r for r in rows.iter_rows(named=True)}


def _per(cost: int, positions: Decimal) -> str | None:
    """Cost (cents) per position, half-up to cents; None when no position was added."""
    if positions == 0:
        return None
    return money((Decimal(cost) / 100 / positions).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _group_row(sums: dict | None) -> dict:
    """A group's row of the totals' group columns, from its ``_sums``."""
    sums = sums or {}
    cents = {k: sums.get(k) or 0 for k in _MONEY}
    new, years = _positions(sums.get("new"), sums.get("new_places")), _positions(sums.get("years"), sums.get("years_places"))
    return {
        "claims": sums.get("claims", 0), "eligible": sums.get("eligible") or 0, "claims_with_credit": sums.get("claims_with_credit") or 0,
        **{k: money(from_cents(v)) for k, v in cents.items()},
        "new_positions": str(new), "position_years": str(years),
        "cost_per_new_position": _per(cents["cost"], new), "cost_per_position_year": _per(cents["cost"], years),
    }


def _frame(rows: list[dict], keys: dict[str, pl.DataType], like: dict) -> pl.DataFrame:
    """Rows as a table: ``keys`` typed as given, counts (ints) as integers, every other column
    text (exact digits); no rows (no claim decided, no period: a table without periods) give the
    columns of a row ``like`` this one, so that a table always has its columns."""
    schema = {k: keys.get(k, pl.Int64 if isinstance(v, int) else pl.Utf8) for k, v in (rows[0] if rows else like).items()}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _ordered(groups: dict, order: Iterable) -> Iterator[tuple[object, dict]]:
    """The groups in ``order``, then any other by its text."""
    for k in order:
        if k in groups:
            yield k, groups.pop(k)
    for k in sorted(groups, key=str):
        yield k, groups[k]


def _text(cents: pl.Expr) -> pl.Expr:
    """``money(from_cents(...))`` of whole cents of either sign, as text."""
    return pl.when(cents < 0).then(pl.lit("-")).otherwise(pl.lit("")) + money_text(cents.abs())


def cost_tables(costs: Costs | list[ClaimCost], scenario: str = "baseline") -> dict[str, pl.DataFrame]:
    """The cost tables of one scenario: ``totals``, ``by_fiscal_year``, ``by_tax``,
    ``by_firm_size``, ``by_credit_year``; money as text with exact cents."""
    costs = frame_of(costs) if isinstance(costs, list) else costs
    every = costs.figures
    decided = every.filter(pl.col("decided"))
    group = _group_row(_sums(decided, None).get(None) if decided.height else None)
    del group["claims"]
    totals = {"scenario": scenario, "claims": every.height, "decided": decided.height, "invalid": every.height - decided.height,
              "pending_claims": decided.get_column("pending").sum(), **group}
    fy_fields = ("allowed", "applied", "refunded", "forfeited")
    invalid = every.filter(~pl.col("decided")).get_column("claim_id")  # few, and a batch gives them no ledger lines
    lines = costs.lines.filter(~pl.col("claim_id").is_in(invalid.implode())) if invalid.len() else costs.lines
    by_year = {r["fiscal_year"]: r for r in lines.group_by("fiscal_year").agg(pl.col(fy_fields).sum()).iter_rows(named=True)}
    # carried at the end: in the fiscal year of the last period decided
    carried = dict(decided.filter(pl.col("last_fy").is_not_null()).group_by("last_fy").agg(pl.col("carried_forward").sum()).iter_rows())
    fy_rows = [
        {"scenario": scenario, "fiscal_year": fy, **{k: money(from_cents(y[k])) for k in fy_fields},
         "carried_forward": money(from_cents(carried.get(fy, 0))), "cost": money(from_cents(y["applied"] + y["refunded"]))}
        for fy, y in sorted(by_year.items())
    ]
    tax_rows = [{"scenario": scenario, "tax": k or "", **_group_row(g)} for k, g in _ordered(_sums(decided, "tax"), ("cbt", "insurance_premiums"))]
    size_rows = [{"scenario": scenario, "firm_size": k, **_group_row(g)} for k, g in _ordered(_sums(decided, "size"), SIZE_BANDS)]
    of_year = {  # credit year one's (L4's year-one columns, R1's refunds) and two's (the rest)
        "year_one": {"credit": pl.col("credit_one"), "allowed": pl.col("allowed_one"), "applied": pl.col("applied_one"),
                     "refunded": pl.col("refunded"), "forfeited": pl.col("forfeited_one"), "carried_forward": pl.col("carried_year_one")},
        "year_two": {"credit": pl.col("credit_two"), "allowed": pl.col("allowed") - pl.col("allowed_one"), "applied": pl.col("applied") - pl.col("applied_one"),
                     "refunded": pl.lit(0, dtype=pl.Int64), "forfeited": pl.col("forfeited") - pl.col("forfeited_one"),
                     "carried_forward": pl.col("carried_forward") - pl.col("carried_year_one")},
    }
    year_rows = []
    for (name, cols), new_col in zip(of_year.items(), ("new_one", "new_two")):
        scale = max(6, decided.select(_places(pl.col(new_col)).max()).item() or 6)
        got = decided.select(*(e.sum().alias(k) for k, e in cols.items()), (cols["credit"] > 0).sum().alias("claims_with_credit"),
                             pl.col(new_col).cast(pl.Decimal(38, scale)).sum().alias("new")).row(0, named=True)
        sums = {k: got[k] or 0 for k in cols}
        new = _positions(got["new"], scale)
        year_rows.append({
            "scenario": scenario, "credit_year": name, "claims_with_credit": got["claims_with_credit"] or 0,
            **{k: money(from_cents(v)) for k, v in sums.items()}, "cost": money(from_cents(sums["applied"] + sums["refunded"])),
            "new_positions": str(new), "credit_per_new_position": _per(sums["credit"], new),
        })
    keys = {"scenario": pl.Utf8, "fiscal_year": pl.Int32, "tax": pl.Utf8, "firm_size": pl.Utf8, "credit_year": pl.Utf8}
    fy_like = {"scenario": scenario, "fiscal_year": 0, **dict.fromkeys((*fy_fields, "carried_forward", "cost"), "")}
    return {
        "totals": _frame([totals], keys, totals), "by_fiscal_year": _frame(fy_rows, keys, fy_like),
        "by_tax": _frame(tax_rows, keys, {"scenario": scenario, "tax": "", **_group_row(None)}),
        "by_firm_size": _frame(size_rows, keys, {"scenario": scenario, "firm_size": "", **_group_row(None)}),
        "by_credit_year": _frame(year_rows, keys, year_rows[0]),
    }


def claim_table(costs: Costs) -> pl.DataFrame:
    """One row per claim: its cost figures."""
    if not costs.claims.height:
        return pl.DataFrame(schema={"eligible": pl.Boolean, "tax": pl.Utf8, "firm_size": pl.Utf8})
    return costs.figures.select(
        "claim_id", "tax", pl.when(pl.col("decided")).then(pl.lit("decided")).otherwise(pl.lit("invalid")).alias("status"), "eligible",
        pl.col("size").alias("firm_size"), "new_positions", *(_text(pl.col(k)).alias(k) for k in _MONEY),
    )


def taxes_of(claims_table: pl.DataFrame) -> pl.DataFrame:
    """claim id -> tax (a row each, the table's last for an id), from a claims table read as text
    (``batch.tables.read_tables``)."""
    if "tax" not in claims_table.columns:
        return pl.DataFrame(schema={"claim_id": pl.Utf8, "tax": pl.Utf8})
    tax = pl.col("tax").str.strip_chars().str.to_lowercase()
    return claims_table.select("claim_id", pl.when(tax != "").then(tax).alias("tax")).unique("claim_id", keep="last", maintain_order=True)


def read_results(results: Path, claims_table: Path) -> Costs:
    """The ``Costs`` of every claim of a batch's ``results`` folder and its claims table, which
    must be the table the batch decided: each of the batch's claims in it, and (when the batch's
    ``manifest.json`` says) as many bytes as the batch read. Another table gave each claim it
    lacked no tax, and each claim whose tax it wrote otherwise another, without a word."""
    import json

    from ..batch.tables import read_tables
    from ..problems import ClaimError, Problem

    read = (json.loads((results / "manifest.json").read_text()).get("inputs", {}).get("claims")
            if (results / "manifest.json").is_file() else None)
    hint = f"; the batch read {read['path']} ({read['bytes']:,} bytes)" if read else ""
    if not claims_table.is_file():
        raise ClaimError([Problem("--claims", f"{claims_table}: no such file; give the claims table the batch decided{hint}")])
    size = claims_table.stat().st_size
    if read and size != read["bytes"]:
        raise ClaimError([Problem("--claims", f"{claims_table} ({size:,} bytes) is not the claims table the batch "
                                              f"decided{hint}: give that table, or run the batch again on this one")])
    table, _ = read_tables(claims_table, None)
    decided = pl.read_parquet(results / "claims.parquet")
    taxes = taxes_of(table)
    missing = decided.filter(pl.col("claim_id").is_not_null()).join(taxes, on="claim_id", how="anti").get_column("claim_id")
    if missing.len():
        raise ClaimError([Problem("--claims", f"{claims_table}: {missing.len():,} of the batch's claims {'is' if missing.len() == 1 else 'are'} not in it "
                                              f"({', '.join(missing.head(3).to_list())}{', ...' if missing.len() > 3 else ''}); "
                                              f"give the claims table the batch decided{hint}")])
    return read_claims(decided, pl.read_parquet(results / "ledger.parquet"), taxes)
