"""The taxpayer's ledger on the pages: every claim and location of one taxpayer as one return (L6),
its balance by year of origin (what next year's return starts from), each period's figures,
forfeitures (L5) and the refunds certified (R1). Read from ``service.ledger.current``, the API's
``GET /taxpayers/{id}/ledger``; only the balances by origin are added up here, for their total."""

from __future__ import annotations

from decimal import Decimal

from fastapi import APIRouter, Depends, Request
from sqlalchemy import func, select

from ...service import ledger
from ...service.access import taxpayer_for, visible
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.models import Claim, Location, Taxpayer
from .guard import viewer
from .render import page, refusal

router = APIRouter(include_in_schema=False)


@router.get("/taxpayers")
def taxpayers_page(request: Request, who: Principal = Depends(viewer)):
    """The taxpayers the person may see, with their claims and locations counted."""
    with request.app.state.db.read() as session:
        claims = select(Claim.taxpayer_id, func.count().label("n")).group_by(Claim.taxpayer_id).subquery()
        places = select(Location.taxpayer_id, func.count().label("n")).group_by(Location.taxpayer_id).subquery()
        rows = session.execute(visible(select(Taxpayer, claims.c.n, places.c.n)
                                       .outerjoin(claims, claims.c.taxpayer_id == Taxpayer.id)
                                       .outerjoin(places, places.c.taxpayer_id == Taxpayer.id), who)
                               .order_by(Taxpayer.name, Taxpayer.id)).all()
    return page(request, "taxpayers.html", who, rows=rows)


@router.get("/taxpayers/{taxpayer_id:int}/ledger")
def ledger_page(request: Request, taxpayer_id: int, who: Principal = Depends(viewer)):
    with request.app.state.db.read() as session:
        try:
            tp = taxpayer_for(session, who, taxpayer_id)
        except ApiError as e:
            return refusal(request, who, e, back="/taxpayers")
        book = ledger.current(session, tp.id)
        locations = {loc.id: loc for loc in session.execute(select(Location).where(Location.taxpayer_id == tp.id)).scalars()}
        claims = session.execute(select(Claim).where(Claim.taxpayer_id == tp.id).order_by(Claim.id)).scalars().all()
    balance = sum((Decimal(v) for v in book["carryforward_by_origin"].values()), Decimal("0.00"))
    return page(request, "ledger.html", who, taxpayer=tp, book=book, locations=locations, claims=claims,
                claim_location={c.id: locations.get(c.location_id) for c in claims}, balance=f"{balance:.2f}")
