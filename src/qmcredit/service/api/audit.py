"""The audit log, for examiners and auditors: every change, who, when, before and after."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select

from .. import exact_json
from ..access import require
from ..auth import Principal
from ..db import Database
from ..models import AuditEvent
from .deps import database, principal
from .responses import COMMON, MAX_ID, ExactJSONResponse
from .schemas import PLAIN, AuditOut

router = APIRouter(tags=["audit"])


@router.get("/audit", response_model=list[AuditOut], responses=COMMON)
def audit_log(entity: str | None = Query(None, max_length=40, pattern=PLAIN), entity_id: str | None = Query(None, max_length=40, pattern=PLAIN),
              after_id: int = Query(0, ge=0, le=MAX_ID, description="only events after this id"),
              limit: int = Query(200, ge=1, le=5000), who: Principal = Depends(principal), db: Database = Depends(database)):
    require(who, "examiner", "auditor")
    with db.read() as session:
        stmt = select(AuditEvent).where(AuditEvent.id > after_id)
        if entity is not None:
            stmt = stmt.where(AuditEvent.entity == entity)
        if entity_id is not None:
            stmt = stmt.where(AuditEvent.entity_id == entity_id)
        rows = session.execute(stmt.order_by(AuditEvent.id).limit(limit)).scalars().all()
        return ExactJSONResponse([{
            "id": e.id, "at": e.at.isoformat(), "actor": e.actor, "action": e.action, "entity": e.entity,
            "entity_id": e.entity_id, "before": None if e.before is None else exact_json.loads_stored(e.before),
            "after": None if e.after is None else exact_json.loads_stored(e.after)} for e in rows])
