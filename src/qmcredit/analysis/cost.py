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
from pathlib import Path

import polars as pl

from ..money import from_cents, money

SIZE_BANDS = ("0", "1-9", "10-49", "50-249", "250+")
CLAIMS_TABLE_COLUMNS = ("claim_id", "tax")
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
    """One claim's cost figures, read from its ``claims.parquet`` row and ``ledger.parquet`` rows."""

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

    def total(self, field: str) -> int:
        return sum(getattr(ln, field) for ln in self.lines)

    def of_year(self, origin: int) -> dict[str, int]:
        """Credit year one's (``origin`` 0) or two's figures: credit (C2), allowed, applied,
        refunded, forfeited, carried at the end."""
        one = [sum(ln.year_one[k] for ln in self.lines) for k in range(3)] + [self.carried_year_one]
        whole = [self.total("allowed"), self.total("applied"), self.total("forfeited"), self.carried_forward]
        mine = one if origin == 0 else [w - o for w, o in zip(whole, one)]
        return {"credit": self.credit[origin], "allowed": mine[0], "applied": mine[1], "refunded": self.total("refunded") if origin == 0 else 0,
                "forfeited": mine[2], "carried_forward": mine[3]}

    @property
    def last_fiscal_year(self) -> int | None:
        """The fiscal year of the last decided period: where the balance carried at the end leaves the ledger."""
        return self.lines[-1].fiscal_year if self.lines else None

    @property
    def cost(self) -> int:
        return self.total("applied") + self.total("refunded")

    @property
    def new_positions(self) -> Decimal:
        return max(self.new)


def read_claims(claims: pl.DataFrame, ledger: pl.DataFrame, taxes: dict[str, str | None]) -> list[ClaimCost]:
    """Each claim of a batch's ``claims`` and ``ledger`` tables (schemas of ``batch.outputs``)."""
    lines: dict[str, list] = {}
    for row in ledger.sort("claim_id", "period").iter_rows(named=True):
        lines.setdefault(row["claim_id"], []).append(row)
    out = []
    for row in claims.sort("claim_id").iter_rows(named=True):
        cid, decided = row["claim_id"], row["status"] == "decided"
        rows = lines.get(cid, [])
        done = [r for r in rows if r["applied"] is not None]
        eligible = bool(decided and row["eligible"])
        new = tuple(Decimal(row[k]) if eligible and row[k] is not None else NO_POSITIONS for k in ("new_year_one", "new_year_two"))
        out.append(ClaimCost(
            cid, taxes.get(cid), decided, eligible,
            size_band(Decimal(row["average_base"])) if decided and row["average_base"] is not None else None,
            tuple(_cents(row[k]) or 0 for k in ("credit_year_one", "credit_year_two")), new,
            tuple(Line(fiscal_year(r["end"]), *(_cents(r[k]) for k in ("allowed", "applied", "refund", "forfeited")),
                       tuple(_cents(r[k]) for k in ("allowed_year_one", "applied_year_one", "forfeited_year_one"))) for r in done),
            _cents(done[-1]["carried_forward"]) if done else 0, _cents(done[-1]["carried_forward_year_one"]) if done else 0, len(done) < len(rows),
        ))
    return out


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


def _money_row(costs: list[ClaimCost]) -> dict[str, int]:
    return {
        "credit": sum(sum(c.credit) for c in costs), "allowed": sum(c.total("allowed") for c in costs),
        "applied": sum(c.total("applied") for c in costs), "refunded": sum(c.total("refunded") for c in costs),
        "forfeited": sum(c.total("forfeited") for c in costs), "carried_forward": sum(c.carried_forward for c in costs),
        "cost": sum(c.cost for c in costs),
    }


