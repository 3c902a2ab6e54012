"""Loading a claim for a page, through the service's own access control: the claim, its taxpayer
and location, its current determination, the history of revisions and decisions."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import select

from ...service import claims as stored
from ...service import exact_json
from ...service.access import claim_for
from ...service.auth import Principal
from ...service.evaluate import Evaluation, Upload, evaluate
from ...service.models import Claim, Decision, Location, Revision, Taxpayer, User


@dataclass
class ClaimView:
    claim: Claim
    taxpayer: Taxpayer
    location: Location
    det: dict
    document: dict
    payroll: Upload | None
    revisions: list[dict]
    decisions: list[dict]

    @property
    def evaluation(self) -> Evaluation:
        """The stored claim decided again (the engine is deterministic): the PDFs need the claim."""
        return evaluate(exact_json.dumps(self.document), self.payroll)


def load_claim(db, who: Principal, claim_id: int) -> ClaimView:
    """Raises the service's 404 when ``who`` may not see the claim."""
    with db.read() as session:
        claim, tp = claim_for(session, who, claim_id)
        rev = stored.current_revision(session, claim)
        revisions = [{"number": r.number, "reason": r.reason, "author": author, "created_at": r.created_at}
                     for r, author in session.execute(
                         select(Revision, User.username).join(User, User.id == Revision.author_id)
                         .where(Revision.claim_id == claim.id).order_by(Revision.number))]
        numbers = {r.id: r.number for r in session.execute(select(Revision).where(Revision.claim_id == claim.id)).scalars()}
        decisions = [{"outcome": d.outcome, "reasons": json.loads(d.reasons), "examiner": name,
                      "revision": numbers.get(d.revision_id), "created_at": d.created_at}
                     for d, name in session.execute(
                         select(Decision, User.username).join(User, User.id == Decision.examiner_id)
                         .where(Decision.claim_id == claim.id).order_by(Decision.id))]
        return ClaimView(claim, tp, session.get(Location, claim.location_id), exact_json.loads(rev.determination),
                         exact_json.loads(rev.document), stored.payroll_of(session, rev), revisions, decisions)
