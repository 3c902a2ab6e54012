"""The database tables (SQLAlchemy 2). Money is stored as whole cents (``Cents``), never as a
binary float; claim documents and determinations are stored as exact JSON text.

E4 (52:27BBB-55(d), one 24-month credit period per taxpayer) is held by the schema itself:
``credit_windows`` has one row per taxpayer (its primary key), and a claim that has a window
refers to it by the composite foreign key (taxpayer_id, year_one_start), so no claim can carry a
different window than its taxpayer's, whatever the order or timing of submissions.

No credit twice: a location is known by its normalised place (``places.place_key``), one row per
place of a taxpayer, and a taxpayer has at most one claim per location and credit window (the
unique index ``uq_claims_location_window``; claims that migration 0003 found duplicated before it
existed are kept, ``duplicate_of`` the oldest, and count for nothing).
"""

from __future__ import annotations

import base64
import zlib
from datetime import date, datetime, timezone
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ROLES = ("preparer", "examiner", "auditor")
STATES = ("draft", "submitted", "under_review", "approved", "adjusted", "denied", "refund_certified")

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def now() -> datetime:
    return datetime.now(timezone.utc)


class Cents(TypeDecorator):
    """A money amount (``Decimal`` dollars and cents) stored as a whole number of cents."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        d = Decimal(value)
        cents = d * 100
        if cents != cents.to_integral_value():
            raise ValueError(f"{value} has fractions of a cent")
        return int(cents)

    def process_result_value(self, value, dialect):
        return None if value is None else (Decimal(value) / 100).quantize(Decimal("0.01"))


class CompactText(TypeDecorator):
    """Text kept compressed when long (a determination's employee-month trace): zlib, in base64
    after ``zlib:``; read back as the text written. Short texts are stored as they are."""

    impl = Text
    cache_ok = True
    LONG = 64 * 1024

    def process_bind_param(self, value, dialect):
        if value is None or len(value) <= self.LONG:
            return value
        return "zlib:" + base64.b64encode(zlib.compress(value.encode("utf-8"), 1)).decode("ascii")

    def process_result_value(self, value, dialect):
        if value is None or not value.startswith("zlib:"):
            return value
        return zlib.decompress(base64.b64decode(value[5:])).decode("utf-8")


class UTCDateTime(TypeDecorator):
    """A timestamp stored and returned in UTC (SQLite keeps no time zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return None if value is None else value.astimezone(timezone.utc)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint(f"role IN {ROLES!r}", name="role"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class ApiToken(Base):
    """A program's sign-in: only the SHA-256 of the token is kept."""

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(String(120))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SignInSession(Base):
    """A person's signed-in session, kept on the server: the cookie holds only its random key
    (of which the SHA-256 is stored); signing out ends it here, whatever copy of the cookie lives on."""

    __tablename__ = "sign_in_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SignInFailure(Base):
    """A wrong password, by user name and address: the guess limits count them."""

    __tablename__ = "sign_in_failures"
    __table_args__ = (Index("ix_sign_in_failures_username_at", "username", "at"),
                      Index("ix_sign_in_failures_address_at", "address", "at"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(80))
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class Taxpayer(Base):
    __tablename__ = "taxpayers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ein: Mapped[str] = mapped_column(Text, unique=True)
    name: Mapped[str] = mapped_column(Text, default="")
    tax: Mapped[str] = mapped_column(Text)
    preparer_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class CreditWindow(Base):
    """E4: the taxpayer's single 24-month credit period, by the first month of credit year one."""

    __tablename__ = "credit_windows"
    __table_args__ = (UniqueConstraint("taxpayer_id", "year_one_start", name="uq_credit_windows_taxpayer_start"),)
    taxpayer_id: Mapped[int] = mapped_column(ForeignKey("taxpayers.id"), primary_key=True)
    year_one_start: Mapped[date] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class Location(Base):
    __tablename__ = "locations"
    __table_args__ = (
        UniqueConstraint("taxpayer_id", "municipality", "address", name="uq_locations_place"),
        Index("uq_locations_place_key", "taxpayer_id", "place_key", unique=True),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taxpayer_id: Mapped[int] = mapped_column(ForeignKey("taxpayers.id"))
    municipality: Mapped[str] = mapped_column(Text)
    address: Mapped[str] = mapped_column(Text, default="")
    #: the municipality and address normalised (``places.place_key``): what makes two spellings one place
    place_key: Mapped[str] = mapped_column(Text)
    operations_began: Mapped[date] = mapped_column(Date)
    operations_source: Mapped[str] = mapped_column(Text, default="")


class Claim(Base):
    __tablename__ = "claims"
    __table_args__ = (
        CheckConstraint(f"state IN {STATES!r}", name="state"),
        ForeignKeyConstraint(
            ["taxpayer_id", "year_one_start"], ["credit_windows.taxpayer_id", "credit_windows.year_one_start"],
            name="fk_claims_credit_window",
        ),
        # one claim per taxpayer, location and credit window (retired duplicates aside)
        Index("uq_claims_location_window", "taxpayer_id", "location_id", "year_one_start", unique=True,
              sqlite_where=text("duplicate_of IS NULL"), postgresql_where=text("duplicate_of IS NULL")),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taxpayer_id: Mapped[int] = mapped_column(ForeignKey("taxpayers.id"), index=True)
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    year_one_start: Mapped[date | None] = mapped_column(Date)
    state: Mapped[str] = mapped_column(String(20), default="draft")
    revision: Mapped[int] = mapped_column(Integer, default=1)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    #: set by migration 0003 on a claim filed again for a location and window before the office
    #: refused that: the oldest claim it duplicates. A duplicate counts for nothing and changes no more.
    duplicate_of: Mapped[int | None] = mapped_column(Integer)  # a claim id; no foreign key, see migration 0003


class IdempotencyKey(Base):
    """A filing's ``Idempotency-Key`` (per user): the request's fingerprint and the first answer,
    which a retry with the same key gets again instead of a second claim."""

    __tablename__ = "idempotency_keys"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    request_sha256: Mapped[str] = mapped_column(String(64))
    claim_id: Mapped[int | None] = mapped_column(ForeignKey("claims.id"))
    status: Mapped[int] = mapped_column(Integer)
    response: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class Document(Base):
    """An uploaded file (payroll table, register, lease, certificate), kept whole with its SHA-256 (B1, B2)."""

    __tablename__ = "documents"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"), index=True)
    kind: Mapped[str] = mapped_column(Text)
    filename: Mapped[str] = mapped_column(Text)
    media_type: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    description: Mapped[str] = mapped_column(Text, default="")
    uploaded_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class Citation(Base):
    """A figure of the claim or determination (e.g. ``credit.year_one``) that a document supports."""

    __tablename__ = "citations"
    __table_args__ = (UniqueConstraint("document_id", "figure", name="uq_citations_document_figure"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    figure: Mapped[str] = mapped_column(Text)


class Revision(Base):
    """One version of a claim: its document, payroll, and the determination the engine gave."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("claim_id", "number", name="uq_revisions_claim_number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    document: Mapped[str] = mapped_column(Text)
    payroll_document_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id"))
    determination: Mapped[str] = mapped_column(CompactText)
    reason: Mapped[str] = mapped_column(Text, default="")
    author_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class LedgerEntry(Base):
    """One period's movement of one year of origin's credit, as a revision determined it.
    Entries of earlier revisions stay: the current ledger is the claim's current revision's."""

    __tablename__ = "ledger_entries"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taxpayer_id: Mapped[int] = mapped_column(ForeignKey("taxpayers.id"), index=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"))
    revision_id: Mapped[int] = mapped_column(ForeignKey("revisions.id"), index=True)
    period_start: Mapped[date] = mapped_column(Date)
    period_end: Mapped[date] = mapped_column(Date)
    origin: Mapped[str] = mapped_column(String(20))
    allowed: Mapped[Decimal] = mapped_column(Cents)
    applied: Mapped[Decimal] = mapped_column(Cents)
    refund: Mapped[Decimal] = mapped_column(Cents)
    forfeited: Mapped[Decimal] = mapped_column(Cents)
    carried_forward: Mapped[Decimal] = mapped_column(Cents)


class Decision(Base):
    """The examiner's outcome for a revision, with reasons citing rule ids."""

    __tablename__ = "decisions"
    __table_args__ = (CheckConstraint("outcome IN ('approved', 'adjusted', 'denied')", name="outcome"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"), index=True)
    revision_id: Mapped[int] = mapped_column(ForeignKey("revisions.id"))
    outcome: Mapped[str] = mapped_column(String(20))
    reasons: Mapped[str] = mapped_column(Text)
    examiner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class RefundCertification(Base):
    """R1: the refundable part of the year-one credit, certified as an overpayment (R.S.54:49-15)."""

    __tablename__ = "refund_certifications"
    __table_args__ = (UniqueConstraint("claim_id", "period_start", name="uq_refund_certifications_claim_period"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taxpayer_id: Mapped[int] = mapped_column(ForeignKey("taxpayers.id"), index=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"))
    revision_id: Mapped[int] = mapped_column(ForeignKey("revisions.id"))
    period_start: Mapped[date] = mapped_column(Date)
    period_end: Mapped[date] = mapped_column(Date)
    amount: Mapped[Decimal] = mapped_column(Cents)
    examiner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class EvidenceRequest(Base):
    """An examiner's request for evidence of a figure (B1); answered by a document citing it."""

    __tablename__ = "evidence_requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id"), index=True)
    figure: Mapped[str] = mapped_column(Text)
    rule: Mapped[str] = mapped_column(String(8))
    message: Mapped[str] = mapped_column(Text, default="")
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    answered_by_document_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)


class AuditEvent(Base):
    """Who changed what, when, with the record before and after. Append-only: the migrations add
    triggers that refuse UPDATE, DELETE, REPLACE (SQLite) and TRUNCATE (PostgreSQL); and chained:
    ``hash`` covers the event and ``prev_hash``, the hash of the event before (``audit.event_hash``)."""

    __tablename__ = "audit_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=now)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    actor: Mapped[str] = mapped_column(String(80))
    action: Mapped[str] = mapped_column(String(60))
    entity: Mapped[str] = mapped_column(String(40))
    entity_id: Mapped[str] = mapped_column(String(40))
    before: Mapped[str | None] = mapped_column(Text)
    after: Mapped[str | None] = mapped_column(Text)
    prev_hash: Mapped[str | None] = mapped_column(String(64))
    hash: Mapped[str | None] = mapped_column(String(64))
