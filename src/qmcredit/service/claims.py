"""Claims in the database: filing, amending, the examiner's review and the refund certification.
Each function is one unit of work, run by ``Database.write`` as a single transaction, and writes
its audit event in that same transaction."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from decimal import Decimal
from typing import NamedTuple, TypeVar

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy.orm import Session

from . import exact_json, ledger, places, taxreturn, workflow
from .access import claim_for, require, visible
from .audit import record
from .auth import Principal
from .errors import ApiError, forbidden
from .evaluate import Evaluation, Upload, evaluate
from .models import Claim, CreditWindow, Decision, Document, Location, RefundCertification, Revision, Taxpayer, now
from .rules import check_reasons


def snapshot(claim: Claim, result: dict | None = None) -> dict:
    """What the audit log keeps of a claim before and after a change."""
    out = {"state": claim.state, "revision": claim.revision,
           "year_one_start": claim.year_one_start.isoformat() if claim.year_one_start else None}
    if result is not None:
        out |= {k: result.get(k) for k in ("eligible", "credit", "refund", "carried_forward")}
    return out


R = TypeVar("R")


def _insert(session: Session, row: R) -> R:
    """``session.add(row); session.flush()`` for a new row whose id the next row needs: what is
    pending is flushed first, as then, but the row is written by one INSERT of its own, without a
    unit of work (a filing writes five such rows; the flushes were a third of its database time).
    ``row`` gets its id and the values written, defaults included, and stays outside the session:
    it is read, not changed (a change to it is not written)."""
    session.flush()
    values = {}
    for column in row.__table__.columns:
        if column.key not in row.__dict__ and column.default is not None:
            setattr(row, column.key, column.default.arg(None) if column.default.is_callable else column.default.arg)
        if column.key in row.__dict__:
            values[column.key] = row.__dict__[column.key]
    result = session.connection().execute(insert(row.__table__), values)
    for column, key in zip(row.__table__.primary_key.columns, result.inserted_primary_key):
        setattr(row, column.key, key)
    return row


_TAXPAYER = select(Taxpayer).where(Taxpayer.ein == bindparam("ein")).with_for_update()  # built once: every filing reads it


def _taxpayer(session: Session, who: Principal, ev: Evaluation) -> tuple[Taxpayer, bool]:
    """The claim's taxpayer, locked (``_lock``), and whether this filing registers it."""
    t = ev.header.taxpayer
    tp = session.execute(_TAXPAYER, {"ein": t.id}).scalar_one_or_none()
    if tp is None:
        if who.role != "preparer":
            raise forbidden("only a preparer files a claim for a new taxpayer")
        tp = _insert(session, Taxpayer(ein=t.id, name=t.name, tax=t.tax, preparer_id=who.id))
        record(session, who, "taxpayer.create", "taxpayer", tp.id, None, {"ein": tp.ein, "name": tp.name, "tax": tp.tax})
        return tp, True
    if who.role == "preparer" and tp.preparer_id != who.id:
        raise ApiError(404, f"no taxpayer {t.id} that you may see", [("taxpayer.id", f"taxpayer {t.id} not found")])  # as if absent
    return tp, False


def _lock(session: Session, tp: Taxpayer) -> None:
    """Take the taxpayer's row lock (PostgreSQL; SQLite's writers queue anyway): changes to one
    taxpayer's claims, which recompute its return, run one at a time, each seeing the last."""
    session.refresh(tp, with_for_update=True)


def _location(session: Session, who: Principal, tp: Taxpayer, ev: Evaluation, fresh: bool = False) -> Location:
    """The taxpayer's location at the claim's place (``places.place_key``: spellings of one place
    are one location), registered as written the first time. ``fresh``: the taxpayer was
    registered in this transaction, so it has no location, window or claim yet (none is looked up)."""
    loc = ev.header.location
    key = places.place_key(loc.municipality, loc.address)
    row = None if fresh else session.execute(
        select(Location).where(Location.taxpayer_id == tp.id, Location.place_key == key)).scalar_one_or_none()
    if row is None:
        row = _insert(session, Location(taxpayer_id=tp.id, municipality=loc.municipality, address=loc.address, place_key=key,
                                        operations_began=loc.operations_began, operations_source=loc.operations_source))
        record(session, who, "location.create", "location", row.id, None,
               {"taxpayer_id": tp.id, "municipality": row.municipality, "address": row.address})
    return row


