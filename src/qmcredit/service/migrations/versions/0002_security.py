"""Security (issue 14): the audit log chained (each event carries the hash of the one before) and
closed to REPLACE (SQLite) and TRUNCATE (PostgreSQL); server-side sign-in sessions, failed
sign-ins (for the guess limits), and an expiry on every API token.

Revision ID: 0002
Revises: 0001
"""
from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

TOKEN_LIFETIME = timedelta(days=90)  # as auth.TOKEN_LIFETIME when this migration was written


def upgrade() -> None:
    from qmcredit.service.audit import event_hash

    op.create_table('sign_in_sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_sign_in_sessions_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sign_in_sessions')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_sign_in_sessions_key_hash')),
    )
    op.create_table('sign_in_failures',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('username', sa.String(length=80), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sign_in_failures')),
    )
    op.create_index('ix_sign_in_failures_username_at', 'sign_in_failures', ['username', 'at'])
    op.create_index('ix_sign_in_failures_address_at', 'sign_in_failures', ['address', 'at'])
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.add_column(sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True))

    postgres = op.get_bind().dialect.name == "postgresql"
    _triggers(drop=True, postgres=postgres)  # the backfill below writes into existing events, once
    op.add_column('audit_events', sa.Column('prev_hash', sa.String(length=64), nullable=True))
    op.add_column('audit_events', sa.Column('hash', sa.String(length=64), nullable=True))
    bind = op.get_bind()
    from qmcredit.service.models import UTCDateTime
    events = sa.table('audit_events', sa.column('id'), sa.column('at', UTCDateTime()),
                      *map(sa.column, ('actor_id', 'actor', 'action', 'entity', 'entity_id', 'before', 'after', 'prev_hash', 'hash')))
    tokens = sa.table('api_tokens', sa.column('id'), sa.column('created_at', UTCDateTime()), sa.column('expires_at', UTCDateTime()))
    prev = ""
    for row in bind.execute(sa.select(events).order_by(events.c.id)).mappings().all():
        h = event_hash(prev, row)
        bind.execute(events.update().where(events.c.id == row["id"]).values(prev_hash=prev, hash=h))
        prev = h
    for tid, created in bind.execute(sa.select(tokens.c.id, tokens.c.created_at)).all():
        bind.execute(tokens.update().where(tokens.c.id == tid).values(expires_at=created + TOKEN_LIFETIME))
    _triggers(drop=False, postgres=postgres)
    if postgres:
        op.execute("CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
                   "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()")
    else:  # INSERT OR REPLACE / REPLACE INTO deletes the old row without firing a DELETE trigger
        op.execute("CREATE TRIGGER audit_events_no_replace BEFORE INSERT ON audit_events "
                   "WHEN EXISTS (SELECT 1 FROM audit_events WHERE id = NEW.id) "
                   "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END")


def _triggers(drop: bool, postgres: bool) -> None:
    """0001's triggers refusing UPDATE and DELETE on audit_events."""
    if postgres:
        op.execute("DROP TRIGGER audit_events_append_only ON audit_events" if drop else
                   "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
                   "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()")
        return
    for verb in ("UPDATE", "DELETE"):
        op.execute(f"DROP TRIGGER audit_events_no_{verb.lower()}" if drop else
                   f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
                   "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.execute("DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events" if postgres
               else "DROP TRIGGER IF EXISTS audit_events_no_replace")
    _triggers(drop=True, postgres=postgres)
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.drop_column('hash')
        batch_op.drop_column('prev_hash')
    _triggers(drop=False, postgres=postgres)
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_column('expires_at')
    op.drop_index('ix_sign_in_failures_address_at', table_name='sign_in_failures')
    op.drop_index('ix_sign_in_failures_username_at', table_name='sign_in_failures')
    op.drop_table('sign_in_failures')
    op.drop_table('sign_in_sessions')
