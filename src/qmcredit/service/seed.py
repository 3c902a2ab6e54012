"""Demo data: users of each role, and the bundled example claims filed as example taxpayers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

import qmcredit
from qmcredit import ClaimError

from . import claims, exact_json, taxreturn
from .auth import Principal, create_user, issue_token
from .db import Database
from .errors import ApiError
from .evaluate import Upload, evaluate
from .models import Claim, User

DEMO_PASSWORD = "qmcredit-demo"
DEMO_USERS = (("preparer", "preparer"), ("preparer2", "preparer"), ("examiner", "examiner"), ("auditor", "auditor"))


@dataclass(frozen=True)
class Seeded:
    tokens: dict[str, str]
    filed: list[str]
    skipped: list[str]


def example_files() -> list[Path]:
    """``examples/*.claim.json`` of the source tree (or of the working directory), those of one
    location: the office files one location per claim (a several-location example, L6, is not)."""
    for root in (Path(qmcredit.__file__).resolve().parents[2], Path.cwd()):
        found = sorted(p for p in (root / "examples").glob("*.claim.json") if '"locations"' not in p.read_text(encoding="utf-8"))
        if found:
            return found
    return []


def _table_of(path: Path) -> Upload | None:
    """The payroll table an example names (beside it), uploaded with it."""
    name = exact_json.loads(path.read_bytes()).get("payroll")
    if not isinstance(name, str) or not (path.parent / name).is_file():
        return None
    return Upload(name, "text/csv", (path.parent / name).read_bytes())


def seed(db: Database, files: list[Path] | None = None) -> Seeded:
    """Create the demo users if missing, file the examples once, and issue each user a fresh token
    (tokens are stored hashed, so they are new at every start)."""
    def users(session):
        tokens = {}
        for name, role in DEMO_USERS:
            user = session.execute(select(User).where(User.username == name)).scalar_one_or_none()
            if user is None:
                user = create_user(session, name, role, DEMO_PASSWORD)
            tokens[name] = issue_token(session, user, "demo")
        preparer = session.execute(select(User).where(User.username == "preparer")).scalar_one()
        first_time = session.execute(select(func.count()).select_from(Claim)).scalar_one() == 0
        return tokens, Principal(preparer.id, preparer.username, preparer.role), first_time

    tokens, preparer, first_time = db.write(users)
    filed, skipped = [], []
    for path in (files if files is not None else example_files()) if first_time else []:
        try:
            for document in taxreturn.location_documents(path.read_text(encoding="utf-8")):  # one claim per location (L6)
                ev = evaluate(document, _table_of(path))
                db.write(lambda s, ev=ev: claims.create(s, preparer, ev, submit=True))
            filed.append(path.name)
        except (ClaimError, ApiError) as e:
            skipped.append(f"{path.name}: {e}")
    return Seeded(tokens, filed, skipped)