def _claim_window(session: Session, who: Principal, tp: Taxpayer, start: date | None, claim: Claim | None = None,
                  fresh: bool = False) -> None:
    """E4 (52:27BBB-55(d)): one 24-month credit period per taxpayer, across claims and locations.
    Takes the taxpayer's window when it has none; a different start is refused while another
    claim holds the window (one that ``claim``, being amended, holds alone moves with it; one that
    no claim holds any more, all its claims amended to ineligible, is taken by the new start)."""
    if start is None:
        if claim is not None:
            claim.year_one_start = None
        return
    window = None if fresh else session.get(CreditWindow, tp.id, with_for_update=True)
    if window is None:
        _insert(session, CreditWindow(taxpayer_id=tp.id, year_one_start=start))  # a concurrent first claim fails here; the retry sees it
        record(session, who, "credit_window.take", "taxpayer", tp.id, None, {"year_one_start": start.isoformat()})
    elif window.year_one_start != start:
        others = session.execute(select(func.count()).select_from(Claim).where(
            Claim.taxpayer_id == tp.id, Claim.year_one_start.is_not(None),
            *([Claim.id != claim.id] if claim is not None else []),
        )).scalar_one()
        if others:
            raise ApiError(409, f"E4: taxpayer {tp.ein} already has its single 24-month credit period", [(
                "location.operations_began",
                f"E4 (52:27BBB-55(d)): credit year one of this claim would start {start.isoformat()[:7]}, but taxpayer "
                f"{tp.ein}'s credit period starts {window.year_one_start.isoformat()[:7]}; a taxpayer has one credit period, "
                "across all claims and locations",
            )])
        before = window.year_one_start
        if claim is not None:
            claim.year_one_start = None  # release the composite key before the window moves
            session.flush()
        window.year_one_start = start
        session.flush()
        record(session, who, "credit_window.move", "taxpayer", tp.id, {"year_one_start": before.isoformat()},
               {"year_one_start": start.isoformat()})
    if claim is not None:
        claim.year_one_start = start


def _refuse_second_filing(session: Session, tp: Taxpayer, loc: Location, start: date | None, claim: Claim | None = None) -> None:
    """No credit twice: one claim per taxpayer, location and credit window. Another is refused
    (409) naming the claim to amend instead. The unique index ``uq_claims_location_window`` holds it
    under simultaneous filings: the loser's insert fails, ``Database.write`` reruns it, and this
    check then finds the winner. An ineligible claim (no window) allows no credit and is not held."""
    if start is None:
        return
    existing = session.execute(select(Claim.id).where(
        Claim.taxpayer_id == tp.id, Claim.location_id == loc.id, Claim.year_one_start == start, Claim.duplicate_of.is_(None),
        *([Claim.id != claim.id] if claim is not None else []),
    ).order_by(Claim.id).limit(1)).scalar_one_or_none()
    if existing is not None:
        raise ApiError(409, f"taxpayer {tp.ein} already has claim {existing} for this location and credit period: amend it instead", [(
            "location",
            f"claim {existing} (/api/v1/claims/{existing}) is taxpayer {tp.ein}'s claim for {loc.municipality}, {loc.address} "
            f"with credit year one from {start.isoformat()}; a credit is claimed once per location and credit period: "
            f"amend claim {existing} (PUT /api/v1/claims/{existing}) instead of filing it again",
        )])


def _changeable(session: Session, who: Principal, claim_id: int) -> tuple[Claim, Taxpayer]:
    """The claim, locked for a change; a duplicate that migration 0003 retired changes no more."""
    claim, tp = claim_for(session, who, claim_id)
    _lock(session, tp)
    session.refresh(claim, with_for_update=True)
    if claim.duplicate_of is not None:
        raise ApiError(409, f"claim {claim.id} duplicates claim {claim.duplicate_of} and counts for nothing: change that one", [(
            "claim", f"claim {claim.id} was filed again for the location and credit period of claim {claim.duplicate_of} "
                     f"(/api/v1/claims/{claim.duplicate_of}); amend that claim")])
    return claim, tp


