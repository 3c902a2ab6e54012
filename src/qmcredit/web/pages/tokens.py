"""API tokens on the pages: the signed-in person's tokens (name, when made, when they expire, revoked),
a new one shown once, and revoking one. A token is issued by ``auth.issue_token`` under the API's
role rule (preparers and examiners, ``TokenIn``'s limits) and revoked by the API's own function
(``DELETE /tokens/{id}``: its owner only); each is an audit event."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from pydantic import ValidationError
from sqlalchemy import select

from ...service.access import require
from ...service.api.accounts import revoke_token
from ...service.api.schemas import TokenIn
from ...service.auth import Principal, issue_token
from ...service.errors import ApiError
from ...service.models import ApiToken, User, now
from .guard import check_csrf, viewer
from .render import page, refusal

router = APIRouter(include_in_schema=False)
MAY_ISSUE = ("preparer", "examiner")


def _issue(db, who: Principal, body: TokenIn) -> dict:
    require(who, *MAY_ISSUE)

    def work(session) -> dict:
        token = issue_token(session, session.get(User, who.id), body.name, timedelta(days=body.days))
        row = session.execute(select(ApiToken).where(ApiToken.user_id == who.id).order_by(ApiToken.id.desc())).scalars().first()
        return {"id": row.id, "name": row.name, "token": token, "expires_at": row.expires_at.isoformat()}
    return db.write(work)


def _tokens_page(request: Request, who: Principal, issued: dict | None = None, error: ApiError | None = None,
                 values: dict | None = None, status: int = 200):
    with request.app.state.db.read() as session:
        rows = session.execute(select(ApiToken).where(ApiToken.user_id == who.id).order_by(ApiToken.id.desc())).scalars().all()
    return page(request, "tokens.html", who, status=status, rows=rows, issued=issued, error=error, now=now(),
                may_issue=who.role in MAY_ISSUE, values=values or {"name": "", "days": "90"})


@router.get("/tokens")
def tokens_page(request: Request, who: Principal = Depends(viewer)):
    return _tokens_page(request, who)


@router.post("/tokens")
async def issue(request: Request, who: Principal = Depends(viewer)):
    """A new token, shown on this answer only (never stored, never shown again)."""
    form = await request.form()
    values = {"name": str(form.get("name") or "").strip(), "days": str(form.get("days") or "90").strip()}
    try:
        check_csrf(request, form)
        try:
            body = TokenIn(name=values["name"], days=values["days"])
        except ValidationError as e:
            raise ApiError(422, "the token needs a name and a lifetime",
                           [(str(err["loc"][0]), err["msg"]) for err in e.errors()]) from None
        issued = await run_in_threadpool(_issue, request.app.state.db, who, body)
    except ApiError as e:
        if e.status == 422:
            return _tokens_page(request, who, error=e, values=values, status=422)
        return refusal(request, who, e, back="/tokens")
    return _tokens_page(request, who, issued=issued, status=201)


@router.post("/tokens/{token_id:int}/revoke")
async def revoke(request: Request, token_id: int, who: Principal = Depends(viewer)):
    form = await request.form()
    try:
        check_csrf(request, form)
        await run_in_threadpool(revoke_token, token_id, who, request.app.state.db)
    except ApiError as e:
        return refusal(request, who, e, back="/tokens")
    return RedirectResponse("/tokens", status_code=303)
