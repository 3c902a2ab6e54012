"""Taxpayers, their locations and their ledger."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from sqlalchemy import select

from .. import exact_json, idempotency, ledger
from ..access import may_see, require, taxpayer_for, visible
from ..audit import record
from ..auth import Principal
from ..db import Database
from ..errors import ApiError, not_found
from ..models import CreditWindow, Location, Taxpayer, User
from .deps import IDEMPOTENCY_KEY, database, principal
from .responses import COMMON, MAX_ID, WRITE, ExactJSONResponse, RecordId
from .schemas import LedgerOut, LocationOut, TaxpayerIn, TaxpayerOut

router = APIRouter(tags=["taxpayers"])


def _taxpayer_out(session, tp: Taxpayer) -> dict:
    window = session.get(CreditWindow, tp.id)
    return {"id": tp.id, "ein": tp.ein, "name": tp.name, "tax": tp.tax, "preparer": session.get(User, tp.preparer_id).username,
            "year_one_start": window.year_one_start.isoformat() if window else None}


def _location_out(loc: Location) -> dict:
    return {"id": loc.id, "taxpayer_id": loc.taxpayer_id, "municipality": loc.municipality, "address": loc.address,
            "operations_began": loc.operations_began.isoformat(), "operations_source": loc.operations_source}


@router.get("/taxpayers", response_model=list[TaxpayerOut], responses=COMMON)
def list_taxpayers(limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_ID),
                   who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        rows = session.execute(visible(select(Taxpayer), who).order_by(Taxpayer.id).limit(limit).offset(offset)).scalars().all()
        return ExactJSONResponse([_taxpayer_out(session, tp) for tp in rows])


@router.post("/taxpayers", status_code=201, response_model=TaxpayerOut, responses=WRITE)
def register_taxpayer(request: Request, body: TaxpayerIn, idempotency_key: str | None = IDEMPOTENCY_KEY,
                      who: Principal = Depends(principal), db: Database = Depends(database)):
    """A preparer registers a client before filing (filing a claim for a new taxpayer does it too)."""
    require(who, "preparer")
    key = idempotency.key_of(idempotency_key)
    request_sha256 = idempotency.fingerprint(exact_json.dumps(body.model_dump(mode="json")).encode(), None,
                                             route=f"POST {request.url.path}") if key else ""

    def work(session):
        if session.execute(select(Taxpayer).where(Taxpayer.ein == body.ein)).scalar_one_or_none() is not None:
            raise ApiError(409, f"taxpayer {body.ein} is already registered", [("body.ein", "already registered")])
        tp = Taxpayer(ein=body.ein, name=body.name, tax=body.tax, preparer_id=who.id)
        session.add(tp)
        session.flush()
        record(session, who, "taxpayer.create", "taxpayer", tp.id, None, {"ein": tp.ein, "name": tp.name, "tax": tp.tax})
        return idempotency.Answer(201, _taxpayer_out(session, tp))

    return idempotency.once(db, who, key, request_sha256, work)


@router.get("/taxpayers/{taxpayer_id}", response_model=TaxpayerOut, responses=COMMON)
def get_taxpayer(taxpayer_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        return ExactJSONResponse(_taxpayer_out(session, taxpayer_for(session, who, taxpayer_id)))


@router.get("/taxpayers/{taxpayer_id}/ledger", response_model=LedgerOut, responses=COMMON)
def get_ledger(taxpayer_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Carryforward balance by year of origin, refunds certified and credits forfeited: where next
    year's return starts from."""
    with db.read() as session:
        tp = taxpayer_for(session, who, taxpayer_id)
        return ExactJSONResponse({"taxpayer_id": tp.id, **ledger.current(session, tp.id)})


@router.get("/taxpayers/{taxpayer_id}/locations", response_model=list[LocationOut], responses=COMMON)
def list_locations(taxpayer_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        tp = taxpayer_for(session, who, taxpayer_id)
        rows = session.execute(select(Location).where(Location.taxpayer_id == tp.id).order_by(Location.id)).scalars().all()
        return ExactJSONResponse([_location_out(loc) for loc in rows])


@router.get("/locations/{location_id}", response_model=LocationOut, responses=COMMON)
def get_location(location_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        loc = session.get(Location, location_id)
        if loc is None or not may_see(who, session.get(Taxpayer, loc.taxpayer_id)):
            raise not_found("location", location_id)
        return ExactJSONResponse(_location_out(loc))
