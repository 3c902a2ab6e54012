"""No credit twice: locations known by their normalised place, one claim per taxpayer, location and
credit window (a unique index), and the filings' idempotency keys.

Existing data is kept, never refused: locations of one taxpayer whose spellings are one place are
merged into the oldest (its claims move to it), and of several claims for one location and window
the oldest stays the claim while the later ones get ``duplicate_of`` (the oldest's id): they stay
readable, count for nothing in the ledger, and change no more. Each is logged as a warning.

Revision ID: 0003
Revises: 0002
"""
import logging

import sqlalchemy as sa
from alembic import op

from qmcredit.service.places import place_key

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    conn = op.get_bind()
    op.add_column('locations', sa.Column('place_key', sa.Text(), nullable=False, server_default=''))
    _merge_locations(conn)
    if conn.dialect.name != 'sqlite':  # SQLite cannot drop a column default; the models set the key
        op.alter_column('locations', 'place_key', server_default=None)
    op.create_index('uq_locations_place_key', 'locations', ['taxpayer_id', 'place_key'], unique=True)

    # no foreign key: SQLite could then neither add the column by ALTER nor drop it again; only this migration sets it
    op.add_column('claims', sa.Column('duplicate_of', sa.Integer(), nullable=True))
    _retire_duplicate_claims(conn)
    op.create_index('uq_claims_location_window', 'claims', ['taxpayer_id', 'location_id', 'year_one_start'], unique=True,
                    sqlite_where=sa.text('duplicate_of IS NULL'), postgresql_where=sa.text('duplicate_of IS NULL'))

    op.create_table('idempotency_keys',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('request_sha256', sa.String(length=64), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.Integer(), nullable=False),
    sa.Column('response', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_idempotency_keys_claim_id_claims')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_idempotency_keys_user_id_users')),
    sa.PrimaryKeyConstraint('user_id', 'key', name=op.f('pk_idempotency_keys'))
    )


def _merge_locations(conn) -> None:
    """Fill ``place_key``; a taxpayer's locations with one key become its oldest row."""
    kept: dict[tuple[int, str], int] = {}
    rows = conn.execute(sa.text("SELECT id, taxpayer_id, municipality, address FROM locations ORDER BY id")).all()
    for loc_id, taxpayer_id, municipality, address in rows:
        key = place_key(municipality, address)
        oldest = kept.setdefault((taxpayer_id, key), loc_id)
        if oldest == loc_id:
            conn.execute(sa.text("UPDATE locations SET place_key = :k WHERE id = :id"), {"k": key, "id": loc_id})
            continue
        log.warning("0003: location %s of taxpayer %s (%s, %s) is location %s: merged", loc_id, taxpayer_id,
                    municipality, address, oldest)
        conn.execute(sa.text("UPDATE claims SET location_id = :to WHERE location_id = :id"), {"to": oldest, "id": loc_id})
        conn.execute(sa.text("DELETE FROM locations WHERE id = :id"), {"id": loc_id})


def _retire_duplicate_claims(conn) -> None:
    """Of the claims for one taxpayer, location and window, the oldest stays the claim."""
    oldest: dict[tuple, int] = {}
    rows = conn.execute(sa.text("SELECT id, taxpayer_id, location_id, year_one_start FROM claims "
                                "WHERE year_one_start IS NOT NULL ORDER BY id")).all()
    for claim_id, taxpayer_id, location_id, start in rows:
        first = oldest.setdefault((taxpayer_id, location_id, start), claim_id)
        if first != claim_id:
            log.warning("0003: claim %s duplicates claim %s (taxpayer %s, location %s, credit year one from %s): "
                        "kept as duplicate_of %s", claim_id, first, taxpayer_id, location_id, start, first)
            conn.execute(sa.text("UPDATE claims SET duplicate_of = :first WHERE id = :id"), {"first": first, "id": claim_id})


def downgrade() -> None:
    op.drop_table('idempotency_keys')
    op.drop_index('uq_claims_location_window', table_name='claims')
    op.drop_column('claims', 'duplicate_of')
    op.drop_index('uq_locations_place_key', table_name='locations')
    op.drop_column('locations', 'place_key')
