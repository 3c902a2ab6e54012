"""The audit log on the pages, for examiners and auditors (as ``GET /audit``): every event, newest
first, filtered by claim (its own events and those of its documents and evidence requests), user,
action and date, a page at a time; and whether the chain of hashes is whole (``audit.verify``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from sqlalchemy import and_, func, or_, select

from ...service import exact_json
from ...service.access import require
from ...service.audit import verify
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.models import AuditEvent, Document, EvidenceRequest
from .guard import viewer
from .render import page, refusal

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 50


@dataclass
class Filters:
    claim: int | None = None
    user: str = ""
    action: str = ""
    since: date | None = None
    until: date | None = None
    page: int = 1

    def query(self, **changes) -> str:
        """The filters as a query string (for the pager's links)."""
        values = {"claim": self.claim, "user": self.user, "action": self.action, "since": self.since, "until": self.until,
                  "page": self.page} | changes
        return urlencode({k: v for k, v in values.items() if v not in (None, "")})


def filters_of(params) -> Filters:
    """The filters from the query string; a malformed one is refused naming the field."""
    bad = []

    def number(name: str, low: int) -> int | None:
        text = str(params.get(name) or "").strip()
        if not text:
            return None
        if not text.isdigit() or int(text) < low or len(text) > 12:
            bad.append((name, f"{text!r} is not a whole number from {low}"))
            return None
        return int(text)

    def day(name: str) -> date | None:
        text = str(params.get(name) or "").strip()
        if not text:
            return None
        try:
            return date.fromisoformat(text)
        except ValueError:
            bad.append((name, f"{text!r} is not a date (YYYY-MM-DD)"))
            return None

    f = Filters(claim=number("claim", 1), user=str(params.get("user") or "").strip()[:80],
                action=str(params.get("action") or "").strip()[:60], since=day("since"), until=day("until"),
                page=number("page", 1) or 1)
    if bad:
        raise ApiError(422, "a filter of the audit log is not understood", bad)
    return f


def _where(session, f: Filters) -> list:
    clauses = []
    if f.claim is not None:
        docs = select(Document.id).where(Document.claim_id == f.claim)
        reqs = select(EvidenceRequest.id).where(EvidenceRequest.claim_id == f.claim)
        ids = lambda stmt: [str(i) for i in session.execute(stmt).scalars()]  # noqa: E731 (entity ids are text)
        clauses.append(or_(and_(AuditEvent.entity == "claim", AuditEvent.entity_id == str(f.claim)),
                           and_(AuditEvent.entity == "document", AuditEvent.entity_id.in_(ids(docs))),
                           and_(AuditEvent.entity == "evidence_request", AuditEvent.entity_id.in_(ids(reqs)))))
    if f.user:
        clauses.append(AuditEvent.actor == f.user)
    if f.action:
        clauses.append(AuditEvent.action == f.action)
    if f.since:
        clauses.append(AuditEvent.at >= datetime.combine(f.since, time(), timezone.utc))
    if f.until:
        clauses.append(AuditEvent.at < datetime.combine(f.until + timedelta(days=1), time(), timezone.utc))
    return clauses


def _shown(text: str | None) -> str:
    """A record kept before or after a change, one field a line."""
    if text is None:
        return ""
    value = exact_json.loads_stored(text)
    if not isinstance(value, dict):
        return exact_json.dumps(value)
    return "\n".join(f"{k}: {v if isinstance(v, str) else exact_json.dumps(v)}" for k, v in value.items())


@router.get("/audit")
def audit_page(request: Request, who: Principal = Depends(viewer)):
    try:
        require(who, "examiner", "auditor")
        f = filters_of(request.query_params)
    except ApiError as e:
        return refusal(request, who, e, back="/audit" if who.role != "preparer" else "/claims")
    with request.app.state.db.read() as session:
        where = _where(session, f)
        total = session.execute(select(func.count()).select_from(AuditEvent).where(*where)).scalar_one()
        events = session.execute(select(AuditEvent).where(*where).order_by(AuditEvent.id.desc())
                                 .limit(PAGE_SIZE).offset((f.page - 1) * PAGE_SIZE)).scalars().all()
        actions = session.execute(select(AuditEvent.action).distinct().order_by(AuditEvent.action)).scalars().all()
        users = session.execute(select(AuditEvent.actor).distinct().order_by(AuditEvent.actor)).scalars().all()
        count, broken = verify(session)
    rows = [{"id": e.id, "at": e.at, "actor": e.actor, "action": e.action, "entity": e.entity, "entity_id": e.entity_id,
             "before": _shown(e.before), "after": _shown(e.after)} for e in events]
    pages = max(1, -(-total // PAGE_SIZE))
    return page(request, "audit.html", who, f=f, rows=rows, total=total, pages=pages, actions=actions, users=users,
                chain={"events": count, "broken": broken})
