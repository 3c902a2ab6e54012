"""A claim's documents and the examiner's evidence requests (B1, B2) on the pages: the list (each
document with the figures it supports, its SHA-256 and a download), the upload form, and the
examiner's request for evidence of a figure. Writes go through ``service.evidence``; the rows are
the API's own (``GET /claims/{id}/documents``, ``.../evidence-requests``)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy import select

from ...service import evidence
from ...service.access import claim_for
from ...service.api.evidence import _document_out, _request_out, _visible_document
from ...service.api.schemas import EvidenceRequestIn
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.evaluate import Upload, check_upload_names
from ...service.models import Document, EvidenceRequest
from ...service.rules import RULE_IDS
from . import drill
from .guard import check_csrf, viewer
from .load import load_claim
from .render import env, page, refusal
from .upload import _upload

router = APIRouter(include_in_schema=False)

KIND_LABELS = {"payroll_register": "Payroll register", "payroll_table": "Payroll table (the claim's)", "lease": "Lease",
               "certificate": "Certificate", "certificate_of_occupancy": "Certificate of occupancy", "return": "Tax return",
               "worksheet": "Worksheet", "other": "Other"}


def _listing(db, who: Principal, claim_id: int) -> tuple[list[dict], list[dict]]:
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        docs = session.execute(select(Document).where(Document.claim_id == claim.id).order_by(Document.id)).scalars().all()
        reqs = session.execute(select(EvidenceRequest).where(EvidenceRequest.claim_id == claim.id)
                               .order_by(EvidenceRequest.id)).scalars().all()
        return [_document_out(session, d) for d in docs], [_request_out(session, r) for r in reqs]


def _documents_page(request: Request, who: Principal, claim_id: int, status: int = 200, form_error: dict | None = None):
    db = request.app.state.db
    view = load_claim(db, who, claim_id)
    documents, requests = _listing(db, who, claim_id)
    figures = sorted((name for name in drill.explained(view.det) if not name.startswith("employee")), key=_first_asked)
    return page(request, "documents.html", who, status=status, view=view, det=view.det, documents=documents, requests=requests,
                open_requests=[r for r in requests if r["answered_by_document_id"] is None], figures=figures,
                kinds=[k for k in evidence.KINDS if k != "payroll_table"], kind_labels=KIND_LABELS, rule_ids=RULE_IDS,
                label=lambda figure: figure_label(figure, view.det), form_error=form_error or {})


#: the figures a document most often supports, offered first
ASKED = ("credit.", "new_positions.", "average_positions.", "sustained_effort_ratio", "refund", "carried_forward")


def _first_asked(name: str) -> tuple[int, str]:
    return next((i for i, prefix in enumerate(ASKED) if name.startswith(prefix)), len(ASKED)), name


def figure_label(figure: str, det: dict) -> str:
    """A figure's name as a preparer reads it: "credit.year_one" is "Credit, year one",
    "periods[1].applied" is "Period from 2004-01-01, applied", "employee:E001" is "Employee E001"."""
    if figure.startswith("employee:"):
        return f"Employee {figure[len('employee:'):]}"
    m = re.fullmatch(r"periods\[(\d+)\]\.(\w+)", figure)
    periods = det.get("periods") or []
    if m and int(m[1]) < len(periods):
        return f"Period from {periods[int(m[1])]['start']}, {m[2].replace('_', ' ')}"
    return figure.replace(".", ", ").replace("_", " ").capitalize()


env.globals["figure_label"] = figure_label  # the claim page's evidence request names figures so too


@router.get("/claims/{claim_id:int}/documents")
def documents_page(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    try:
        return _documents_page(request, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back="/claims")


def _cites(form) -> list[str]:
    """The figures ticked, and those typed (comma-separated), once each in order."""
    typed = [c.strip() for c in str(form.get("cites_typed") or "").split(",") if c.strip()]
    return list(dict.fromkeys([str(v) for v in form.getlist("cites") if str(v)] + typed))


@router.post("/claims/{claim_id:int}/documents")
async def add_document(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    form = await request.form(max_part_size=request.app.state.settings.upload_limit)
    db = request.app.state.db
    try:
        check_csrf(request, form)
        upload: Upload | None = await _upload(form, "file")
        if upload is None:
            raise ApiError(422, "choose the document's file", [("file", "choose a file to upload")])
        check_upload_names(upload, "file")
        kind, description = str(form.get("kind") or ""), str(form.get("description") or "").strip()
        cites = _cites(form)
        await run_in_threadpool(db.write, lambda s: evidence.attach(s, who, claim_id, upload, kind, description, cites))
    except ApiError as e:
        if e.status == 422:
            return _documents_page(request, who, claim_id, 422, {"upload": e})
        return refusal(request, who, e, back=f"/claims/{claim_id}/documents")
    return RedirectResponse(f"/claims/{claim_id}/documents", status_code=303)


@router.post("/claims/{claim_id:int}/evidence-requests")
async def ask_for_evidence(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    """The examiner asks for evidence of a figure, citing a rule (``EvidenceRequestIn``, as the API)."""
    form = await request.form()
    db = request.app.state.db
    try:
        check_csrf(request, form)
        try:
            body = EvidenceRequestIn(figure=str(form.get("figure") or "").strip(), rule=str(form.get("rule") or "B1"),
                                     message=str(form.get("message") or "").strip())
        except ValidationError as e:
            raise ApiError(422, "the request needs a figure and a rule",
                           [(str(err["loc"][0]), err["msg"]) for err in e.errors()]) from None
        await run_in_threadpool(db.write, lambda s: evidence.request_evidence(s, who, claim_id, body.figure, body.rule, body.message))
    except ApiError as e:
        if e.status == 422:
            return _documents_page(request, who, claim_id, 422, {"request": e})
        return refusal(request, who, e, back=f"/claims/{claim_id}/documents")
    return RedirectResponse(f"/claims/{claim_id}/documents", status_code=303)


@router.get("/documents/{document_id:int}/download")
def download(request: Request, document_id: int, who: Principal = Depends(viewer)):
    """The document as uploaded, under its own file name; its SHA-256 in the ETag."""
    with request.app.state.db.read() as session:
        try:
            doc = _visible_document(session, who, document_id)
        except ApiError as e:
            return refusal(request, who, e, back="/claims")
        return Response(doc.content, media_type=doc.media_type or "application/octet-stream",
                        headers={"ETag": f'"{doc.sha256}"', "content-disposition": evidence.attachment(doc.filename, doc.id),
                                 "cache-control": "no-store", "x-content-type-options": "nosniff"})
