"""What the credit has cost so far over the office's stored claims, and what a reform would cost
over them (issue 17 item 5). Reads only.

The cost is that of ``analysis.cost`` (applied + refunded, by the State fiscal year in which each
period ends), read from each claim's current determination as stored (``jsontext.parse_stored``:
text this program wrote). Claims **counted** are those filed and not denied (submitted, under
review, approved, adjusted, refund certified) and not retired duplicates; drafts and denied
claims are shown by status but cost nothing. Refunds **certified** (R1, by an examiner) are
summed by the fiscal year of the period they were certified for.

A reform is run over the counted claims: each stored claim's document and payroll decided again
under the baseline and under the reform (``core.decide_many`` given each parameter set), side by
side in the tables of ``analysis.tables``. Reform files are those of the source tree's
``examples/reforms`` (chosen by name from that listing, never by a path the client gives), or an
uploaded file, read by the one strict parser (``law.parameter_set.parse_reform``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl
from sqlalchemy import select
from sqlalchemy.orm import Session

import qmcredit

from .. import jsontext
from ..analysis.cost import NO_POSITIONS, ClaimCost, cost_tables, fiscal_year, from_determination
from ..analysis.tables import analysis_tables
from ..law.parameter_set import ParameterSet, baseline, parse_reform
from ..money import from_cents, money
from ..problems import ClaimError, Problem
from . import claims as stored
from .evaluate import read_payroll
from .models import STATES, Claim, RefundCertification, Taxpayer

COUNTED = ("submitted", "under_review", "approved", "adjusted", "refund_certified")
ROLES = ("examiner", "auditor")  # the office's analysts; preparers see their own claims only, never the program's cost
MAX_REFORM_BYTES = 64 * 1024


@dataclass
class StoredClaim:
    """A claim's current revision: its state, tax, determination, and what decides it again."""

    claim_id: int
    state: str
    tax: str
    det: dict
    document: str
    payroll: object | None  # evaluate.Upload

    @property
    def counted(self) -> bool:
        return self.state in COUNTED


def read_stored(session: Session) -> list[StoredClaim]:
    """Every claim but retired duplicates, in claim order, at its current revision."""
    found = session.execute(select(Claim, Taxpayer.tax).join(Taxpayer, Taxpayer.id == Claim.taxpayer_id)
                            .where(Claim.duplicate_of.is_(None)).order_by(Claim.id)).all()
    out = []
    for claim, tax in found:
        rev = stored.current_revision(session, claim)
        out.append(StoredClaim(claim.id, claim.state, tax, jsontext.parse_stored(rev.determination), rev.document,
                               stored.payroll_of(session, rev)))
    return out


def refunds_certified(session: Session) -> dict[int, int]:
    """R1 certified by examiners: cents by the fiscal year of the period certified for."""
    out: dict[int, int] = {}
    for end, amount in session.execute(select(RefundCertification.period_end, RefundCertification.amount)
                                       .join(Claim, Claim.id == RefundCertification.claim_id).where(Claim.duplicate_of.is_(None))):
        out[fiscal_year(end)] = out.get(fiscal_year(end), 0) + int(amount * 100)
    return out


def _costs(claims: list[StoredClaim]) -> list[ClaimCost]:
    return [from_determination(str(c.claim_id), c.tax, c.det) for c in claims]


def so_far(session: Session) -> dict:
    """The cost so far: the counted claims' tables (``analysis.cost``), each status's claims and
    figures, and the refunds certified beside the refunds determined, by fiscal year."""
    claims = read_stored(session)
    counted = [c for c in claims if c.counted]
    tables = cost_tables(_costs(counted))
    by_state = [{"state": state, "counted": state in COUNTED, **row}
                for state in STATES
                for row in _state_row([c for c in claims if c.state == state])]
    certified = refunds_certified(session)
    determined = {r["fiscal_year"]: r["refunded"] for r in tables["by_fiscal_year"].iter_rows(named=True)}
    refunds = [{"fiscal_year": fy, "determined": determined.get(fy, "0.00"), "certified": money(from_cents(certified.get(fy, 0)))}
               for fy in sorted(set(determined) | set(certified))]
    return {"claims": len(claims), "counted": len(counted), "tables": tables, "by_state": by_state, "refunds": refunds,
            "certified_total": money(from_cents(sum(certified.values())))}


def _state_row(claims: list[StoredClaim]) -> list[dict]:
    if not claims:
        return []
    row = cost_tables(_costs(claims)).get("totals").row(0, named=True)
    return [{k: row[k] for k in ("claims", "eligible", "credit", "applied", "refunded", "forfeited", "carried_forward", "cost")}]


def reform_files() -> dict[str, Path]:
    """The reform files the office offers, by name: ``examples/reforms/*.toml`` of the source tree
    (or of the working directory)."""
    for root in (Path(qmcredit.__file__).resolve().parents[2], Path.cwd()):
        found = {p.stem: p for p in sorted((root / "examples" / "reforms").glob("*.toml"))}
        if found:
            return found
    return {}


def chosen_reform(name: str) -> ParameterSet:
    """A listed reform file by its name (``reform_files``); any other name is refused."""
    files = reform_files()
    if name not in files:
        raise ClaimError([Problem("reform", f"{name!r} is not one of the office's reform files ({', '.join(files) or 'none'}); "
                                            "choose one from the list or upload a reform file")])
    return parse_reform(files[name].read_text("utf-8"), f"{name}.toml")


def uploaded_reform(filename: str, content: bytes) -> ParameterSet:
    """An uploaded reform file, read by the one strict parser."""
    where = Path(filename or "reform.toml").name
    if len(content) > MAX_REFORM_BYTES:
        raise ClaimError([Problem(where, f"{len(content):,} bytes; a reform file is at most {MAX_REFORM_BYTES:,} bytes")])
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ClaimError([Problem(where, f"not UTF-8 text ({e.reason} at byte {e.start})")]) from None
    return parse_reform(text, where)


def _decided(claims: list[StoredClaim], built: list[qmcredit.Claim | None], params: ParameterSet) -> list[ClaimCost]:
    """Each claim decided under ``params`` (all in one pass; one by one if one is refused); a
    claim that cannot be read or decided under the set counts as invalid."""

    def one(claim: qmcredit.Claim | None) -> dict | None:
        try:
            return None if claim is None else qmcredit.decide_many([claim], explain=False, params=params)[0].to_dict(explain=False)
        except ClaimError:
            return None

    try:
        dets = iter(qmcredit.decide_many([b for b in built if b is not None], explain=False, params=params))
        found = [None if b is None else next(dets).to_dict(explain=False) for b in built]
    except ClaimError:
        found = [one(b) for b in built]
    return [from_determination(str(c.claim_id), c.tax, det) if det is not None
            else ClaimCost(str(c.claim_id), c.tax, False, False, None, (0, 0), (NO_POSITIONS, NO_POSITIONS), (), 0, 0, False)
            for c, det in zip(claims, found)]


def reform_over_stored(session: Session, reform: ParameterSet) -> dict[str, pl.DataFrame]:
    """The counted claims decided again under the baseline and ``reform``: ``analysis_tables``."""
    claims = [c for c in read_stored(session) if c.counted]
    built = []
    for c in claims:
        try:
            table = read_payroll(c.payroll) if c.payroll is not None else None
            built.append(qmcredit.claim_from_dict(jsontext.parse_stored(c.document), payroll=table, source=str(c.claim_id)))
        except ClaimError:
            built.append(None)
    return analysis_tables({"baseline": _decided(claims, built, baseline()), reform.name: _decided(claims, built, reform)})
