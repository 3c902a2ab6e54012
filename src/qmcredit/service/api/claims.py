"""Claims: filing, reading, amending (whole document or one period), Form 313 figures, revisions,
and the workflow steps (submit, review, decision, refund certification)."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from sqlalchemy import select
from starlette.datastructures import UploadFile

from qmcredit import ClaimError, Problem

from .. import claims, exact_json, idempotency, taxreturn
from ..access import claim_for, require, visible
from ..auth import Principal
from ..db import Database
from ..errors import ApiError
from ..evaluate import Evaluation, Upload, evaluate, form313_figures, names_a_table, to_store
from ..limits import parsed_body
from ..models import Citation, Claim, Document, Revision, Taxpayer, User
from .deps import IDEMPOTENCY_KEY, database, principal
from .responses import COMMON, MAX_ID, WRITE, ExactJSONResponse, RecordId
from .schemas import PLAIN, ClaimOut, ClaimSummary, DecisionIn, RevisionOut, claim_request_body, period_request_body

router = APIRouter(prefix="/claims", tags=["claims"])


async def read_submission(request: Request) -> tuple[bytes, Upload | None]:
    """The claim document (raw bytes, parsed later with exact numbers) and its payroll upload, from
    a JSON body or a multipart form with fields ``claim`` and ``payroll``."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype in ("", "application/json") or ctype.endswith("+json"):
        return await request.body(), None
    if ctype not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise ApiError(415, "send the claim as application/json, or as multipart/form-data with a payroll table",
                       [("header.content-type", f"{ctype!r} is not accepted")])
    form = await request.form(max_files=2, max_fields=4)
    unknown = [k for k in form.keys() if k not in ("claim", "payroll", "mapping")]
    if unknown:
        raise ApiError(422, "unknown form fields", [(f"form.{k}", "unknown field; send claim, payroll and its column mapping") for k in unknown])
    claim = form.get("claim")
    if claim is None:
        raise ApiError(422, "the claim document is missing", [("form.claim", "is required")])
    document = await claim.read() if isinstance(claim, UploadFile) else str(claim).encode("utf-8")
    payroll = form.get("payroll")
    if payroll is not None and not isinstance(payroll, UploadFile):
        raise ApiError(422, "the payroll must be a file", [("form.payroll", "send the table as a file part with its name")])
    upload = None
    if payroll is not None:
        mapping = form.get("mapping")  # the payroll export's column mapping, as JSON (docs/payroll.md)
        mapping = (await mapping.read()).decode("utf-8", errors="replace") if isinstance(mapping, UploadFile) else str(mapping or "")
        upload = Upload(payroll.filename or "payroll", payroll.content_type or "application/octet-stream", await payroll.read(), mapping)
    return document, upload


def claim_out(session, claim: Claim, explain: bool = False) -> dict:
    tp = session.get(Taxpayer, claim.taxpayer_id)
    rev = claims.current_revision(session, claim)
    cited: dict[str, list[int]] = {}
    for figure, document_id in session.execute(
            select(Citation.figure, Citation.document_id).join(Document, Document.id == Citation.document_id)
            .where(Document.claim_id == claim.id).order_by(Citation.id)):
        cited.setdefault(figure, []).append(document_id)
    return claim_view(claim, tp, exact_json.loads_stored(rev.determination), cited, explain, claims.approved_revision(session, claim))


def claim_view(claim: Claim, tp: Taxpayer, det: dict, cited: dict[str, list[int]], explain: bool = False,
               approved_revision: int | None = None) -> dict:
    """The claim as the API shows it, with its current determination ``det`` (the trace only with
    ``explain``) and the revision the examiner last approved."""
    if not explain:
        det = {k: v for k, v in det.items() if k != "explanation"}
    return {"id": claim.id, "taxpayer_id": tp.id, "taxpayer_ein": tp.ein, "location_id": claim.location_id,
            "state": claim.state, "revision": claim.revision, "approved_revision": approved_revision, "duplicate_of": claim.duplicate_of,
            "year_one_start": claim.year_one_start.isoformat() if claim.year_one_start else None,
            "created_at": claim.created_at.isoformat(), "updated_at": claim.updated_at.isoformat(),
            "evidence": cited, "determination": det}


