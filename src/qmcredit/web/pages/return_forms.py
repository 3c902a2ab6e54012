"""The claim and determination the office's Form 313 PDFs are made from: for a claim that is one
location of a several-location return (its stored determination names the return's claims, L6),
the return as one claim with ``locations`` and the location to print, so that the PDF's lines are
the location's share under the return's one room, as the API's ``/claims/N/form313`` gives them."""

from __future__ import annotations

import qmcredit

from ...service import claims as stored
from ...service import taxreturn
from ...service.evaluate import evaluate
from ...service.models import Claim
from .load import ClaimView


def form_source(db, view: ClaimView):
    """``(claim, determination, location)``: the stored claim decided again and ``None``, or, for a
    location of a return of several (the other members the taxpayer's, so visible to the viewer),
    the return decided as one and the location id (``claim-N``) whose forms to print."""
    ids = [int(i) for i in (view.det.get("return") or {}).get("claims") or []]  # JSON numbers are read as Decimal
    if len(ids) < 2:
        ev = view.evaluation
        return ev.claim, ev.determination, None
    with db.read() as session:
        revs = [(i, stored.current_revision(session, session.get(Claim, i))) for i in ids]
        docs = [(i, rev.document, stored.payroll_of(session, rev)) for i, rev in revs]
    combined = taxreturn.combine([(i, evaluate(document, payroll)) for i, document, payroll in sorted(docs, key=lambda d: d[0])])
    return combined, qmcredit.decide(combined), f"claim-{view.claim.id}"
