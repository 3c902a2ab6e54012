"""Who is signed in to the pages, and the CSRF token of their session.

Pages sign people in with the service's own session cookie (signed, SameSite=Strict). Every form
that changes something also carries a per-session token in a hidden field, checked on POST."""

from __future__ import annotations

import secrets
from urllib.parse import quote

from fastapi import HTTPException, Request

from ...service.auth import Principal, principal_from_request
from ...service.errors import ApiError

CSRF_FIELD = "csrf"


def csrf_token(request: Request) -> str:
    token = request.session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = request.session[CSRF_FIELD] = secrets.token_urlsafe(32)
    return token


def check_csrf(request: Request, form) -> None:
    sent = form.get(CSRF_FIELD)
    token = request.session.get(CSRF_FIELD)
    if not (isinstance(sent, str) and isinstance(token, str) and secrets.compare_digest(sent, token)):
        raise ApiError(403, "this form has expired: open the page again and resend it",
                       [("form.csrf", "the form's token does not match your session")])


def signed_in(request: Request) -> Principal | None:
    if not isinstance(request.session.get("user_id"), int):
        return None
    with request.app.state.db.read() as session:
        try:
            return principal_from_request(request, session)
        except ApiError:
            return None


def viewer(request: Request) -> Principal:
    """The signed-in person; anyone else is sent to the sign-in page, and back here afterwards."""
    who = signed_in(request)
    if who is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise HTTPException(303, "sign in first", headers={"location": f"/signin?next={quote(target, safe='')}"})
    return who
