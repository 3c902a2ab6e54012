"""Sign-in: hashed API tokens for programs (SHA-256 of the token is stored, never the token; each
expires) and server-side sessions for people who sign in with a password (argon2 hash stored): the
signed cookie holds the session's random key, and signing out ends the session on the server.
Wrong passwords are limited per user name and per address; an unknown user costs the same hash."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Request
from sqlalchemy import Connection, bindparam, func, select
from sqlalchemy.orm import Session

from .audit import record
from .errors import ApiError
from .models import ApiToken, SignInFailure, SignInSession, User, now

TOKEN_PREFIX = "qmc_"
TOKEN_LIFETIME = timedelta(days=90)
SESSION_LIFETIME = timedelta(hours=8)
#: wrong passwords allowed within ``GUESS_WINDOW`` for one user name, and from one address
GUESS_WINDOW = timedelta(minutes=15)
GUESSES_PER_USER = 5
GUESSES_PER_ADDRESS = 20
SESSION_KEY = "sid"
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


@cache
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(16))


def password_matches(stored: str | None, password: str) -> bool:
    """Whether ``password`` is the one hashed in ``stored``; with none stored (an unknown user, or
    one without a password) a dummy hash is checked, so the answer takes the same time."""
    try:
        return _hasher.verify(stored or _dummy_hash(), password) and bool(stored)
    except (VerificationError, InvalidHashError):
        return False


def client_address(request: Request) -> str:
    return (request.client.host if request.client else "unknown")[:64]


def _refuse_guessing(session: Session, username: str, address: str) -> None:
    since = now() - GUESS_WINDOW
    by_user = session.execute(select(func.count()).where(
        SignInFailure.username == username, SignInFailure.at > since)).scalar_one()
    by_address = session.execute(select(func.count()).where(
        SignInFailure.address == address, SignInFailure.at > since)).scalar_one()
    if by_user >= GUESSES_PER_USER or by_address >= GUESSES_PER_ADDRESS:
        minutes = int(GUESS_WINDOW.total_seconds() // 60)
        raise ApiError(429, f"too many wrong passwords: try again in {minutes} minutes",
                       [("body.password", f"more than {GUESSES_PER_USER} wrong passwords for this user, or "
                                          f"{GUESSES_PER_ADDRESS} from this address, in {minutes} minutes")])


def sign_in(db, request: Request, username: str, password: str) -> Principal:
    """Check the password (within the guess limits) and open a server-side session whose key the
    session cookie carries; 401 on a wrong password, 429 after too many."""
    address = client_address(request)
    with db.read() as session:
        _refuse_guessing(session, username, address)
        user = session.execute(select(User).where(User.username == username)).scalar_one_or_none()
    if not password_matches(user.password_hash if user is not None else None, password):
        db.write(lambda s: s.add(SignInFailure(username=username[:80], address=address)))
        raise ApiError(401, "wrong username or password", [("body.password", "does not match")])
    key = secrets.token_urlsafe(32)
    who = Principal(user.id, user.username, user.role)

    def open_session(s: Session) -> None:
        s.add(SignInSession(key_hash=token_hash(key), user_id=user.id, expires_at=now() + SESSION_LIFETIME))
        record(s, who, "session.sign_in", "user", user.id, None, None)
    db.write(open_session)
    request.session.clear()
    request.session.update({"user_id": user.id, SESSION_KEY: key, "csrf": secrets.token_urlsafe(32)})
    return who


def sign_out(db, request: Request) -> None:
    """End the session on the server (a copied cookie signs in no more) and clear the cookie."""
    key = request.session.get(SESSION_KEY) if "session" in request.scope else None
    request.session.clear()
    if not isinstance(key, str):
        return

    def end(s: Session) -> None:
        row = s.execute(select(SignInSession).where(SignInSession.key_hash == token_hash(key))).scalar_one_or_none()
        if row is not None and row.ended_at is None:
            row.ended_at = now()
    db.write(end)


#: the user of a live session and of a live API token, by the hash of its key (the columns only:
#: no user object is built for a request); built once, each request binds its hash and the time
_SESSION_USER = select(User.id, User.username, User.role).join(SignInSession, SignInSession.user_id == User.id).where(
    SignInSession.key_hash == bindparam("key_hash"), SignInSession.ended_at.is_(None), SignInSession.expires_at > bindparam("now"))
_TOKEN_USER = select(User.id, User.username, User.role).join(ApiToken, ApiToken.user_id == User.id).where(
    ApiToken.token_hash == bindparam("key_hash"), ApiToken.revoked_at.is_(None), ApiToken.expires_at > bindparam("now"))


def session_principal(request: Request, session: Session | Connection) -> Principal | None:
    """The user of the request's live server-side session, if it has one."""
    key = request.session.get(SESSION_KEY) if "session" in request.scope else None
    if not isinstance(key, str):
        return None
    row = session.execute(_SESSION_USER, {"key_hash": token_hash(key), "now": now()}).one_or_none()
    return None if row is None else Principal(row.id, row.username, row.role)


def create_user(session: Session, username: str, role: str, password: str | None = None, by: Principal | None = None) -> User:
    user = User(username=username, role=role, password_hash=hash_password(password) if password else None)
    session.add(user)
    session.flush()
    record(session, by or Principal(user.id, user.username, user.role), "user.create", "user", user.id,
           None, {"username": username, "role": role})
    return user


def issue_token(session: Session, user: User, name: str, lifetime: timedelta = TOKEN_LIFETIME) -> str:
    """A new API token for ``user``, valid for ``lifetime``; the token itself is returned once and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(user_id=user.id, name=name, token_hash=token_hash(token), expires_at=now() + lifetime)
    session.add(row)
    session.flush()
    record(session, Principal(user.id, user.username, user.role), "token.issue", "api_token", row.id, None, {"name": name})
    return token


def principal_from_request(request: Request, session: Session | Connection) -> Principal:
    """The Bearer token if one is given, else the session cookie; 401 when neither signs in."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "sign in with 'Authorization: Bearer <token>'", [("header.authorization", "expected a Bearer token")])
        row = session.execute(_TOKEN_USER, {"key_hash": token_hash(token.strip()), "now": now()}).one_or_none()
        if row is None:
            raise ApiError(401, "unknown, expired or revoked API token", [("header.authorization", "unknown, expired or revoked token")])
        return Principal(row.id, row.username, row.role)
    who = session_principal(request, session)
    if who is not None:
        return who
    raise ApiError(401, "sign in first: an API token or a session", [("header.authorization", "missing")])