def filed_view(filed: claims.Filed, explain: bool) -> dict:
    """A claim just filed, from what was stored (a new claim's documents cite no figure yet);
    with its trace, read from the text stored, as reading the claim gives it."""
    det = exact_json.loads_stored(filed.determination_json) if explain else filed.determination
    return claim_view(filed.claim, filed.taxpayer, det, {}, explain)


EXPLAIN = Query(False, description="include the explanation trace (B1), down to each employee-month")


def _route(request: Request) -> str:
    """The route a key's request was sent to, part of its fingerprint."""
    return f"{request.method} {request.url.path}"


def _claim_answer(session, claim_id: int, status: int = 200) -> idempotency.Answer:
    return idempotency.Answer(status, claim_out(session, session.get(Claim, claim_id)), claim_id)


@router.post("", status_code=201, response_model=ClaimOut, responses=WRITE,
             openapi_extra=claim_request_body("a claim document; with multipart, its payroll table too"))
async def file_claim(request: Request, submit: bool = Query(False, description="submit at once instead of keeping a draft"),
                     explain: bool = EXPLAIN, idempotency_key: str | None = IDEMPOTENCY_KEY,
                     who: Principal = Depends(principal), db: Database = Depends(database)):
    """File a claim: it is decided at once and stored with its determination. A second filing for
    the taxpayer's location and credit period is refused (409, naming the claim to amend). With an
    ``Idempotency-Key`` header, a retry of the same request gets the first answer again."""
    require(who, "preparer")
    key = idempotency.key_of(idempotency_key)
    document, upload = await read_submission(request)
    parsed = parsed_body(request.scope, document) if upload is None else None
    request_sha256 = idempotency.fingerprint(document, upload, submit=submit, explain=explain) if key else ""

    def decide_and_file() -> Response:
        """The filing in one worker thread: the answer kept for its key, else decided and stored."""
        if key is not None and (kept := idempotency.stored(db, who, key, request_sha256)) is not None:
            return idempotency.replay(kept, replayed=True)
        ev = to_store(document, upload, parsed)

        def file(session) -> idempotency.Answer:
            filed = claims.file(session, who, ev, submit)
            return idempotency.Answer(201, filed_view(filed, explain), filed.claim.id)

        return idempotency.once(db, who, key, request_sha256, file)

    return await run_in_threadpool(decide_and_file)


@router.get("", response_model=list[ClaimSummary], responses=COMMON)
def list_claims(state: str | None = Query(None, max_length=20, pattern=PLAIN), taxpayer_id: int | None = Query(None, ge=1, le=MAX_ID),
                limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_ID),
                who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        stmt = visible(select(Claim, Taxpayer).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id), who)
        if state is not None:
            stmt = stmt.where(Claim.state == state)
        if taxpayer_id is not None:
            stmt = stmt.where(Claim.taxpayer_id == taxpayer_id)
        rows = session.execute(stmt.order_by(Claim.id).limit(limit).offset(offset)).all()
        return ExactJSONResponse([{
            "id": c.id, "taxpayer_id": t.id, "taxpayer_ein": t.ein, "location_id": c.location_id, "state": c.state,
            "revision": c.revision, "year_one_start": c.year_one_start.isoformat() if c.year_one_start else None,
            "updated_at": c.updated_at.isoformat()} for c, t in rows])


