"""The initial schema: users and tokens, taxpayers and their E4 credit window, claims with
revisions, documents and citations, the ledger, decisions, refund certifications, evidence
requests, and the append-only audit log (triggers refuse UPDATE and DELETE on it).

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('username', sa.String(length=80), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('preparer', 'examiner', 'auditor')", name=op.f('ck_users_role')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('username', name=op.f('uq_users_username'))
    )
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_api_tokens_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    op.create_table('audit_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor_id', sa.Integer(), nullable=True),
    sa.Column('actor', sa.String(length=80), nullable=False),
    sa.Column('action', sa.String(length=60), nullable=False),
    sa.Column('entity', sa.String(length=40), nullable=False),
    sa.Column('entity_id', sa.String(length=40), nullable=False),
    sa.Column('before', sa.Text(), nullable=True),
    sa.Column('after', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['actor_id'], ['users.id'], name=op.f('fk_audit_events_actor_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events'))
    )
    op.create_table('taxpayers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('ein', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('tax', sa.Text(), nullable=False),
    sa.Column('preparer_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['preparer_id'], ['users.id'], name=op.f('fk_taxpayers_preparer_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_taxpayers')),
    sa.UniqueConstraint('ein', name=op.f('uq_taxpayers_ein'))
    )
    op.create_table('credit_windows',
    sa.Column('taxpayer_id', sa.Integer(), nullable=False),
    sa.Column('year_one_start', sa.Date(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['taxpayer_id'], ['taxpayers.id'], name=op.f('fk_credit_windows_taxpayer_id_taxpayers')),
    sa.PrimaryKeyConstraint('taxpayer_id', name=op.f('pk_credit_windows')),
    sa.UniqueConstraint('taxpayer_id', 'year_one_start', name='uq_credit_windows_taxpayer_start')
    )
    op.create_table('locations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('taxpayer_id', sa.Integer(), nullable=False),
    sa.Column('municipality', sa.Text(), nullable=False),
    sa.Column('address', sa.Text(), nullable=False),
    sa.Column('operations_began', sa.Date(), nullable=False),
    sa.Column('operations_source', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['taxpayer_id'], ['taxpayers.id'], name=op.f('fk_locations_taxpayer_id_taxpayers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_locations')),
    sa.UniqueConstraint('taxpayer_id', 'municipality', 'address', name='uq_locations_place')
    )
    op.create_table('claims',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('taxpayer_id', sa.Integer(), nullable=False),
    sa.Column('location_id', sa.Integer(), nullable=False),
    sa.Column('year_one_start', sa.Date(), nullable=True),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('draft', 'submitted', 'under_review', 'approved', 'adjusted', 'denied', 'refund_certified')", name=op.f('ck_claims_state')),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_claims_created_by_users')),
    sa.ForeignKeyConstraint(['location_id'], ['locations.id'], name=op.f('fk_claims_location_id_locations')),
    sa.ForeignKeyConstraint(['taxpayer_id', 'year_one_start'], ['credit_windows.taxpayer_id', 'credit_windows.year_one_start'], name='fk_claims_credit_window'),
    sa.ForeignKeyConstraint(['taxpayer_id'], ['taxpayers.id'], name=op.f('fk_claims_taxpayer_id_taxpayers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_claims'))
    )
    with op.batch_alter_table('claims', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_claims_taxpayer_id'), ['taxpayer_id'], unique=False)

    op.create_table('documents',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.Text(), nullable=False),
    sa.Column('filename', sa.Text(), nullable=False),
    sa.Column('media_type', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('content', sa.LargeBinary(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('uploaded_by', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_documents_claim_id_claims')),
    sa.ForeignKeyConstraint(['uploaded_by'], ['users.id'], name=op.f('fk_documents_uploaded_by_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_documents'))
    )
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_documents_claim_id'), ['claim_id'], unique=False)

    op.create_table('citations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('figure', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_citations_document_id_documents')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_citations')),
    sa.UniqueConstraint('document_id', 'figure', name='uq_citations_document_figure')
    )
    with op.batch_alter_table('citations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_citations_document_id'), ['document_id'], unique=False)

    op.create_table('evidence_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('figure', sa.Text(), nullable=False),
    sa.Column('rule', sa.String(length=8), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('requested_by', sa.Integer(), nullable=False),
    sa.Column('answered_by_document_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['answered_by_document_id'], ['documents.id'], name=op.f('fk_evidence_requests_answered_by_document_id_documents')),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_evidence_requests_claim_id_claims')),
    sa.ForeignKeyConstraint(['requested_by'], ['users.id'], name=op.f('fk_evidence_requests_requested_by_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_evidence_requests'))
    )
    with op.batch_alter_table('evidence_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_evidence_requests_claim_id'), ['claim_id'], unique=False)

    op.create_table('revisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('document', sa.Text(), nullable=False),
    sa.Column('payroll_document_id', sa.Integer(), nullable=True),
    sa.Column('determination', sa.Text(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('author_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_revisions_author_id_users')),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_revisions_claim_id_claims')),
    sa.ForeignKeyConstraint(['payroll_document_id'], ['documents.id'], name=op.f('fk_revisions_payroll_document_id_documents')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_revisions')),
    sa.UniqueConstraint('claim_id', 'number', name='uq_revisions_claim_number')
    )
    with op.batch_alter_table('revisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_revisions_claim_id'), ['claim_id'], unique=False)

    op.create_table('decisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('revision_id', sa.Integer(), nullable=False),
    sa.Column('outcome', sa.String(length=20), nullable=False),
    sa.Column('reasons', sa.Text(), nullable=False),
    sa.Column('examiner_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("outcome IN ('approved', 'adjusted', 'denied')", name=op.f('ck_decisions_outcome')),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_decisions_claim_id_claims')),
    sa.ForeignKeyConstraint(['examiner_id'], ['users.id'], name=op.f('fk_decisions_examiner_id_users')),
    sa.ForeignKeyConstraint(['revision_id'], ['revisions.id'], name=op.f('fk_decisions_revision_id_revisions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_decisions'))
    )
    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decisions_claim_id'), ['claim_id'], unique=False)

    op.create_table('ledger_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('taxpayer_id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('revision_id', sa.Integer(), nullable=False),
    sa.Column('period_start', sa.Date(), nullable=False),
    sa.Column('period_end', sa.Date(), nullable=False),
    sa.Column('origin', sa.String(length=20), nullable=False),
    sa.Column('allowed', sa.BigInteger(), nullable=False),
    sa.Column('applied', sa.BigInteger(), nullable=False),
    sa.Column('refund', sa.BigInteger(), nullable=False),
    sa.Column('forfeited', sa.BigInteger(), nullable=False),
    sa.Column('carried_forward', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_ledger_entries_claim_id_claims')),
    sa.ForeignKeyConstraint(['revision_id'], ['revisions.id'], name=op.f('fk_ledger_entries_revision_id_revisions')),
    sa.ForeignKeyConstraint(['taxpayer_id'], ['taxpayers.id'], name=op.f('fk_ledger_entries_taxpayer_id_taxpayers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger_entries'))
    )
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ledger_entries_revision_id'), ['revision_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_ledger_entries_taxpayer_id'), ['taxpayer_id'], unique=False)

    op.create_table('refund_certifications',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('taxpayer_id', sa.Integer(), nullable=False),
    sa.Column('claim_id', sa.Integer(), nullable=False),
    sa.Column('revision_id', sa.Integer(), nullable=False),
    sa.Column('period_start', sa.Date(), nullable=False),
    sa.Column('period_end', sa.Date(), nullable=False),
    sa.Column('amount', sa.BigInteger(), nullable=False),
    sa.Column('examiner_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['claim_id'], ['claims.id'], name=op.f('fk_refund_certifications_claim_id_claims')),
    sa.ForeignKeyConstraint(['examiner_id'], ['users.id'], name=op.f('fk_refund_certifications_examiner_id_users')),
    sa.ForeignKeyConstraint(['revision_id'], ['revisions.id'], name=op.f('fk_refund_certifications_revision_id_revisions')),
    sa.ForeignKeyConstraint(['taxpayer_id'], ['taxpayers.id'], name=op.f('fk_refund_certifications_taxpayer_id_taxpayers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_refund_certifications')),
    sa.UniqueConstraint('claim_id', 'period_start', name='uq_refund_certifications_claim_period')
    )
    with op.batch_alter_table('refund_certifications', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_refund_certifications_taxpayer_id'), ['taxpayer_id'], unique=False)



    _append_only_audit()


def _append_only_audit() -> None:
    """The audit log is append-only: the database itself refuses to change or remove an event."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'audit_events is append-only'; END $$"
        )
        op.execute(
            "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
            "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()"
        )
    else:
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
                "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events")
        op.execute("DROP FUNCTION IF EXISTS audit_events_append_only()")
    else:
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_delete")
    with op.batch_alter_table('refund_certifications', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_refund_certifications_taxpayer_id'))

    op.drop_table('refund_certifications')
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ledger_entries_taxpayer_id'))
        batch_op.drop_index(batch_op.f('ix_ledger_entries_revision_id'))

    op.drop_table('ledger_entries')
    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decisions_claim_id'))

    op.drop_table('decisions')
    with op.batch_alter_table('revisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_revisions_claim_id'))

    op.drop_table('revisions')
    with op.batch_alter_table('evidence_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evidence_requests_claim_id'))

    op.drop_table('evidence_requests')
    with op.batch_alter_table('citations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_citations_document_id'))

    op.drop_table('citations')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_documents_claim_id'))

    op.drop_table('documents')
    with op.batch_alter_table('claims', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_claims_taxpayer_id'))

    op.drop_table('claims')
    op.drop_table('locations')
    op.drop_table('credit_windows')
    op.drop_table('taxpayers')
    op.drop_table('audit_events')
    op.drop_table('api_tokens')
    op.drop_table('users')
