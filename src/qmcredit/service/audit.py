"""The append-only audit log: who changed what, when, with the record before and after. Written
in the same transaction as the change it records, so neither exists without the other.

The events form a chain: each carries the hash of the one before (``prev_hash``, empty for the
first) and its own ``hash``, the SHA-256 of its fields and ``prev_hash``. The database refuses
UPDATE, DELETE, REPLACE and TRUNCATE; ``verify`` finds any change made around it all the same."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from . import exact_json
from .models import AuditEvent, now

FIELDS = ("at", "actor_id", "actor", "action", "entity", "entity_id", "before", "after")
#: PostgreSQL: writers of events queue on this transaction lock, so each reads the last hash
_CHAIN_LOCK = 0x71_6D_63_61  # "qmca"


def event_hash(prev_hash: str, event: Mapping[str, Any] | AuditEvent) -> str:
    """SHA-256 of the event's fields (``at`` in UTC to the microsecond) after ``prev_hash``."""
    get = event.get if isinstance(event, Mapping) else lambda k: getattr(event, k)
    at: datetime = get("at")
    fields = [at.astimezone(timezone.utc).isoformat(timespec="microseconds"), *(get(k) for k in FIELDS[1:])]
    return hashlib.sha256(json.dumps([prev_hash, *fields], ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def _last_hash(session: Session) -> str:
    """The hash the next event of this transaction follows: read from the log once per
    transaction (after taking the chain's lock on PostgreSQL), then this transaction's own last."""
    txn = session.get_transaction()
    kept = session.info.get("audit_chain")
    if kept is not None and kept[0] is txn:
        return kept[1]
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _CHAIN_LOCK})
    last = session.execute(select(AuditEvent.hash).order_by(AuditEvent.id.desc()).limit(1)).scalar_one_or_none()
    return last or ""


def record(session: Session, who, action: str, entity: str, entity_id, before: Any, after: Any) -> None:
    """Append an event to the chain, in the caller's transaction (inserted with its other rows,
    in the order recorded)."""
    event = AuditEvent(
        at=now(), actor_id=who.id, actor=who.username, action=action, entity=entity, entity_id=str(entity_id),
        before=None if before is None else exact_json.dumps(before),
        after=None if after is None else exact_json.dumps(after),
    )
    event.prev_hash = _last_hash(session)
    event.hash = event_hash(event.prev_hash, event)
    session.add(event)
    session.info["audit_chain"] = (session.get_transaction(), event.hash)


def first_break(events: Iterable[AuditEvent]) -> tuple[int, str] | None:
    """The first event (its id and what is wrong) where the chain breaks, or None when whole."""
    prev = ""
    for e in events:
        if e.prev_hash != prev:
            return e.id, "does not follow the event before it (an event was removed, inserted or replaced)"
        if e.hash != event_hash(prev, e):
            return e.id, "was changed after it was written (its hash does not match its fields)"
        prev = e.hash
    return None


def verify(session: Session) -> tuple[int, tuple[int, str] | None]:
    """How many events there are and the first break in their chain, if any."""
    events = session.execute(select(AuditEvent).order_by(AuditEvent.id)).scalars().all()
    return len(events), first_break(events)
