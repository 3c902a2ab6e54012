"""The figures the charts and PDFs show, read from a determination (FORMAT.md, ``to_dict(explain=True)``).

Every figure is passed on as the determination's own string: nothing here computes money or
positions, so what a page or a PDF shows is exactly what the engine decided.
"""

from __future__ import annotations

from typing import Any

PERIOD_LABELS = {"base": "Base period", "year_one": "Credit year one", "year_two": "Credit year two"}
LEDGER_FIELDS = ("room", "applied", "refund", "forfeited", "carried_forward")
LEDGER_LABELS = {
    "allowed": "Allowed", "room": "Room", "applied": "Applied", "refund": "Refund",
    "forfeited": "Forfeited", "carried_forward": "Carried forward",
}


class PeriodNotFound(ValueError):
    """The privilege period asked for is not among the determination's periods."""

    def __init__(self, why: str, available: list[str]):
        self.available = available
        super().__init__(f"{why}; the periods are: {', '.join(available)}")


def as_dict(det: Any) -> dict:
    """A determination as its dict: a ``Determination`` is turned with ``to_dict(explain=True)``."""
    return det if isinstance(det, dict) else det.to_dict(explain=True)


def shown(value: Any, missing: str = "pending") -> str:
    """A figure as printed: the determination's string, or ``missing`` when it is not decided yet."""
    return missing if value is None else str(value)


def monthly_table(det: Any) -> list[dict]:
    """The 36 months (base period, credit years one and two; rules P2-P5) as table rows:
    month, period label, full-time positions, part-time hours, full-time equivalents, positions.
    A month with no payroll recorded yet (``known`` false) shows "not known"."""
    rows = []
    for m in as_dict(det).get("monthly", []):
        unknown = "not known"
        rows.append({
            "month": m["month"],
            "period": m["period"],
            "period_label": PERIOD_LABELS[m["period"]],
            "known": m["known"],
            "full_time": shown(m["full_time"], unknown),
            "equivalent_hours": shown(m["equivalent_hours"], unknown),
            "equivalents": shown(m["equivalents"], unknown),
            "positions": shown(m["positions"], unknown),
        })
    return rows


def period_label(p: dict) -> str:
    return f"{p['start']} to {p['end']}"


def ledger_table(det: Any) -> list[dict]:
    """Each privilege period's ledger (L1-L5, R1): allowed, room, applied, refund, forfeited,
    carried forward, as the determination states them ("pending" where ``as_of`` leaves it open)."""
    return [
        {"index": i, "period": period_label(p), **{k: shown(p.get(k)) for k in ("allowed", *LEDGER_FIELDS)}}
        for i, p in enumerate(as_dict(det)["periods"])
    ]


def select_period(det: Any, period: int | str) -> int:
    """The index of one privilege period: an int, or a string of digits, is an index into
    ``periods`` (0 is the first); a four-digit string ``YYYY`` is the year in which the period ends."""
    periods = as_dict(det)["periods"]
    available = [f"{i} ({p['end'][:4]}: {period_label(p)})" for i, p in enumerate(periods)]
    text = str(period).strip()
    if isinstance(period, int) or (text.isdigit() and len(text) < 4):
        i = int(text)
        if 0 <= i < len(periods):
            return i
        raise PeriodNotFound(f"no privilege period with index {i}", available)
    matches = [i for i, p in enumerate(periods) if len(text) == 4 and p["end"][:4] == text]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise PeriodNotFound(f"{len(matches)} privilege periods end in {text}: give the index", available)
    raise PeriodNotFound(f"no privilege period ends in {text!r}", available)
