"""Sign in and sign out (the claims a person may see are listed by ``lists.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from ...service import auth
from ...service.errors import ApiError
from .guard import check_csrf, signed_in
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