def _per(cost: int, positions: Decimal) -> str | None:
    """Cost (cents) per position, half-up to cents; None when no position was added."""
    if positions == 0:
        return None
    return money((Decimal(cost) / 100 / positions).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _group_row(costs: list[ClaimCost]) -> dict:
    sums = _money_row(costs)
    new = sum((c.new_positions for c in costs), NO_POSITIONS)
    years = sum((c.new[0] + c.new[1] for c in costs), NO_POSITIONS)
    return {
        "claims": len(costs), "eligible": sum(c.eligible for c in costs),
        "claims_with_credit": sum(1 for c in costs if sum(c.credit) > 0),
        **{k: money(from_cents(v)) for k, v in sums.items()},
        "new_positions": str(new), "position_years": str(years),
        "cost_per_new_position": _per(sums["cost"], new), "cost_per_position_year": _per(sums["cost"], years),
    }


def _frame(rows: list[dict], keys: dict[str, pl.DataType]) -> pl.DataFrame:
    """Rows as a table: ``keys`` typed as given, every other column text (exact digits)."""
    if not rows:
        return pl.DataFrame(schema=keys)
    schema = {k: keys.get(k, pl.Int64 if isinstance(v, int) else pl.Utf8) for k, v in rows[0].items()}
    return pl.DataFrame(rows, schema=schema, orient="row")


def _grouped(costs: list[ClaimCost], key, order: Iterable) -> Iterator[tuple[object, list[ClaimCost]]]:
    groups: dict = {}
    for c in costs:
        groups.setdefault(key(c), []).append(c)
    for k in order:
        if k in groups:
            yield k, groups.pop(k)
    for k in sorted(groups, key=str):
        yield k, groups[k]


def cost_tables(costs: list[ClaimCost], scenario: str = "baseline") -> dict[str, pl.DataFrame]:
    """The cost tables of one scenario: ``totals``, ``by_fiscal_year``, ``by_tax``,
    ``by_firm_size``, ``by_credit_year``; money as text with exact cents."""
    decided = [c for c in costs if c.decided]
    group = _group_row(decided)
    del group["claims"]
    totals = {"scenario": scenario, "claims": len(costs), "decided": len(decided), "invalid": len(costs) - len(decided),
              "pending_claims": sum(c.pending for c in decided), **group}
    by_year: dict[int, dict[str, int]] = {}
    fy_fields = ("allowed", "applied", "refunded", "forfeited", "carried_forward")
    for c in decided:
        for ln in c.lines:
            y = by_year.setdefault(ln.fiscal_year, dict.fromkeys(fy_fields, 0))
            for k in fy_fields[:4]:
                y[k] += getattr(ln, k)
        if c.lines:  # carried at the end: in the fiscal year of the last period decided
            by_year[c.last_fiscal_year]["carried_forward"] += c.carried_forward
    fy_rows = [
        {"scenario": scenario, "fiscal_year": fy, **{k: money(from_cents(v)) for k, v in y.items()},
         "cost": money(from_cents(y["applied"] + y["refunded"]))}
        for fy, y in sorted(by_year.items())
    ]
    tax_rows = [{"scenario": scenario, "tax": k or "", **_group_row(g)} for k, g in _grouped(decided, lambda c: c.tax, ("cbt", "insurance_premiums"))]
    size_rows = [{"scenario": scenario, "firm_size": k, **_group_row(g)} for k, g in _grouped(decided, lambda c: c.size, SIZE_BANDS)]
    year_rows = []
    for o, name in enumerate(("year_one", "year_two")):
        new = sum((c.new[o] for c in decided), NO_POSITIONS)
        sums = dict.fromkeys(("credit", "allowed", "applied", "refunded", "forfeited", "carried_forward"), 0)
        for c in decided:
            for k, v in c.of_year(o).items():
                sums[k] += v
        year_rows.append({
            "scenario": scenario, "credit_year": name, "claims_with_credit": sum(1 for c in decided if c.credit[o] > 0),
            **{k: money(from_cents(v)) for k, v in sums.items()}, "cost": money(from_cents(sums["applied"] + sums["refunded"])),
            "new_positions": str(new), "credit_per_new_position": _per(sums["credit"], new),
        })
    keys = {"scenario": pl.Utf8, "fiscal_year": pl.Int32, "tax": pl.Utf8, "firm_size": pl.Utf8, "credit_year": pl.Utf8}
    return {
        "totals": _frame([totals], keys), "by_fiscal_year": _frame(fy_rows, keys), "by_tax": _frame(tax_rows, keys),
        "by_firm_size": _frame(size_rows, keys), "by_credit_year": _frame(year_rows, keys),
    }


def claim_table(costs: list[ClaimCost]) -> pl.DataFrame:
    """One row per claim: its cost figures."""
    return _frame([
        {"claim_id": c.claim_id, "tax": c.tax, "status": "decided" if c.decided else "invalid", "eligible": c.eligible,
         "firm_size": c.size, "new_positions": str(c.new_positions), **{k: money(from_cents(v)) for k, v in _money_row([c]).items()}}
        for c in costs
    ], {"eligible": pl.Boolean, "tax": pl.Utf8, "firm_size": pl.Utf8})


def taxes_of(claims_table: pl.DataFrame) -> dict[str, str | None]:
    """claim id -> tax, from a claims table read as text (``batch.tables.read_tables``)."""
    if "tax" not in claims_table.columns:
        return {}
    return {cid: (tax or "").strip().lower() or None for cid, tax in claims_table.select(CLAIMS_TABLE_COLUMNS).iter_rows()}


def read_results(results: Path, claims_table: Path) -> list[ClaimCost]:
    """The ``ClaimCost`` of every claim of a batch's ``results`` folder and its claims table."""
    from ..batch.tables import read_tables

    table, _ = read_tables(claims_table, None)
    return read_claims(pl.read_parquet(results / "claims.parquet"), pl.read_parquet(results / "ledger.parquet"), taxes_of(table))
