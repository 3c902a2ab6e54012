"""The taxpayer's ledger as the engine determined it: per period and year of origin (Part V of
Form 313), what was allowed, applied, refunded, forfeited and carried forward; per period, the
return's (L6: the location claims' shares summed, the room once)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from . import exact_json
from .models import Claim, LedgerEntry, RefundCertification, Revision


def entries(result: dict) -> list[dict]:
    """Ledger rows of a determination (FORMAT.md ``periods[].detail.origins``). Periods still
    pending (their months not yet known) have none."""
    rows = []
    for p in result.get("periods") or []:
        if p.get("applied") is None:
            continue
        for origin, o in ((p.get("detail") or {}).get("origins") or {}).items():
            rows.append({
                "period_start": date.fromisoformat(p["start"]), "period_end": date.fromisoformat(p["end"]),
                "origin": origin, "allowed": Decimal(o["allowed"]), "applied": Decimal(o["applied"]),
                "refund": Decimal(o["refund"]), "forfeited": Decimal(o["forfeited"]),
                "carried_forward": Decimal(o["closing"]),
            })
    return rows


def store(session: Session, claim: Claim, revision: Revision, result: dict) -> None:
    """The revision's ledger rows, in one statement."""
    rows = [{"taxpayer_id": claim.taxpayer_id, "claim_id": claim.id, "revision_id": revision.id, **row} for row in entries(result)]
    if rows:
        session.connection().execute(insert(LedgerEntry.__table__), rows)  # Core: no unit of work for rows never changed


def _rooms(session: Session, taxpayer_id: int) -> dict[str, tuple[str, str | None]]:
    """Each period's end and room, the return's (RULES.md L6): one for all its location claims."""
    rooms: dict[str, tuple[str, str | None]] = {}
    for (text,) in session.execute(
            select(Revision.determination).join(Claim, (Claim.id == Revision.claim_id) & (Claim.revision == Revision.number))
            .where(Claim.taxpayer_id == taxpayer_id, Claim.duplicate_of.is_(None), Claim.state != "denied",
                   Claim.year_one_start.is_not(None)).order_by(Claim.id)):
        det = exact_json.loads(text)
        for p in (det.get("return") or det).get("periods") or []:
            rooms.setdefault(p["start"], (p["end"], p.get("room")))
    return rooms


def _return_periods(rows: list[LedgerEntry], rooms: dict[str, tuple[str, str | None]]) -> list[dict]:
    """The return per period: its room once, and the claims' figures summed (each claim's share)."""
    def period(start: str, end: str) -> dict:
        return {"period_start": start, "period_end": end, "room": rooms.get(start, (end, None))[1], "claims": [],
                **{k: Decimal("0.00") for k in FIGURES}}

    out = {start: period(start, end) for start, (end, _room) in rooms.items()}
    for r in rows:
        p = out.setdefault(r.period_start.isoformat(), period(r.period_start.isoformat(), r.period_end.isoformat()))
        for k in FIGURES:
            p[k] += getattr(r, k)
        if r.claim_id not in p["claims"]:
            p["claims"].append(r.claim_id)
    return [{k: str(v) if isinstance(v, Decimal) else v for k, v in p.items()} for _, p in sorted(out.items())]


FIGURES = ("allowed", "applied", "refund", "forfeited", "carried_forward")


def current(session: Session, taxpayer_id: int) -> dict:
    """The ledger of the taxpayer's claims as their current revisions stand, with the refunds
    certified; the balance left by year of origin is what next year's return starts from. The
    location claims are one return (L6): each entry is a claim's share, ``periods`` the return's.
    Denied claims and retired duplicates allow nothing and are left out."""
    rows = session.execute(
        select(LedgerEntry).join(Revision, Revision.id == LedgerEntry.revision_id)
        .join(Claim, (Claim.id == Revision.claim_id) & (Claim.revision == Revision.number))
        .where(LedgerEntry.taxpayer_id == taxpayer_id, Claim.duplicate_of.is_(None), Claim.state != "denied")
        .order_by(LedgerEntry.period_start, LedgerEntry.claim_id, LedgerEntry.origin)
    ).scalars().all()
    certified = session.execute(
        select(RefundCertification).where(RefundCertification.taxpayer_id == taxpayer_id)
        .order_by(RefundCertification.period_start)
    ).scalars().all()
    balance: dict[tuple[int, str], Decimal] = {}
    forfeited = Decimal("0.00")
    for r in rows:
        balance[(r.claim_id, r.origin)] = r.carried_forward
        forfeited += r.forfeited
    by_origin: dict[str, Decimal] = {}
    for (_claim, origin), amount in balance.items():
        by_origin[origin] = by_origin.get(origin, Decimal("0.00")) + amount
    return {
        "entries": [{
            "claim_id": r.claim_id, "period_start": r.period_start.isoformat(), "period_end": r.period_end.isoformat(),
            "origin": r.origin, "allowed": str(r.allowed), "applied": str(r.applied), "refund": str(r.refund),
            "forfeited": str(r.forfeited), "carried_forward": str(r.carried_forward),
        } for r in rows],
        "periods": _return_periods(rows, _rooms(session, taxpayer_id)),
        "carryforward_by_origin": {k: str(v) for k, v in sorted(by_origin.items())},
        "forfeited": str(forfeited),
        "refunds_certified": [{
            "claim_id": c.claim_id, "revision_id": c.revision_id, "period_start": c.period_start.isoformat(),
            "period_end": c.period_end.isoformat(), "amount": str(c.amount), "certified_at": c.created_at.isoformat(),
        } for c in certified],
        "refund_certified_total": str(sum((c.amount for c in certified), Decimal("0.00"))),
    }
