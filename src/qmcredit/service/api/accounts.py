"""Sign-in: a session for people (password), API tokens for programs; and who am I."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from sqlalchemy import select

from ..audit import record
from ..auth import Principal, issue_token, password_matches
from ..db import Database
from ..errors import ApiError, not_found
from ..models import ApiToken, User, now
from .deps import database, principal
from .responses import COMMON, ExactJSONResponse, RecordId, errors
from .schemas import MeOut, SessionIn, TokenIn, TokenOut

router = APIRouter(tags=["accounts"])


@router.post("/session", response_model=MeOut, responses=errors(400, 401, 422))
def sign_in(body: SessionIn, request: Request, db: Database = Depends(database)):
    """Sign in with a password: sets the signed session cookie."""
    with db.read() as session:
        user = session.execute(select(User).where(User.username == body.username)).scalar_one_or_none()
        ok = user is not None and password_matches(user.password_hash, body.password)
    if not ok:
        raise ApiError(401, "wrong username or password", [("body.password", "does not match")])
    request.session.clear()
    request.session["user_id"] = user.id
    db.write(lambda s: record(s, Principal(user.id, user.username, user.role), "session.sign_in", "user", user.id, None, None))
    return ExactJSONResponse({"id": user.id, "username": user.username, "role": user.role})


@router.delete("/session", status_code=204, responses=errors(400))
def sign_out(request: Request):
    request.session.clear()


@router.get("/me", response_model=MeOut, responses=COMMON)
def me(who: Principal = Depends(principal)):
    return ExactJSONResponse({"id": who.id, "username": who.username, "role": who.role})


@router.post("/tokens", status_code=201, response_model=TokenOut, responses=errors(400, 401, 403, 422))
def new_token(body: TokenIn, who: Principal = Depends(principal), db: Database = Depends(database)):
    """An API token for the signed-in user's programs; shown once, stored as its SHA-256."""
    def work(session):
        user = session.get(User, who.id)
        token = issue_token(session, user, body.name)
        row_id = session.execute(select(ApiToken.id).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())).scalars().first()
        return {"id": row_id, "name": body.name, "token": token}
    return ExactJSONResponse(db.write(work), status_code=201)


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
