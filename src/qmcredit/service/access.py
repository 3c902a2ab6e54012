"""Who sees and changes what: preparers their own taxpayers' records only, examiners all of them,
auditors read all and change nothing. A record the principal may not see is reported as absent."""

from __future__ import annotations

from sqlalchemy import Select
from sqlalchemy.orm import Session

from .auth import Principal
from .errors import ApiError, not_found
from .models import Claim, Taxpayer


def require(principal: Principal, *roles: str) -> None:
    if principal.role not in roles:
        raise ApiError(403, f"{principal.role}s may not do this (needs {' or '.join(roles)})",
                       [("role", f"{principal.role} is not {' or '.join(roles)}")])


def may_see(principal: Principal, taxpayer: Taxpayer) -> bool:
    return principal.role != "preparer" or taxpayer.preparer_id == principal.id


def visible(stmt: Select, principal: Principal) -> Select:
    """Narrow a query that joins ``Taxpayer`` to what ``principal`` may see."""
    return stmt if principal.role != "preparer" else stmt.where(Taxpayer.preparer_id == principal.id)


def taxpayer_for(session: Session, principal: Principal, taxpayer_id: int) -> Taxpayer:
    tp = session.get(Taxpayer, taxpayer_id)
    if tp is None or not may_see(principal, tp):
        raise not_found("taxpayer", taxpayer_id)
    return tp


def claim_for(session: Session, principal: Principal, claim_id: int, lock: bool = False) -> tuple[Claim, Taxpayer]:
    """The claim and its taxpayer, when ``principal`` may see them; ``lock`` takes the claim's row
    lock (PostgreSQL) so concurrent changes to one claim queue up instead of interleaving."""
    claim = session.get(Claim, claim_id, with_for_update=lock)
    tp = session.get(Taxpayer, claim.taxpayer_id) if claim else None
    if claim is None or tp is None or not may_see(principal, tp):
        raise not_found("claim", claim_id)
    return claim, tp