@router.get("/{claim_id}", response_model=ClaimOut, responses=COMMON)
def get_claim(claim_id: RecordId, explain: bool = EXPLAIN, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        return ExactJSONResponse(claim_out(session, claim, explain))


@router.get("/{claim_id}/determination", responses=COMMON,
            response_model=dict, response_description="the determination JSON, as `qmcredit compute --json` prints it")
def get_determination(claim_id: RecordId, explain: bool = Query(True, description="include the explanation trace (B1)"),
                      who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        det = exact_json.loads_stored(claims.current_revision(session, claim).determination)
    if not explain:
        det.pop("explanation", None)
    return ExactJSONResponse(det)


def _stored(db: Database, who: Principal, claim_id: int, number: int | None = None) -> tuple[Revision, Upload | None]:
    """A revision of a claim ``who`` may see (the current one by default) and its payroll upload."""
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        rev = session.execute(select(Revision).where(
            Revision.claim_id == claim.id, Revision.number == (number or claim.revision))).scalar_one_or_none()
        if rev is None:
            raise ApiError(404, f"claim {claim_id} has no revision {number}", [("number", f"claim has revisions 1..{claim.revision}")])
        return rev, claims.payroll_of(session, rev)


def _stored_evaluation(db: Database, who: Principal, claim_id: int) -> Evaluation:
    rev, payroll = _stored(db, who, claim_id)
    return evaluate(rev.document, payroll)


def _form313(db: Database, who: Principal, claim_id: int) -> tuple[Evaluation, list[dict]]:
    """The claim's Form 313 figures; a claim in a return of several locations (L6) gets its
    location's under the shared room, line 16 listing the other locations' credit."""
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        det = exact_json.loads(claims.current_revision(session, claim).determination)
        ids = [int(i) for i in (det.get("return") or {}).get("claims") or [claim.id]]  # JSON numbers are read as Decimal
        revs = [claims.current_revision(session, session.get(Claim, i)) for i in ids]
        stored = [(i, rev.document, claims.payroll_of(session, rev)) for i, rev in zip(ids, revs)]
    members = [taxreturn.Member(i, evaluate(document, payroll)) for i, document, payroll in stored]
    mine = next(m.evaluation for m in members if m.claim_id == claim_id)
    return mine, taxreturn.form313(members, claim_id) if len(members) > 1 else form313_figures(mine)


@router.get("/{claim_id}/form313", response_model=list[dict], responses=COMMON)
def get_form313(claim_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Form 313 figures (Parts I-V), one entry per privilege or reporting period."""
    return ExactJSONResponse(_form313(db, who, claim_id)[1])


@router.get("/{claim_id}/form313/{period_start}", response_model=dict, responses=COMMON)
def get_form313_period(claim_id: RecordId, period_start: date, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Form 313 figures of the period that starts on ``period_start``."""
    ev, figures = _form313(db, who, claim_id)
    starts = [p.start for p in ev.header.periods]
    if period_start not in starts:
        raise ApiError(404, f"the claim has no period starting {period_start}",
                       [("period_start", f"periods start on {', '.join(d.isoformat() for d in starts) or 'no day'}")])
    return ExactJSONResponse(figures[starts.index(period_start)])


@router.get("/{claim_id}/revisions", response_model=list[RevisionOut], responses=COMMON)
def list_revisions(claim_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    """The claim's history: every revision with its author and reason (amendments keep the past)."""
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        rows = session.execute(select(Revision, User.username).join(User, User.id == Revision.author_id)
                               .where(Revision.claim_id == claim.id).order_by(Revision.number)).all()
        return ExactJSONResponse([_revision_out(r, author) for r, author in rows])


def _revision_out(r: Revision, author: str, full: bool = False) -> dict:
    out = {"number": r.number, "reason": r.reason, "author": author, "created_at": r.created_at.isoformat(),
           "payroll_document_id": r.payroll_document_id}
    if full:
        out["document"] = exact_json.loads_stored(r.document)
        out["determination"] = exact_json.loads_stored(r.determination)
    return out


@router.get("/{claim_id}/revisions/{number}", response_model=RevisionOut, responses=COMMON)
def get_revision(claim_id: RecordId, number: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        row = session.execute(select(Revision, User.username).join(User, User.id == Revision.author_id)
                              .where(Revision.claim_id == claim.id, Revision.number == number)).first()
        if row is None:
            raise ApiError(404, f"claim {claim_id} has no revision {number}", [("number", f"claim has revisions 1..{claim.revision}")])
        return ExactJSONResponse(_revision_out(row[0], row[1], full=True))


@router.put("/{claim_id}", response_model=ClaimOut, responses=WRITE,
            openapi_extra=claim_request_body("the amended claim document; a header naming a payroll table keeps the claim's table unless a new one is sent"))
async def amend_claim(request: Request, claim_id: RecordId,
                      reason: str = Query("amended", max_length=2000, pattern=PLAIN, description="why the claim is amended"),
                      revision: int | None = Query(None, ge=1, le=MAX_ID, description="the revision amended; refused (409) if the claim moved on"),
                      idempotency_key: str | None = IDEMPOTENCY_KEY, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Amend the whole claim: a new revision, recomputed; earlier revisions stay in the history."""
    require(who, "preparer", "examiner")
    key = idempotency.key_of(idempotency_key)
    document, upload = await read_submission(request)
    request_sha256 = idempotency.fingerprint(document, upload, route=_route(request), reason=reason, revision=revision) if key else ""
    if key is not None and (kept := await run_in_threadpool(idempotency.stored, db, who, key, request_sha256)) is not None:
        return idempotency.replay(kept, replayed=True)
    reuse = None
    if upload is None and names_a_table(document):  # the amended header keeps the claim's payroll table
        rev, upload = await run_in_threadpool(_stored, db, who, claim_id)
        reuse = rev.payroll_document_id
        revision = revision or rev.number
    parsed = parsed_body(request.scope, document) if reuse is None and upload is None else None
    ev = await run_in_threadpool(to_store, document, upload, parsed)

    def work(session) -> idempotency.Answer:
        claims.amend(session, who, claim_id, ev, reason, base_revision=revision, reuse_payroll_id=reuse)
        return _claim_answer(session, claim_id)

    return await run_in_threadpool(idempotency.once, db, who, key, request_sha256, work)


async def _amend_periods(request: Request, claim_id: int, who: Principal, db: Database, change, reason: str, idempotency_key: str | None):
    require(who, "preparer", "examiner")
    key = idempotency.key_of(idempotency_key)
    body = await request.body()
    request_sha256 = idempotency.fingerprint(body, None, route=_route(request)) if key else ""
    if key is not None and (kept := await run_in_threadpool(idempotency.stored, db, who, key, request_sha256)) is not None:
        return idempotency.replay(kept, replayed=True)
    try:
        period = exact_json.loads(body)
    except ClaimError as e:
        raise ClaimError([Problem(f"period {p.location}", p.message) for p in e.problems]) from None
    if not isinstance(period, dict):
        raise ClaimError([Problem("period", "must be a JSON object with start, end and liability")])
    rev, upload = await run_in_threadpool(_stored, db, who, claim_id)
    doc = exact_json.loads_stored(rev.document)
    doc["periods"] = change(list(doc.get("periods") or []), period)
    ev = await run_in_threadpool(to_store, exact_json.dumps(doc), upload)

    def work(session) -> idempotency.Answer:
        claims.amend(session, who, claim_id, ev, reason, base_revision=rev.number, reuse_payroll_id=rev.payroll_document_id)
        return _claim_answer(session, claim_id)

    return await run_in_threadpool(idempotency.once, db, who, key, request_sha256, work)


@router.post("/{claim_id}/periods", response_model=ClaimOut, responses=WRITE, openapi_extra=period_request_body())
async def add_period(request: Request, claim_id: RecordId, idempotency_key: str | None = IDEMPOTENCY_KEY,
                     who: Principal = Depends(principal), db: Database = Depends(database)):
    """File the next return: add the period that follows the last one (the carryforward goes on)."""
    def append(periods: list, period: dict) -> list:
        return periods + [period]
    return await _amend_periods(request, claim_id, who, db, append, "next period's return filed", idempotency_key)


@router.put("/{claim_id}/periods/{period_start}", response_model=ClaimOut, responses=WRITE, openapi_extra=period_request_body())
async def amend_period(request: Request, claim_id: RecordId, period_start: date, idempotency_key: str | None = IDEMPOTENCY_KEY,
                       who: Principal = Depends(principal), db: Database = Depends(database)):
    """Amend a past period: the periods after it are recomputed; the earlier figures stay in the history."""
    def replace(periods: list, period: dict) -> list:
        starts = [str(p.get("start")) for p in periods if isinstance(p, dict)]
        if period_start.isoformat() not in starts:
            raise ApiError(404, f"the claim has no period starting {period_start}",
                           [("period_start", f"periods start on {', '.join(starts) or 'no day'}")])
        return [period if isinstance(p, dict) and str(p.get("start")) == period_start.isoformat() else p for p in periods]
    return await _amend_periods(request, claim_id, who, db, replace, f"period {period_start} amended", idempotency_key)


def _step(request: Request, db: Database, who: Principal, claim_id: int, key: str | None, change, body: bytes = b"") -> Response:
    """A workflow step (``change(session)``), answered with the claim; with a key, at most once."""
    key = idempotency.key_of(key)
    request_sha256 = idempotency.fingerprint(body, None, route=_route(request)) if key else ""

    def work(session) -> idempotency.Answer:
        change(session)
        return _claim_answer(session, claim_id)

    return idempotency.once(db, who, key, request_sha256, work)


@router.post("/{claim_id}/submit", response_model=ClaimOut, responses=WRITE)
def submit_claim(request: Request, claim_id: RecordId, idempotency_key: str | None = IDEMPOTENCY_KEY,
                 who: Principal = Depends(principal), db: Database = Depends(database)):
    """draft → submitted (the preparer)."""
    return _step(request, db, who, claim_id, idempotency_key, lambda s: claims.move(s, who, claim_id, "submit"))


@router.post("/{claim_id}/review", response_model=ClaimOut, responses=WRITE)
def start_review(request: Request, claim_id: RecordId, idempotency_key: str | None = IDEMPOTENCY_KEY,
                 who: Principal = Depends(principal), db: Database = Depends(database)):
    """submitted → under_review (an examiner)."""
    return _step(request, db, who, claim_id, idempotency_key, lambda s: claims.move(s, who, claim_id, "start_review"))


@router.post("/{claim_id}/decision", response_model=ClaimOut, responses=WRITE)
def decide_claim(request: Request, claim_id: RecordId, body: DecisionIn, idempotency_key: str | None = IDEMPOTENCY_KEY,
                 who: Principal = Depends(principal), db: Database = Depends(database)):
    """under_review → approved, adjusted (after the examiner's amendment) or denied, with reasons citing rule ids."""
    reasons = [r.model_dump() for r in body.reasons]
    return _step(request, db, who, claim_id, idempotency_key, lambda s: claims.decide(s, who, claim_id, body.outcome, reasons),
                 exact_json.dumps({"outcome": body.outcome, "reasons": reasons}).encode())


@router.post("/{claim_id}/refund-certification", response_model=ClaimOut, responses=WRITE)
def certify_refund(request: Request, claim_id: RecordId, idempotency_key: str | None = IDEMPOTENCY_KEY,
                   who: Principal = Depends(principal), db: Database = Depends(database)):
    """approved or adjusted → refund_certified: the refundable part (R1) certified as an overpayment."""
    return _step(request, db, who, claim_id, idempotency_key, lambda s: claims.certify_refund(s, who, claim_id))
