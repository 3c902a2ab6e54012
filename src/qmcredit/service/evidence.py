"""Evidence (B1, B2): documents attached to a claim, kept whole with their SHA-256, each citing
the figures it supports; and the examiner's requests for evidence of a figure."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import exact_json
from .access import claim_for, require
from .audit import record
from .auth import Principal
from .errors import ApiError
from .evaluate import Upload
from .models import Citation, Claim, Document, EvidenceRequest, Revision

KINDS = ("payroll_register", "payroll_table", "lease", "certificate", "certificate_of_occupancy", "return", "worksheet", "other")
_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


#: Latin letters that Unicode does not decompose into a plain letter and a mark: their plain
#: spelling (``Łódź`` is ``Lodz``, not ``odz``).
_PLAIN_LETTERS = str.maketrans({"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ð": "D", "ð": "d", "Ħ": "H", "ħ": "h",
                                "ı": "i", "ß": "ss", "Æ": "AE", "æ": "ae", "Œ": "OE", "œ": "oe", "Þ": "Th", "þ": "th"})


def _ascii(text: str) -> str:
    """``text`` in plain ASCII a file name keeps: accents dropped, any other character ``_``."""
    plain = unicodedata.normalize("NFKD", text.translate(_PLAIN_LETTERS)).encode("ascii", "ignore").decode()
    return "".join(ch if ch.isalnum() or ch in "-_ ()" else "_" for ch in plain).strip(" _")


def attachment(filename: str | None, document_id: int) -> str:
    """The ``Content-Disposition`` of a document's download (RFC 6266): saved under the name it was
    uploaded with, without any folder that name gave (``../``, ``C:\\``), a line break or a quote;
    the name whole in UTF-8 (``filename*``, RFC 8187) beside a plain ASCII one (``filename``) for
    clients that read only that, ``document-ID`` with the name's extension where no letter of the
    name is ASCII. A header holds only Latin-1: a name in another script gave the download a 500."""
    name = "".join(ch for ch in (filename or "").replace("\\", "/").rsplit("/", 1)[-1] if ch.isprintable() and ch != '"').strip(" .")
    stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
    ext = "".join(ch for ch in ext if ch.isascii() and ch.isalnum())[:10]
    plain = (_ascii(stem) or f"document-{document_id}") + (f".{ext}" if ext else "")
    whole = name or plain
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(whole, safe='')}"


def resolves(path: str, *roots: dict) -> bool:
    """Whether ``path`` (e.g. ``credit.year_one``, ``periods[1].applied``, ``employees[0].hours.2004-05``)
    names a value of the determination or of the claim document. ``employee:ID`` names an employee."""
    for root in roots:
        node = root
        ok = True
        for part in path.split("."):
            m = _PART.match(part)
            key = m.group(1) if m else part
            if not isinstance(node, dict) or key not in node:
                ok = False
                break
            node = node[key]
            for idx in re.findall(r"\[(\d+)\]", m.group(2) if m else ""):
                if not isinstance(node, list) or int(idx) >= len(node):
                    ok = False
                    break
                node = node[int(idx)]
            if not ok:
                break
        if ok:
            return True
    return False


def _check_cites(session: Session, claim: Claim, cites: list[str], places: list[str] | None = None) -> None:
    """Every figure cited names a figure of the claim's determination or document, or one of its
    employees; else 422, each problem at its figure's place (default ``cites[i]``; an evidence
    request's is ``figure``)."""
    rev = session.execute(select(Revision).where(Revision.claim_id == claim.id, Revision.number == claim.revision)).scalar_one()
    det, doc = exact_json.loads_stored(rev.determination), exact_json.loads_stored(rev.document)
    employees = {str(m.get("employee_id")) for m in _employee_rows(det)}
    places = places or [f"cites[{i}]" for i in range(len(cites))]
    bad = []
    for place, figure in zip(places, cites):
        if figure.startswith("employee:"):
            if figure[len("employee:"):] not in employees:
                bad.append((place, f"{figure!r}: no such employee in the claim's payroll"))
        elif not resolves(figure, det, doc):
            bad.append((place, f"{figure!r} names no figure of the determination or the claim "
                                 "(e.g. credit.year_one, periods[0].applied, location.operations_began, employee:E001)"))
    if bad:
        raise ApiError(422, "a citation names no figure", bad)


def _employee_rows(det: dict) -> list[dict]:
    for entry in det.get("explanation") or []:
        if isinstance(entry, dict) and entry.get("figure") == "employee_months":
            return [r for r in entry.get("rows") or [] if isinstance(r, dict)]
    return []


def attach(session: Session, who: Principal, claim_id: int, upload: Upload, kind: str, description: str, cites: list[str]) -> Document:
    require(who, "preparer", "examiner")
    claim, _tp = claim_for(session, who, claim_id, lock=True)
    if kind not in KINDS:
        raise ApiError(422, "unknown kind of document", [("kind", f"{kind!r}; one of {', '.join(KINDS)}")])
    _check_cites(session, claim, cites)
    doc = Document(claim_id=claim.id, kind=kind, filename=upload.filename, media_type=upload.media_type,
                   sha256=upload.sha256, size=len(upload.content), content=upload.content, description=description,
                   uploaded_by=who.id)
    session.add(doc)
    session.flush()
    for figure in dict.fromkeys(cites):
        session.add(Citation(document_id=doc.id, figure=figure))
    answered = session.execute(select(EvidenceRequest).where(
        EvidenceRequest.claim_id == claim.id, EvidenceRequest.answered_by_document_id.is_(None),
        EvidenceRequest.figure.in_(cites))).scalars().all()
    for req in answered:
        req.answered_by_document_id = doc.id
    record(session, who, "document.add", "document", doc.id, None, {
        "claim_id": claim.id, "kind": kind, "filename": doc.filename, "sha256": doc.sha256, "size": doc.size,
        "cites": list(dict.fromkeys(cites)), "answers": [r.id for r in answered]})
    return doc


def request_evidence(session: Session, who: Principal, claim_id: int, figure: str, rule: str, message: str) -> EvidenceRequest:
    require(who, "examiner")
    claim, _tp = claim_for(session, who, claim_id, lock=True)
    if not figure.startswith("employee:"):
        _check_cites(session, claim, [figure], ["figure"])
    req = EvidenceRequest(claim_id=claim.id, figure=figure, rule=rule, message=message, requested_by=who.id)
    session.add(req)
    session.flush()
    record(session, who, "evidence.request", "evidence_request", req.id, None,
           {"claim_id": claim.id, "figure": figure, "rule": rule, "message": message})
    return req
