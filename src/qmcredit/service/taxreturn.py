"""The taxpayer's return (RULES.md L6): the office keeps one claim per location, and decides a
taxpayer's current location claims together, as ``qmcredit.decide`` decides a claim with
``locations`` (FORMAT.md "Several locations of one taxpayer"): one room per privilege period,
shared among the locations. No database here: the caller hands the members over and stores.

The return's ``periods`` and ``options`` are one: the claim being filed or amended gives them, and
periods only another member gives are kept (the union by start day). A member whose document
differs is rewritten with the return's periods and options, so that each claim's document still
decides alone, as a one-location claim, the way it was stored. The locations are listed oldest
claim first (E4: the first listed location's window is the taxpayer's; L6: ties go to it).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

import qmcredit
from qmcredit import ClaimError
from qmcredit.claim import Claim, Site

from . import exact_json
from .errors import ApiError
from .evaluate import Evaluation, evaluate, plain



@dataclass(frozen=True)
class Member:
    """A location claim of the return: its id and its evaluation (document and payroll as stored)."""

    claim_id: int
    evaluation: Evaluation


@dataclass(frozen=True)
class Share:
    """A member's part of the decided return: its document (rewritten when the return's periods or
    options differed from its own) and its determination JSON (its location's figures)."""

    claim_id: int
    evaluation: Evaluation
    determination_json: str
    rewritten: tuple[str, ...]  # what of the document changed: "periods", "options"
    #: the determination as JSON values, when the caller has them (else read from the text); its
    #: trace (``explanation``) may be left out, it is in the text
    data: dict | None = None

    @property
    def result(self) -> dict:
        return self.data if self.data is not None else exact_json.loads_stored(self.determination_json)


def location_documents(document: str) -> list[str]:
    """A claim document with ``locations`` as one one-location document per location (the
    return's taxpayer, periods and options in each, the location's own employees); any other
    document as itself. The office files a several-location claim so (the demo's examples)."""
    doc = exact_json.loads(document)
    if not isinstance(doc, dict) or not isinstance(doc.get("locations"), list) or "location" in doc:
        return [document]
    shared = {k: v for k, v in doc.items() if k != "locations"}
    return [exact_json.dumps(shared | {
        "location": {k: v for k, v in site.items() if k not in ("id", "employees", "payroll")},
        **{k: site[k] for k in ("employees", "payroll") if k in site}}) for site in doc["locations"] if isinstance(site, dict)]


def _figures(doc: dict) -> tuple[list, dict]:
    return list(doc.get("periods") or []), dict(doc.get("options") or {})


def the_return(members: list[Member], lead: int) -> tuple[list, dict]:
    """The return's periods (union by start; ``lead``'s on the same start, then the oldest
    claim's) and options (``lead``'s)."""
    ordered = sorted(members, key=lambda m: (m.claim_id != lead, m.claim_id))
    periods: dict[str, dict] = {}
    for m in ordered:
        for p in _figures(exact_json.loads(m.evaluation.document))[0]:
            periods.setdefault(str(p.get("start")) if isinstance(p, dict) else "", p)
    options = _figures(exact_json.loads(ordered[0].evaluation.document))[1]
    return [periods[k] for k in sorted(periods)], options


def _aligned(m: Member, periods: list, options: dict) -> tuple[Evaluation, tuple[str, ...]]:
    """``m`` with the return's periods and options (re-evaluated only if they differ)."""
    doc = exact_json.loads(m.evaluation.document)
    mine = _figures(doc)
    changed = tuple(name for name, a, b in (("periods", mine[0], periods), ("options", mine[1], options)) if a != b)
    if not changed:
        return m.evaluation, ()
    doc["periods"], doc["options"] = periods, options
    try:
        return evaluate(exact_json.dumps(doc), m.evaluation.payroll), changed
    except ClaimError as e:
        raise ApiError(409, f"claim {m.claim_id} of this taxpayer cannot take the return's periods: the returns disagree", [
            (f"claims[{m.claim_id}].{p.location}", p.message) for p in e.problems]) from None


def combine(members: list[tuple[int, Evaluation]]) -> Claim:
    """One claim with ``locations`` (ids ``claim-<id>``) from one-location claims that share
    their periods and options: the engine's several-location claim."""
    sites = tuple(Site(id=f"claim-{cid}", **ev.header.location.model_dump()) for cid, ev in members)
    whole = members[0][1].header.model_copy(update={"location": None, "locations": sites, "payroll": None})
    parts = tuple(Claim(whole.part(s), ev.claim.payroll, ev.claim.source, location_id=s.id)
                  for s, (_cid, ev) in zip(sites, members))
    return Claim(whole, pl.concat([p.payroll for p in parts]), "the taxpayer's return", parts=parts)


def decide(members: list[Member], lead: int | None) -> dict[int, Share]:
    """Each member's share of the return. ``lead``: the claim being filed or amended, whose
    periods and options are the return's (None: the oldest claim's). A lone member is decided
    alone, exactly as a one-location claim."""
    if not members:
        return {}
    if len(members) == 1:  # a lone claim is its own return: nothing to align, decided as it is
        ev = members[0].evaluation
        return {members[0].claim_id: Share(members[0].claim_id, ev, ev.determination_json, (), ev.figures)}
    members = sorted(members, key=lambda m: m.claim_id)
    lead = members[0].claim_id if lead is None or lead not in {m.claim_id for m in members} else lead
    periods, options = the_return(members, lead)
    aligned = [(m, *_aligned(m, periods, options)) for m in members]
    det = qmcredit.decide(combine([(m.claim_id, ev) for m, ev, _ in aligned])).to_dict(explain=True)
    ids = [m.claim_id for m in members]
    shared = {"claims": ids, **{k: det.get(k) for k in ("periods", "credit", "refund", "carried_forward", "explanation")}}
    out = {}
    for (m, ev, changed), loc in zip(aligned, det["locations"]):
        own = {"format": det["format"], **{k: v for k, v in loc.items() if k != "id"}, "return": shared}
        out[m.claim_id] = Share(m.claim_id, ev, exact_json.dumps(own), changed, own)
    return out


def form313(members: list[Member], claim_id: int) -> list[dict]:
    """Form 313 Parts I-V of ``claim_id``'s location in the return of ``members`` (stored, so
    sharing its periods): line 16 lists the other locations' credit, line 18 is this location's
    allowable credit under the shared room (L6)."""
    from qmcredit.form313 import form313 as figures

    members = sorted(members, key=lambda m: m.claim_id)
    combined = combine([(m.claim_id, m.evaluation) for m in members])
    det = qmcredit.decide(combined)
    i = [m.claim_id for m in members].index(claim_id)
    return plain(figures(combined.parts[i], det.locations[i], of=det))