def _payroll_document(session: Session, who: Principal, claim: Claim, upload: Upload | None) -> int | None:
    if upload is None:
        return None
    doc = Document(claim_id=claim.id, kind="payroll_table", filename=upload.filename, media_type=upload.media_type,
                   sha256=upload.sha256, size=len(upload.content), content=upload.content, uploaded_by=who.id,
                   description="payroll table the determination was computed from")
    session.add(doc)
    session.flush()
    record(session, who, "document.add", "document", doc.id, None,
           {"claim_id": claim.id, "kind": doc.kind, "filename": doc.filename, "sha256": doc.sha256})
    if upload.mapping:  # how the export's columns were read (issue 13), kept beside it
        content = upload.mapping.encode()
        session.add(Document(claim_id=claim.id, kind="payroll_mapping", filename=mapping_name(doc.id), media_type="application/json",
                             sha256=hashlib.sha256(content).hexdigest(), size=len(content), content=content, uploaded_by=who.id,
                             description="the columns of the payroll table, as the preparer mapped them"))
        session.flush()
    return doc.id


def mapping_name(payroll_document_id: int) -> str:
    return f"payroll-{payroll_document_id}-mapping.json"


def last_mapping(session: Session, who: Principal, ein: str) -> str:
    """The column mapping last used for a payroll export of the taxpayer ``ein`` (that ``who``
    may see), remembered for the next upload; empty when none."""
    stmt = visible(select(Document.content).join(Claim, Claim.id == Document.claim_id).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id)
                   .where(Taxpayer.ein == ein, Document.kind == "payroll_mapping"), who)
    found = session.execute(stmt.order_by(Document.id.desc()).limit(1)).scalar_one_or_none()
    return found.decode() if found else ""


def _revision(session: Session, who: Principal, claim: Claim, share: taxreturn.Share, reason: str, payroll_id: int | None) -> Revision:
    if share.rewritten:
        reason += f" (with the return's {' and '.join(share.rewritten)}: RULES.md L6, one return for the taxpayer's locations)"
    rev = _insert(session, Revision(claim_id=claim.id, number=claim.revision, document=share.evaluation.document,
                                    payroll_document_id=payroll_id, determination=share.determination_json, reason=reason,
                                    author_id=who.id))
    ledger.store(session, claim, rev, share.result)
    return rev


def _settle_return(session: Session, who: Principal, tp: Taxpayer, cause: Claim | None, ev: Evaluation | None,
                   after: str, fresh: bool = False) -> taxreturn.Share | None:
    """L6: decide the taxpayer's return, its current location claims together (each holding the
    credit window; not denied, not a retired duplicate), ``cause`` with its new evaluation ``ev``.
    Every other claim whose share changed gets a new revision, its reason and an audit event;
    ``cause``'s share is returned for its own revision (alone, if it is not in the return).
    ``fresh``: ``cause`` is the first claim of a taxpayer registered in this transaction."""
    if fresh:
        return taxreturn.Share(cause.id, ev, ev.determination_json, (), ev.figures)
    rows = session.execute(select(Claim).where(
        Claim.taxpayer_id == tp.id, Claim.duplicate_of.is_(None), Claim.year_one_start.is_not(None), Claim.state != "denied",
    ).order_by(Claim.id).with_for_update()).scalars().all()
    members, stored = [], {}
    for c in rows:
        if cause is not None and c.id == cause.id:
            members.append(taxreturn.Member(c.id, ev))
            continue
        stored[c.id] = rev = current_revision(session, c)
        members.append(taxreturn.Member(c.id, evaluate(rev.document, payroll_of(session, rev))))
    shares = taxreturn.decide(members, cause.id if cause is not None else None)
    for c in rows:
        rev = stored.get(c.id)
        share = shares[c.id]
        if rev is None or (share.determination_json == rev.determination and share.evaluation.document == rev.document):
            continue
        before = snapshot(c)
        c.revision += 1
        c.updated_at = now()
        reason = f"recomputed as one return with the taxpayer's other location claims after {after} (RULES.md L6)"
        state = workflow.state_after_recompute(c.state)
        if state != c.state:
            reason += (f"; the approval of revision {rev.number} does not cover these figures: "
                       "back to the examiner for review (its refund is certified only once approved again)")
            c.state = state
        _revision(session, who, c, share, reason, rev.payroll_document_id)
        record(session, who, "claim.recompute", "claim", c.id, before, snapshot(c, share.result) | {"reason": reason})
    if cause is None or cause.id not in shares:
        return None if ev is None else taxreturn.Share(cause.id, ev, ev.determination_json, (), ev.figures)
    return shares[cause.id]


