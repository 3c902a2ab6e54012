"""Request dependencies: the database and the signed-in principal."""

from __future__ import annotations

from fastapi import Depends, Request

from ..auth import Principal, principal_from_request
from ..db import Database


def database(request: Request) -> Database:
    return request.app.state.db


def principal(request: Request, db: Database = Depends(database)) -> Principal:
    with db.read() as session:
        return principal_from_request(request, session)
