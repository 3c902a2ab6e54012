"""The append-only audit log: who changed what, when, with the record before and after. Written
in the same transaction as the change it records, so neither exists without the other."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from . import exact_json
from .models import AuditEvent


def record(session: Session, who, action: str, entity: str, entity_id, before: Any, after: Any) -> None:
    session.add(AuditEvent(
        actor_id=who.id, actor=who.username, action=action, entity=entity, entity_id=str(entity_id),
        before=None if before is None else exact_json.dumps(before),
        after=None if after is None else exact_json.dumps(after),
    ))