class Filed(NamedTuple):
    """A claim just filed, its taxpayer and its stored determination: its figures as JSON values
    (the trace, B1, perhaps left out) and the text stored."""

    claim: Claim
    taxpayer: Taxpayer
    determination: dict
    determination_json: str


def settle(session: Session, who: Principal, tp: Taxpayer, after: str) -> None:
    """Decide ``tp``'s current location claims again as one return (L6), recording a revision for
    each claim whose share changed (claims stored before the office decided returns, migration 0004)."""
    _lock(session, tp)
    _settle_return(session, who, tp, None, None, after)


def create(session: Session, who: Principal, ev: Evaluation, submit: bool) -> Claim:
    """File a new claim (a draft, or submitted at once)."""
    return file(session, who, ev, submit).claim


def file(session: Session, who: Principal, ev: Evaluation, submit: bool) -> Filed:
    """``create``, also handing back what its answer shows, so that nothing is read back."""
    require(who, "preparer")
    tp, fresh = _taxpayer(session, who, ev)
    loc = _location(session, who, tp, ev, fresh)
    start = ev.year_one_start
    if not fresh:
        _refuse_second_filing(session, tp, loc, start)
    _claim_window(session, who, tp, start, fresh=fresh)
    claim = _insert(session, Claim(taxpayer_id=tp.id, location_id=loc.id, year_one_start=start,
                                   state="submitted" if submit else "draft", revision=1, created_by=who.id))
    share = _settle_return(session, who, tp, claim, ev, f"claim {claim.id} was filed", fresh)
    _revision(session, who, claim, share, "filed", _payroll_document(session, who, claim, ev.payroll))
    record(session, who, "claim.create", "claim", claim.id, None, snapshot(claim, share.result))
    return Filed(claim, tp, share.result, share.determination_json)


def approved_revision(session: Session, claim: Claim) -> int | None:
    """The number of the revision the examiner's latest decision approved or adjusted (None: none)."""
    return session.execute(select(Revision.number).join(Decision, Decision.revision_id == Revision.id).where(
        Decision.claim_id == claim.id, Decision.outcome.in_(("approved", "adjusted"))).order_by(Decision.id.desc()).limit(1)).scalar_one_or_none()


def current_revision(session: Session, claim: Claim) -> Revision:
    return session.execute(select(Revision).where(
        Revision.claim_id == claim.id, Revision.number == claim.revision)).scalar_one()


def payroll_of(session: Session, revision: Revision) -> Upload | None:
    if revision.payroll_document_id is None:
        return None
    doc = session.get(Document, revision.payroll_document_id)
    mapping = session.execute(select(Document.content).where(
        Document.claim_id == doc.claim_id, Document.kind == "payroll_mapping", Document.filename == mapping_name(doc.id))).scalar_one_or_none()
    return Upload(doc.filename, doc.media_type, doc.content, mapping.decode() if mapping else "")


def amend(session: Session, who: Principal, claim_id: int, ev: Evaluation, reason: str, *,
          base_revision: int | None = None, reuse_payroll_id: int | None = None) -> Claim:
    """A new revision: the claim recomputed from an amended document (a past period corrected, next
    year's return added, or the examiner's adjustment). Earlier revisions and their ledger stay.
    ``base_revision``: the revision the amendment was made from; refused if the claim moved on."""
    require(who, "preparer", "examiner")
    claim, tp = _changeable(session, who, claim_id)
    if ev.header.taxpayer.id != tp.ein:
        raise ApiError(422, "an amendment keeps the claim's taxpayer",
                       [("taxpayer.id", f"is {ev.header.taxpayer.id!r}; this claim is taxpayer {tp.ein!r}'s")])
    if base_revision is not None and base_revision != claim.revision:
        raise ApiError(409, "the claim changed meanwhile; amend its newest revision",
                       [("revision", f"amended revision {base_revision}, the claim is at {claim.revision}")])
    before = snapshot(claim)
    claim.state = workflow.state_after_amendment(claim.state, who.role)
    loc = _location(session, who, tp, ev)
    _refuse_second_filing(session, tp, loc, ev.year_one_start, claim)
    _claim_window(session, who, tp, ev.year_one_start, claim)
    claim.location_id = loc.id
    claim.revision += 1
    claim.updated_at = now()
    payroll_id = reuse_payroll_id if reuse_payroll_id is not None else _payroll_document(session, who, claim, ev.payroll)
    share = _settle_return(session, who, tp, claim, ev, f"claim {claim.id} was amended")
    _revision(session, who, claim, share, reason, payroll_id)
    record(session, who, "claim.amend", "claim", claim.id, before, snapshot(claim, share.result) | {"reason": reason})
    return claim


