"""The examiner's queue: claims waiting for review, and those under review, oldest first."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from sqlalchemy import select

from ...service import claims as stored
from ...service import exact_json
from ...service.access import visible
from ...service.auth import Principal
from ...service.models import Claim, Taxpayer
from .guard import viewer
from .render import page

router = APIRouter(include_in_schema=False)

WAITING = ("submitted", "under_review")


@router.get("/queue")
def review_queue(request: Request, who: Principal = Depends(viewer)):
    with request.app.state.db.read() as session:
        found = session.execute(visible(select(Claim, Taxpayer).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id), who)
                                .where(Claim.state.in_(WAITING)).order_by(Claim.updated_at, Claim.id)).all()
        rows = [{"claim": c, "taxpayer": t,
                 "det": exact_json.loads(stored.current_revision(session, c).determination)} for c, t in found]
    return page(request, "queue.html", who, rows=rows)
