"""Documents attached to claims (evidence, B1/B2) and the examiner's requests for evidence."""

from __future__ import annotations

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from sqlalchemy import select

from .. import evidence, exact_json, idempotency
from ..access import claim_for
from ..auth import Principal
from ..db import Database
from ..errors import ApiError, not_found
from ..evaluate import Upload, check_upload_names
from ..models import Citation, Document, EvidenceRequest, User
from .deps import IDEMPOTENCY_KEY, database, principal
from .responses import COMMON, WRITE, ExactJSONResponse, RecordId
from .schemas import PLAIN, DocumentOut, EvidenceRequestIn, EvidenceRequestOut

router = APIRouter(tags=["evidence"])


def _document_out(session, doc: Document) -> dict:
    cites = session.execute(select(Citation.figure).where(Citation.document_id == doc.id).order_by(Citation.id)).scalars().all()
    return {"id": doc.id, "claim_id": doc.claim_id, "kind": doc.kind, "filename": doc.filename, "media_type": doc.media_type,
            "sha256": doc.sha256, "size": doc.size, "description": doc.description, "cites": list(cites),
            "uploaded_by": session.get(User, doc.uploaded_by).username, "created_at": doc.created_at.isoformat()}


def _visible_document(session, who: Principal, document_id: RecordId) -> Document:
    doc = session.get(Document, document_id)
    if doc is None:
        raise not_found("document", document_id)
    try:
        claim_for(session, who, doc.claim_id)
    except ApiError:
        raise not_found("document", document_id) from None
    return doc


@router.post("/claims/{claim_id}/documents", status_code=201, response_model=DocumentOut, responses=WRITE)
async def attach_document(request: Request, claim_id: RecordId, file: UploadFile = File(..., description="the document"),
                          kind: str = Form(..., max_length=40, pattern=PLAIN, description="payroll_register, lease, certificate, ..."),
                          description: str = Form("", max_length=4000, pattern=PLAIN),
                          cites: list[str] = Form([], description="figures this document supports, e.g. credit.year_one"),
                          idempotency_key: str | None = IDEMPOTENCY_KEY, who: Principal = Depends(principal), db: Database = Depends(database)):
    """Attach evidence to a claim; stored whole with its SHA-256, citing the figures it supports."""
    upload = Upload(file.filename or "document", file.content_type or "application/octet-stream", await file.read())
    check_upload_names(upload, "file")
    figures = [c.strip() for item in cites for c in item.split(",") if c.strip()]
    key = idempotency.key_of(idempotency_key)
    request_sha256 = idempotency.fingerprint(b"", upload, route=f"POST {request.url.path}", kind=kind, description=description,
                                             cites=",".join(figures)) if key else ""

    def work(session) -> idempotency.Answer:
        doc = evidence.attach(session, who, claim_id, upload, kind, description, figures)
        return idempotency.Answer(201, _document_out(session, doc), claim_id)

    return await run_in_threadpool(idempotency.once, db, who, key, request_sha256, work)


@router.get("/claims/{claim_id}/documents", response_model=list[DocumentOut], responses=COMMON)
def list_documents(claim_id: RecordId, figure: str | None = Query(None, max_length=200, pattern=PLAIN,
                                                                   description="only the documents citing this figure"),
                   who: Principal = Depends(principal), db: Database = Depends(database)):
    """The claim's documents, or those supporting one figure."""
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        stmt = select(Document).where(Document.claim_id == claim.id)
        if figure is not None:
            stmt = stmt.where(Document.id.in_(select(Citation.document_id).where(Citation.figure == figure)))
        docs = session.execute(stmt.order_by(Document.id)).scalars().all()
        return ExactJSONResponse([_document_out(session, d) for d in docs])


@router.get("/documents/{document_id}", response_model=DocumentOut, responses=COMMON)
def get_document(document_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        return ExactJSONResponse(_document_out(session, _visible_document(session, who, document_id)))


@router.get("/documents/{document_id}/content", responses={**COMMON, 200: {"content": {"application/octet-stream": {}},
            "description": "the document as uploaded; its SHA-256 in the ETag"}})
def get_document_content(document_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        doc = _visible_document(session, who, document_id)
        return Response(doc.content, media_type=doc.media_type or "application/octet-stream",
                        headers={"ETag": f'"{doc.sha256}"', "Content-Disposition": evidence.attachment(doc.filename, doc.id)})


def _request_out(session, req: EvidenceRequest) -> dict:
    return {"id": req.id, "claim_id": req.claim_id, "figure": req.figure, "rule": req.rule, "message": req.message,
            "requested_by": session.get(User, req.requested_by).username,
            "answered_by_document_id": req.answered_by_document_id, "created_at": req.created_at.isoformat()}


@router.post("/claims/{claim_id}/evidence-requests", status_code=201, response_model=EvidenceRequestOut, responses=WRITE)
def request_evidence(request: Request, claim_id: RecordId, body: EvidenceRequestIn, idempotency_key: str | None = IDEMPOTENCY_KEY,
                     who: Principal = Depends(principal), db: Database = Depends(database)):
    """The examiner asks for evidence of a figure (B1); a document citing it answers the request."""
    key = idempotency.key_of(idempotency_key)
    request_sha256 = idempotency.fingerprint(exact_json.dumps(body.model_dump(mode="json")).encode(), None,
                                             route=f"POST {request.url.path}") if key else ""

    def work(session) -> idempotency.Answer:
        req = evidence.request_evidence(session, who, claim_id, body.figure, body.rule, body.message)
        return idempotency.Answer(201, _request_out(session, req), claim_id)

    return idempotency.once(db, who, key, request_sha256, work)


@router.get("/claims/{claim_id}/evidence-requests", response_model=list[EvidenceRequestOut], responses=COMMON)
def list_evidence_requests(claim_id: RecordId, who: Principal = Depends(principal), db: Database = Depends(database)):
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        rows = session.execute(select(EvidenceRequest).where(EvidenceRequest.claim_id == claim.id)
                               .order_by(EvidenceRequest.id)).scalars().all()
        return ExactJSONResponse([_request_out(session, r) for r in rows])
