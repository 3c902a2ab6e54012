"""Request and response bodies as OpenAPI shows them. Claim documents are read from the raw body
(money and hours stay exact), so their schema is written here by hand from ``ClaimHeader``."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

import qmcredit

from ..models import ROLES, STATES
from ..rules import RULE_IDS

#: text without NUL characters (which PostgreSQL refuses to store)
PLAIN = r"^[^\x00]*$"


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimOut(BaseModel):
    """A stored claim with the determination of its current revision (FORMAT.md)."""

    id: int
    taxpayer_id: int
    taxpayer_ein: str
    location_id: int
    state: Literal[STATES]  # type: ignore[valid-type]
    revision: int
    approved_revision: int | None = Field(None, description="the revision the examiner's latest approval (or adjustment) "
                                          "decided; a newer one, recomputed as one return with another location (L6), is reviewed again")
    duplicate_of: int | None = Field(None, description="a claim filed again for the location and credit period of this "
                                     "older claim before the office refused that (migration 0003): it counts for nothing")
    year_one_start: date | None = Field(description="E4: first day of the taxpayer's credit period this claim holds")
    created_at: datetime
    updated_at: datetime
    evidence: dict[str, list[int]] = Field(description="B1: for each figure cited, the documents that support it")
    determination: dict[str, Any] = Field(description="the determination JSON, as `qmcredit compute --json` prints it")


class ClaimSummary(BaseModel):
    id: int
    taxpayer_id: int
    taxpayer_ein: str
    location_id: int
    state: str
    revision: int
    year_one_start: date | None
    updated_at: datetime


class RevisionOut(BaseModel):
    number: int
    reason: str
    author: str
    created_at: datetime
    payroll_document_id: int | None
    document: dict[str, Any] | None = None
    determination: dict[str, Any] | None = None


class Reason(_In):
    rule: Literal[RULE_IDS] = Field(description="a rule id of RULES.md")  # type: ignore[valid-type]
    message: str = Field(min_length=1, max_length=4000, pattern=PLAIN)


class DecisionIn(_In):
    outcome: Literal["approved", "adjusted", "denied"]
    reasons: list[Reason] = Field(default_factory=list, max_length=100)


class EvidenceRequestIn(_In):
    figure: str = Field(min_length=1, max_length=200, pattern=PLAIN, description="the figure to be proven, e.g. credit.year_one")
    rule: Literal[RULE_IDS] = "B1"  # type: ignore[valid-type]
    message: str = Field("", max_length=4000, pattern=PLAIN)


class EvidenceRequestOut(BaseModel):
    id: int
    claim_id: int
    figure: str
    rule: str
    message: str
    requested_by: str
    answered_by_document_id: int | None
    created_at: datetime


class DocumentOut(BaseModel):
    id: int
    claim_id: int
    kind: str
    filename: str
    media_type: str
    sha256: str
    size: int
    description: str
    cites: list[str]
    uploaded_by: str
    created_at: datetime


class TaxpayerIn(_In):
    ein: str = Field(min_length=1, max_length=40, pattern=PLAIN, description="the taxpayer id, as in claims' taxpayer.id")
    name: str = Field("", max_length=300, pattern=PLAIN)
    tax: Literal["cbt", "insurance_premiums"] = Field(description="E1: the tax the credit is taken against")


class TaxpayerOut(BaseModel):
    id: int
    ein: str
    name: str
    tax: str
    preparer: str
    year_one_start: date | None = Field(description="E4: the taxpayer's single credit period, by its first day")


class LocationOut(BaseModel):
    id: int
    taxpayer_id: int
    municipality: str
    address: str
    operations_began: date
    operations_source: str


class LedgerOut(BaseModel):
    taxpayer_id: int
    entries: list[dict[str, Any]]
    carryforward_by_origin: dict[str, str]
    forfeited: str
    refunds_certified: list[dict[str, Any]]
    refund_certified_total: str


class SessionIn(_In):
    username: str = Field(min_length=1, max_length=80, pattern=PLAIN)
    password: str = Field(min_length=1, max_length=1000)


class MeOut(BaseModel):
    id: int
    username: str
    role: Literal[ROLES]  # type: ignore[valid-type]
    csrf_token: str | None = Field(None, description="signed in with the session cookie: send it as X-CSRF-Token with every change")


class TokenIn(_In):
    name: str = Field(min_length=1, max_length=120, pattern=PLAIN)
    days: int = Field(90, ge=1, le=365, description="the token signs in for this many days")


class TokenOut(BaseModel):
    id: int
    name: str
    expires_at: str
    token: str | None = Field(description="shown once; only its SHA-256 is stored (null in an answer replayed for an Idempotency-Key)")


class AuditOut(BaseModel):
    id: int
    at: datetime
    actor: str
    action: str
    entity: str
    entity_id: str
    before: Any = None
    after: Any = None


_EMPLOYEE = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": ["string", "null"]},
        "ownership_interest": {"type": "boolean"},
        "owner_relation": {"enum": [None, "spouse", "dependant", "ancestor", "descendant"]},
        "basis": {"enum": ["permanent", "temporary", "seasonal"]},
        "hours": {"type": "object", "description": "hours by month YYYY-MM",
                  "additionalProperties": {"type": ["number", "string", "null"]}},
    },
}


def claim_document_schemas() -> dict[str, dict]:
    """Component schemas for a claim document: ``ClaimDocument`` and the models it refers to."""
    schema = qmcredit.ClaimHeader.model_json_schema(ref_template="#/components/schemas/{model}")
    defs = schema.pop("$defs", {})
    schema["title"] = "ClaimDocument"
    schema["description"] = "A claim, qmcredit.claim/1 (docs/format.md): embedded employees, or a header naming a payroll table uploaded with it."
    schema.setdefault("properties", {})["employees"] = {"type": "array", "items": {"$ref": "#/components/schemas/ClaimEmployee"}}
    return {**defs, "ClaimEmployee": _EMPLOYEE, "ClaimDocument": schema}


#: a small claim, shown in the API's documentation (and tried first by API testers)
EXAMPLE_CLAIM = {
    "format": "qmcredit.claim/1",
    "taxpayer": {"id": "22-3456789", "name": "Delaware River Fabrication Inc.", "tax": "cbt"},
    "location": {"municipality": "Camden", "address": "1 Market St, Camden NJ", "operations_began": "2004-03-15",
                 "operations_source": "certificate of occupancy 2004-117"},
    "employees": [
        {"id": "E001", "hours": {"2003-06": "160", "2004-04": "160", "2004-05": "152.5", "2005-06": "160"}},
        {"id": "E002", "basis": "permanent", "hours": {"2004-04": "100", "2004-05": "100", "2004-06": "100"}},
    ],
    "periods": [
        {"start": "2004-01-01", "end": "2004-12-31", "liability": "48000.00", "minimum_tax": "2000.00"},
        {"start": "2005-01-01", "end": "2005-12-31", "liability": "30000.00", "minimum_tax": "2000.00",
         "other_credits": [{"name": "Research and development", "amount": "5000.00", "order": "before"}]},
        {"start": "2006-01-01", "end": "2006-12-31", "liability": "9000.00", "minimum_tax": "2000.00"},
    ],
    "options": {},
}


def claim_request_body(description: str) -> dict:
    """The hand-written request body of a route that reads a claim document from the raw body."""
    return {"requestBody": {"required": True, "description": description, "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/ClaimDocument"}, "example": EXAMPLE_CLAIM},
        "multipart/form-data": {"schema": {
            "type": "object", "required": ["claim"],
            "properties": {
                "claim": {"type": "string", "description": "the claim document (JSON text, or a .json file)"},
                "payroll": {"type": "string", "format": "binary", "description": "payroll table: .csv, .parquet, .xlsx or .json"},
            },
        }},
    }}}


def period_request_body() -> dict:
    return {"requestBody": {"required": True, "description": "a privilege or reporting period of docs/format.md (periods[])",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Period"},
                                                             "example": EXAMPLE_CLAIM["periods"][2]}}}}
