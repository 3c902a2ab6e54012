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

from sqlalchemy import insert, select, text
from sqlalchemy.event import listens_for
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


_LAST_HASH = select(AuditEvent.hash).order_by(AuditEvent.id.desc()).limit(1)  # built once: every change reads it


def record(session: Session, who, action: str, entity: str, entity_id, before: Any, after: Any) -> None:
    """Append an event to the chain, in the caller's transaction: its events are chained and
    inserted in one statement as it commits (``_write_events``), in the order recorded, after its
    other rows. ``at`` is when the change was made."""
    txn = session.get_transaction()
    kept = session.info.get("audit_chain")
    if kept is None or kept["transaction"] is not txn:
        kept = session.info["audit_chain"] = {"transaction": txn, "events": []}
    kept["events"].append({
        "at": now(), "actor_id": who.id, "actor": who.username, "action": action, "entity": entity, "entity_id": str(entity_id),
        "before": None if before is None else exact_json.dumps(before),
        "after": None if after is None else exact_json.dumps(after),
    })


@listens_for(Session, "before_commit")
def _write_events(session: Session) -> None:
    """The transaction's events, chained and written as it commits (nothing of it is committed
    without them): on PostgreSQL, whose writers run side by side, after taking the chain's lock,
    held to the commit, so that each transaction's first event follows the last one committed.
    Taken this late, the lock makes writers queue only for their commit, not their whole work."""
    kept = session.info.get("audit_chain")
    if kept is None or kept["transaction"] is not session.get_transaction() or not kept["events"]:
        return
    events, kept["events"] = kept["events"], []
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _CHAIN_LOCK})
    last = session.execute(_LAST_HASH).scalar_one_or_none() or ""
    for event in events:
        event["prev_hash"] = last
        event["hash"] = last = event_hash(last, event)
    session.connection().execute(insert(AuditEvent.__table__), events)  # Core: events are never changed


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
