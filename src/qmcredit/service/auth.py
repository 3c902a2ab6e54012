"""Sign-in: hashed API tokens for programs (SHA-256 of the token is stored, never the token) and a
signed session cookie for people who sign in with a password (argon2 hash stored)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from .audit import record
from .errors import ApiError
from .models import ApiToken, User

TOKEN_PREFIX = "qmc_"
_hasher = PasswordHasher()


@dataclass(frozen=True)
class Principal:
    """Who is asking: the signed-in user and the role that decides what they may do."""

    id: int
    username: str
    role: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def password_matches(stored: str | None, password: str) -> bool:
    if not stored:
        return False
    try:
        return _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def create_user(session: Session, username: str, role: str, password: str | None = None, by: Principal | None = None) -> User:
    user = User(username=username, role=role, password_hash=hash_password(password) if password else None)
    session.add(user)
    session.flush()
    record(session, by or Principal(user.id, user.username, user.role), "user.create", "user", user.id,
           None, {"username": username, "role": role})
    return user


def issue_token(session: Session, user: User, name: str) -> str:
    """A new API token for ``user``; the token itself is returned once and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(user_id=user.id, name=name, token_hash=token_hash(token))
    session.add(row)
    session.flush()
    record(session, Principal(user.id, user.username, user.role), "token.issue", "api_token", row.id, None, {"name": name})
    return token


def principal_from_request(request: Request, session: Session) -> Principal:
    """The Bearer token if one is given, else the session cookie; 401 when neither signs in."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "sign in with 'Authorization: Bearer <token>'", [("header.authorization", "expected a Bearer token")])
        row = session.execute(
            select(User).join(ApiToken, ApiToken.user_id == User.id)
            .where(ApiToken.token_hash == token_hash(token.strip()), ApiToken.revoked_at.is_(None))
        ).scalar_one_or_none()
        if row is None:
            raise ApiError(401, "unknown or revoked API token", [("header.authorization", "unknown or revoked token")])
        return Principal(row.id, row.username, row.role)
    user_id = request.session.get("user_id") if "session" in request.scope else None
    if isinstance(user_id, int):
        user = session.get(User, user_id)
        if user is not None:
            return Principal(user.id, user.username, user.role)
    raise ApiError(401, "sign in first: an API token or a session", [("header.authorization", "missing")])
