"""API tokens on the pages: the signed-in person's tokens (name, when made, when they expire, revoked),
a new one shown once, and revoking one. Issuing and revoking are the API's own functions
(``POST /tokens``, ``DELETE /tokens/{id}``: preparers and examiners only, a token revoked by its
owner only, each an audit event); the page adds nothing to them."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from pydantic import ValidationError
from sqlalchemy import select

from ...service.api.accounts import new_token, revoke_token
from ...service.api.schemas import TokenIn
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.models import ApiToken, now
from .guard import check_csrf, viewer
from .render import page, refusal

router = APIRouter(include_in_schema=False)
MAY_ISSUE = ("preparer", "examiner")


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
        answer = await run_in_threadpool(new_token, body, who, request.app.state.db)
    except ApiError as e:
        if e.status == 422:
            return _tokens_page(request, who, error=e, values=values, status=422)
        return refusal(request, who, e, back="/tokens")
    return _tokens_page(request, who, issued=json.loads(answer.body), status=201)


@router.post("/tokens/{token_id:int}/revoke")
async def revoke(request: Request, token_id: int, who: Principal = Depends(viewer)):
    form = await request.form()
    try:
        check_csrf(request, form)
        await run_in_threadpool(revoke_token, token_id, who, request.app.state.db)
    except ApiError as e:
        return refusal(request, who, e, back="/tokens")
    return RedirectResponse("/tokens", status_code=303)
