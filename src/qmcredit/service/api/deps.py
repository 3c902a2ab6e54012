"""Request dependencies: the database and the signed-in principal. A change made with the
session cookie (not a token) must carry the session's CSRF token in ``X-CSRF-Token``."""

from __future__ import annotations

import secrets

from fastapi import Depends, Header, Request

from ..auth import Principal, principal_from_request
from ..db import Database
from ..errors import ApiError
from ..idempotency import HEADER

IDEMPOTENCY_KEY = Header(None, alias=HEADER, description=(
    "a key of yours for this request (1-255 visible ASCII characters, a UUID say): a retry with the same key and "
    "request gets the first answer again (`Idempotent-Replayed: true`) and stores nothing; with another request, 422"))

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def database(request: Request) -> Database:
    return request.app.state.db


def principal(request: Request, db: Database = Depends(database)) -> Principal:
    with db.read_connection() as connection:
        who = principal_from_request(request, connection)
    if request.method not in SAFE_METHODS and "authorization" not in request.headers:
        sent, token = request.headers.get("x-csrf-token"), request.session.get("csrf")
        if not (sent and isinstance(token, str) and secrets.compare_digest(sent.encode(), token.encode())):
            raise ApiError(403, "a change made with the session cookie needs the session's CSRF token",
                           [("header.x-csrf-token", "missing or not this session's: it is in the answer of POST /session and GET /me")])
    return who
