"""Claims stored before the office decided a taxpayer's locations as one return (before 0003 and
issue 12's L6) keep one-location determinations, each with the whole room of every period: their
ledger would count the room once per location. This decides every such taxpayer's current
location claims again as one return, as a filing does now: each claim whose share changes gets a
new revision (authored by the taxpayer's preparer, reason naming this migration) and an audit
event ``claim.recompute``; an approved claim whose figures change goes back for review. Logged as
a warning per taxpayer. No schema change; the downgrade keeps the revisions (history stays).

It runs the office's own code (``claims.settle``) on the schema of this revision, the head when
written: a later migration that changes those tables must run after it, as Alembic orders them.

Revision ID: 0004
Revises: 0003
"""
import logging

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    from qmcredit.service import claims
    from qmcredit.service.auth import Principal
    from qmcredit.service.models import Taxpayer, User

    conn = op.get_bind()
    several = conn.execute(sa.text(
        "SELECT taxpayer_id FROM claims WHERE duplicate_of IS NULL AND year_one_start IS NOT NULL AND state <> 'denied' "
        "GROUP BY taxpayer_id HAVING COUNT(*) > 1 ORDER BY taxpayer_id")).scalars().all()
    if not several:
        return
    session = Session(bind=conn, join_transaction_mode="create_savepoint")
    for taxpayer_id in several:
        tp = session.get(Taxpayer, taxpayer_id)
        user = session.get(User, tp.preparer_id)
        claims.settle(session, Principal(user.id, user.username, user.role), tp, "the office's upgrade to one return per taxpayer (migration 0004)")
        log.warning("0004: taxpayer %s's location claims decided again as one return (RULES.md L6)", taxpayer_id)
    session.commit()
    session.close()


def downgrade() -> None:
    pass  # the recomputed revisions are history: kept
