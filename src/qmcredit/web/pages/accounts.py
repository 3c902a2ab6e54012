"""Sign in, sign out, and the claims a person may see (a preparer's own taxpayers', everyone's for
examiners and auditors)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse
from sqlalchemy import select

from ...service import auth
from ...service.access import visible
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.models import Claim, Location, Taxpayer
from .guard import check_csrf, signed_in, viewer
from .render import page, refusal

router = APIRouter(include_in_schema=False)


def _safe_next(target: str | None) -> str:
    """Only a path on this site (never another host) is followed after signing in."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/claims"


@router.get("/signin")
def signin_form(request: Request, next: str | None = None):
    return page(request, "signin.html", signed_in(request), next=_safe_next(next), username="", error=None)


@router.post("/signin")
async def signin(request: Request):
    form = await request.form()
    username, password = str(form.get("username") or ""), str(form.get("password") or "")
    target = _safe_next(str(form.get("next") or ""))
    try:
        check_csrf(request, form)
    except ApiError as e:
        return refusal(request, None, e, back="/signin")
    try:  # the service's sign-in: guess limits, a server-side session with a new CSRF token
        auth.sign_in(request.app.state.db, request, username, password)
    except ApiError as e:
        return page(request, "signin.html", None, status=e.status, next=target, username=username,
                    error="Wrong username or password. Check both and try again." if e.status == 401 else e.error)
    return RedirectResponse(target, status_code=303)


@router.post("/signout")
async def signout(request: Request):
    form = await request.form()
    try:
        check_csrf(request, form)
    except ApiError as e:
        return refusal(request, signed_in(request), e, back="/claims")
    auth.sign_out(request.app.state.db, request)
    return RedirectResponse("/signin", status_code=303)


@router.get("/claims")
def claim_list(request: Request, who: Principal = Depends(viewer)):
    with request.app.state.db.read() as session:
        stmt = visible(select(Claim, Taxpayer, Location).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id)
                       .join(Location, Location.id == Claim.location_id), who)
        rows = session.execute(stmt.order_by(Taxpayer.name, Claim.id)).all()
    return page(request, "claims.html", who, rows=rows)