def move(session: Session, who: Principal, claim_id: int, action: str) -> Claim:
    """submit, start_review: a step of the workflow with no decision attached."""
    claim, _tp = _changeable(session, who, claim_id)
    before = snapshot(claim)
    claim.state = workflow.next_state(claim.state, action, who.role)
    claim.updated_at = now()
    record(session, who, f"claim.{action}", "claim", claim.id, before, snapshot(claim))
    return claim


def decide(session: Session, who: Principal, claim_id: int, outcome: str, reasons: list[dict]) -> Claim:
    """The examiner's outcome, approved, adjusted or denied, with reasons citing rule ids."""
    claim, tp = _changeable(session, who, claim_id)
    action = {"approved": "approve", "adjusted": "adjust", "denied": "deny"}[outcome]
    before = snapshot(claim)
    claim.state = workflow.next_state(claim.state, action, who.role)
    check_reasons(outcome, reasons)
    rev = current_revision(session, claim)
    if outcome == "adjusted" and rev.author_id != who.id:
        raise ApiError(409, "an adjustment decides a revision the examiner made: amend the claim first",
                       [("outcome", "the current revision is the preparer's; amend it, or approve or deny it")])
    session.add(Decision(claim_id=claim.id, revision_id=rev.id, outcome=outcome, reasons=json.dumps(reasons), examiner_id=who.id))
    claim.updated_at = now()
    record(session, who, f"claim.{action}", "claim", claim.id, before, snapshot(claim) | {"reasons": reasons})
    if outcome == "denied":  # a denied claim leaves the return: the others' shares grow back
        _settle_return(session, who, tp, None, None, f"claim {claim.id} was denied")
    return claim


def certify_refund(session: Session, who: Principal, claim_id: int) -> Claim:
    """R1 (52:27BBB-55(c)(2)): certify the refundable part of the year-one credit as an overpayment
    for the period in which credit year two ends."""
    claim, _tp = _changeable(session, who, claim_id)
    before = snapshot(claim)
    claim.state = workflow.next_state(claim.state, "certify_refund", who.role)
    rev = current_revision(session, claim)
    approved = approved_revision(session, claim)
    if approved != rev.number:
        raise ApiError(409, f"revision {rev.number} of claim {claim.id} is not the one approved: review it first", [(
            "revision", f"the examiner's decision covers revision {approved}; the claim is at revision {rev.number} "
                        "(recomputed as one return with the taxpayer's other locations, L6): start the review and decide again")])
    result = exact_json.loads_stored(rev.determination)
    refunds = [p for p in result.get("periods") or [] if p.get("refund") and Decimal(p["refund"]) > 0]
    if not refunds:
        raise ApiError(409, "this claim has no refundable part to certify (R1)",
                       [("determination.refund", f"is {result.get('refund')}")])
    certified = {c.period_start: c.amount for c in session.execute(
        select(RefundCertification).where(RefundCertification.claim_id == claim.id)).scalars()}
    for p in refunds:
        start, amount = date.fromisoformat(p["start"]), Decimal(p["refund"])
        if start in certified:
            if certified[start] != amount:
                raise ApiError(409, "a refund was already certified for this period with another amount", [(
                    "determination.refund",
                    f"{certified[start]} was certified for the period starting {start}; the current revision says {amount}: "
                    "the difference is settled outside this claim (an assessment or a further overpayment)")])
            continue
        session.add(RefundCertification(
            taxpayer_id=claim.taxpayer_id, claim_id=claim.id, revision_id=rev.id, period_start=start,
            period_end=date.fromisoformat(p["end"]), amount=amount, examiner_id=who.id))
    claim.updated_at = now()
    session.flush()
    record(session, who, "claim.certify_refund", "claim", claim.id, before,
           snapshot(claim) | {"refunds": [{"period_start": p["start"], "amount": p["refund"]} for p in refunds]})
    return claim
