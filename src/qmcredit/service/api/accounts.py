"""Sign-in: a session for people (password), API tokens for programs; and who am I."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Depends, Request
from sqlalchemy import select

from .. import auth, exact_json, idempotency
from ..access import require
from ..audit import record
from ..auth import Principal, issue_token
from ..db import Database
from ..errors import not_found
from ..models import ApiToken, User, now
from .deps import IDEMPOTENCY_KEY, database, principal
from .responses import COMMON, ExactJSONResponse, RecordId, errors
from .schemas import MeOut, SessionIn, TokenIn, TokenOut

router = APIRouter(tags=["accounts"])


@router.post("/session", response_model=MeOut, responses=errors(400, 401, 422, 429))
def sign_in(body: SessionIn, request: Request, db: Database = Depends(database)):
    """Sign in with a password: a server-side session, its key in the signed session cookie. The
    answer carries the session's CSRF token, sent back as ``X-CSRF-Token`` with every change."""
    who = auth.sign_in(db, request, body.username, body.password)
    return ExactJSONResponse({"id": who.id, "username": who.username, "role": who.role, "csrf_token": request.session["csrf"]})


@router.delete("/session", status_code=204, responses=errors(400))
def sign_out(request: Request, db: Database = Depends(database)):
    """Sign out: the session ends on the server, so no copy of its cookie signs in again."""
    auth.sign_out(db, request)


@router.get("/me", response_model=MeOut, responses=COMMON)
def me(request: Request, who: Principal = Depends(principal)):
    csrf = request.session.get("csrf") if "authorization" not in request.headers else None
    return ExactJSONResponse({"id": who.id, "username": who.username, "role": who.role, "csrf_token": csrf})


@router.post("/tokens", status_code=201, response_model=TokenOut, responses=errors(400, 401, 403, 422))
def new_token(request: Request, body: TokenIn, idempotency_key: str | None = IDEMPOTENCY_KEY,
              who: Principal = Depends(principal), db: Database = Depends(database)):
    """An API token for the signed-in user's programs (preparers and examiners; auditors read with
    their session); shown once, stored as its SHA-256, valid for ``days``. A retry with the same
    ``Idempotency-Key`` issues no second token: it answers the first one's record, its secret
    ``null`` (shown once: revoke that token if its secret was lost)."""
    require(who, "preparer", "examiner")
    key = idempotency.key_of(idempotency_key)
    request_sha256 = idempotency.fingerprint(exact_json.dumps(body.model_dump(mode="json")).encode(), None,
                                             route=f"POST {request.url.path}") if key else ""

    def work(session) -> idempotency.Answer:
        user = session.get(User, who.id)
        token = issue_token(session, user, body.name, timedelta(days=body.days))
        row = session.execute(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())).scalars().first()
        out = {"id": row.id, "name": body.name, "token": token, "expires_at": row.expires_at.isoformat()}
        return idempotency.Answer(201, out, kept=out | {"token": None})

    return idempotency.once(db, who, key, request_sha256, work)


@router.delete("/tokens/{token_id}", status_code=204, responses=errors(400, 401, 404, 422))
def revoke_token(token_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Revoke one of the signed-in user's API tokens; it signs in no more."""
    def work(session):
        row = session.get(ApiToken, token_id)
        if row is None or row.user_id != who.id:
            raise not_found("token", token_id)
        if row.revoked_at is None:
            row.revoked_at = now()
            record(session, who, "token.revoke", "api_token", row.id, {"revoked_at": None}, {"revoked_at": row.revoked_at.isoformat()})
    db.write(work)
