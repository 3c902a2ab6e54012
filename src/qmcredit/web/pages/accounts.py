"""Sign in, sign out, and the claims a person may see (a preparer's own taxpayers', everyone's for
examiners and auditors)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse
from sqlalchemy import select

from ...service.access import visible
from ...service.audit import record
from ...service.auth import Principal, password_matches
from ...service.errors import ApiError
from ...service.models import Claim, Location, Taxpayer, User
from .guard import CSRF_FIELD, check_csrf, signed_in, viewer
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
    db = request.app.state.db
    with db.read() as session:
        user = session.execute(select(User).where(User.username == username)).scalar_one_or_none()
        ok = user is not None and password_matches(user.password_hash, password)
    if not ok:
        return page(request, "signin.html", None, status=401, next=target, username=username,
                    error="Wrong username or password. Check both and try again.")
    request.session.clear()
    request.session["user_id"] = user.id
    request.session.pop(CSRF_FIELD, None)  # a new token for the signed-in session
    db.write(lambda s: record(s, Principal(user.id, user.username, user.role), "session.sign_in", "user", user.id, None, None))
    return RedirectResponse(target, status_code=303)


@router.post("/signout")
async def signout(request: Request):
    form = await request.form()
    try:
        check_csrf(request, form)
    except ApiError as e:
        return refusal(request, signed_in(request), e, back="/claims")
    request.session.clear()
    return RedirectResponse("/signin", status_code=303)


@router.get("/claims")
def claim_list(request: Request, who: Principal = Depends(viewer)):
    with request.app.state.db.read() as session:
        stmt = visible(select(Claim, Taxpayer, Location).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id)
                       .join(Location, Location.id == Claim.location_id), who)
        rows = session.execute(stmt.order_by(Taxpayer.name, Claim.id)).all()
    return page(request, "claims.html", who, rows=rows)
