"""Settings read from the environment (``QMCREDIT_*``), with defaults that need nothing installed."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_UPLOAD_LIMIT = 20 * 1024 * 1024


def default_database_url() -> str:
    """A SQLite file under ``./var/`` (created on first use)."""
    path = Path("var") / "qmcredit.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path.resolve()}"


@dataclass(frozen=True)
class Settings:
    """``database_url``: SQLAlchemy URL (QMCREDIT_DATABASE_URL); ``upload_limit``: the largest
    request body accepted, in bytes (QMCREDIT_UPLOAD_LIMIT); ``session_secret``: the key that signs
    session cookies (QMCREDIT_SESSION_SECRET; a random one per process when unset);
    ``secure_cookies``: behind TLS, the session cookie is ``Secure`` and answers carry HSTS
    (QMCREDIT_SECURE_COOKIES=1)."""

    database_url: str = field(default_factory=default_database_url)
    upload_limit: int = DEFAULT_UPLOAD_LIMIT
    session_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    secure_cookies: bool = False

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        env = os.environ
        values: dict = {}
        if env.get("QMCREDIT_DATABASE_URL"):
            values["database_url"] = env["QMCREDIT_DATABASE_URL"]
        if env.get("QMCREDIT_UPLOAD_LIMIT"):
            values["upload_limit"] = int(env["QMCREDIT_UPLOAD_LIMIT"])
        if env.get("QMCREDIT_SESSION_SECRET"):
            values["session_secret"] = env["QMCREDIT_SESSION_SECRET"]
        if env.get("QMCREDIT_SECURE_COOKIES"):
            values["secure_cookies"] = env["QMCREDIT_SECURE_COOKIES"].strip().lower() in ("1", "true", "yes")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
