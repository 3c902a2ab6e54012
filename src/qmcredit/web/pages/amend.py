"""Amending a claim from the pages (issue 15): the whole document with a reason, next year's period
(the next return), or a past period. Each is previewed first, the figures before and after side by
side and nothing stored; confirming decides the same document again and stores it with
``service.claims.amend`` from the revision it was made from (a claim that moved on meanwhile is
refused, 409). The documents are changed as the API's ``PUT /claims/{id}``, ``POST .../periods``
and ``PUT .../periods/{start}`` change them, with the same reasons."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import date, timedelta

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse

from qmcredit import ClaimError, Problem

from ...service import claims as stored
from ...service import exact_json
from ...service.access import claim_for, require
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.evaluate import Upload, evaluate, names_a_table
from .guard import check_csrf, viewer
from .render import page, problems_of, refusal
from .upload import _previewed, _upload

router = APIRouter(include_in_schema=False)

#: a period's fields on the form: name, label, kind, help (citing the rule)
PERIOD_FIELDS = (
    ("start", "Period starts", "date", "the privilege (or reporting) period's first day"),
    ("end", "Period ends", "date", "its last day"),
    ("liability", "Tax otherwise due", "money", "the period's tax before this credit (L2)"),
    ("minimum_tax", "Minimum tax", "money", "N.J.S.A. 54:10A-5(e) (L2); leave empty to derive it (L2c)"),
    ("alternative_minimum_assessment", "Alternative minimum assessment", "money",
     "N.J.S.A. 54:10A-5a, periods of 2002-2006 only (L2b)"),
    ("nj_gross_receipts", "New Jersey gross receipts", "money", "for the minimum tax's schedule (L2c)"),
    ("group_payroll", "Group's total payroll", "money", "affiliated or controlled group (L2c)"),
    ("s_corporation", "S corporation", "bool", "the minimum tax of an S corporation (L2c)"),
    ("group_payroll_5m", "Group payroll of $5,000,000 or more", "bool", "when the group's payroll is not given (L2c)"),
    ("combined_group_member", "Member of a combined group", "bool", "filing a New Jersey combined return (L2c)"),
)
HEADLINE = (("eligible", "Eligible"), ("credit.year_one", "Credit, year one"), ("credit.year_two", "Credit, year two"),
            ("refund", "Refund (R1)"), ("carried_forward", "Carried forward"))
PERIOD_FIGURES = (("allowed", "allowed"), ("room", "room"), ("applied", "applied"), ("refund", "refund"),
                  ("forfeited", "forfeited"), ("carried_forward", "carried forward"))
KINDS = {"claim": "Amend the claim", "next": "Add next year's period", "period": "Amend a past period"}
REASON_LIMIT = 2000


@dataclass
class Current:
    """The claim's current revision, as an amendment starts from it."""

    claim_id: int
    state: str
    revision: int
    document: dict
    det: dict
    payroll: Upload | None
    payroll_id: int | None


def current(db, who: Principal, claim_id: int) -> Current:
    with db.read() as session:
        claim, _tp = claim_for(session, who, claim_id)
        rev = stored.current_revision(session, claim)
        return Current(claim.id, claim.state, rev.number, exact_json.loads_stored(rev.document),
                       exact_json.loads_stored(rev.determination), stored.payroll_of(session, rev), rev.payroll_document_id)


def _figure(det: dict, name: str):
    node = det
    for part in name.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _shown(value) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "—" if value is None else str(value)


def compare(before: dict, after: dict) -> dict:
    """The figures before and after, each row marked when it changes: the headline, then per period."""
    head = [{"key": n, "label": label, "before": _shown(_figure(before, n)), "after": _shown(_figure(after, n))} for n, label in HEADLINE]
    b = {p["start"]: p for p in before.get("periods") or []}
    a = {p["start"]: p for p in after.get("periods") or []}
    periods = []
    for start in sorted(set(b) | set(a)):
        pb, pa = b.get(start) or {}, a.get(start) or {}
        rows = [{"key": k, "label": label, "before": _shown(pb.get(k)) if pb else "not filed",
                 "after": _shown(pa.get(k)) if pa else "removed"} for k, label in PERIOD_FIGURES]
        periods.append({"start": start, "end": (pa or pb).get("end"), "rows": rows})
    for row in head + [r for p in periods for r in p["rows"]]:
        row["changed"] = row["before"] != row["after"]
    return {"headline": head, "periods": periods, "changes": sum(r["changed"] for r in head + [r for p in periods for r in p["rows"]])}


def period_values(form) -> dict[str, str]:
    """The period form's values as typed (check boxes "on"/"")."""
    return {name: str(form.get(f"p-{name}") or "").strip() for name, *_ in PERIOD_FIELDS}


def period_from_values(values: dict[str, str], original: dict | None) -> dict:
    """The period the form describes, over ``original`` (a past period keeps what the form does not
    show, e.g. its other credits); an emptied field drops the value, an unticked box is false where
    the period had it."""
    period = dict(original or {})
    for name, _label, kind, _help in PERIOD_FIELDS:
        value = values.get(name, "")
        if kind == "bool":
            if value:
                period[name] = True
            elif name in period:
                period[name] = False
        elif value:
            period[name] = value
        else:
            period.pop(name, None)
    return period


def values_of_period(period: dict) -> dict[str, str]:
    """A period's fields as the form shows them (a ticked box "on")."""
    def shown(name: str, kind: str) -> str:
        value = period.get(name)
        if kind == "bool":
            return "on" if value else ""
        return "" if value is None or isinstance(value, (dict, list)) else str(value)
    return {name: shown(name, kind) for name, _label, kind, _help in PERIOD_FIELDS}


def next_period_values(doc: dict) -> dict[str, str]:
    """The period after the last one: same length, the same tax figures to start from."""
    periods = [p for p in doc.get("periods") or [] if isinstance(p, dict) and p.get("end")]
    if not periods:
        return {name: "" for name, *_ in PERIOD_FIELDS}
    last = periods[-1]
    values = values_of_period({k: v for k, v in last.items() if k not in ("start", "end")})
    try:
        start, end = date.fromisoformat(str(last["start"])), date.fromisoformat(str(last["end"]))
        new_start = end + timedelta(days=1)
        try:
            new_end = end.replace(year=end.year + 1) if (end - start).days >= 364 else new_start + (end - start)
        except ValueError:  # 29 February
            new_end = end + timedelta(days=365)
        values |= {"start": new_start.isoformat(), "end": new_end.isoformat()}
    except (KeyError, ValueError):
        pass
    return values


def _period_of(doc: dict, start: str) -> dict:
    for p in doc.get("periods") or []:
        if isinstance(p, dict) and str(p.get("start")) == start:
            return p
    starts = [str(p.get("start")) for p in doc.get("periods") or [] if isinstance(p, dict)]
    raise ApiError(404, f"the claim has no period starting {start}", [("period_start", f"periods start on {', '.join(starts) or 'no day'}")])


def amended_document(cur: Current, kind: str, form, new_payroll: Upload | None) -> tuple[str, str]:
    """The amended document (as JSON text) and the revision's reason, as the API makes them."""
    words = str(form.get("reason") or "").strip()
    if len(words) > REASON_LIMIT or "\x00" in words:
        raise ApiError(422, "the reason is too long", [("reason", f"at most {REASON_LIMIT} characters")])
    if kind == "claim":
        if not words:
            raise ApiError(422, "say why the claim is amended", [("reason", "give the reason for the amendment")])
        text = str(form.get("document") or "")
        if new_payroll is not None:
            doc = exact_json.loads(text, "document")
            if not isinstance(doc, dict):
                raise ClaimError([Problem("document", "a claim is a JSON object")])
            doc["payroll"] = new_payroll.filename
            text = exact_json.dumps(doc)
        return text, words
    doc = dict(cur.document)
    values = period_values(form)
    if kind == "next":
        doc["periods"] = list(doc.get("periods") or []) + [period_from_values(values, None)]
        reason = "next period's return filed"
    else:
        start = str(form.get("period_start") or "")
        original = _period_of(doc, start)
        changed = period_from_values(values, original)
        doc["periods"] = [changed if p is original else p for p in doc.get("periods") or []]
        reason = f"period {start} amended"
    return exact_json.dumps(doc), f"{reason}: {words}" if words else reason


def _payroll_for(cur: Current, kind: str, document: str, new_payroll: Upload | None) -> tuple[Upload | None, int | None]:
    """The payroll the amendment is decided with, and the stored table it keeps (the API's rule:
    a period change keeps the claim's table; a whole amendment naming a table keeps it unless a new one is sent)."""
    if new_payroll is not None:
        return new_payroll, None
    if kind != "claim" or names_a_table(document):
        return cur.payroll, cur.payroll_id
    return None, None


def _form_page(request: Request, who: Principal, cur: Current, kind: str, *, values: dict | None = None,
               document: str | None = None, reason: str = "", period_start: str = "", result: dict | None = None,
               new_payroll: Upload | None = None, status: int = 200):
    errors: dict[str, list[str]] = {}
    for p in (result or {}).get("problems", []):
        errors.setdefault(_field(p["location"]), []).append(f"{p['location']}: {p['message']}")
    return page(request, "amend.html", who, status=status, cur=cur, kind=kind, title=KINDS[kind], fields=PERIOD_FIELDS,
                values=values or {}, document=document, reason=reason, period_start=period_start, result=result,
                errors=errors, new_payroll=new_payroll,
                payroll_b64=base64.b64encode(new_payroll.content).decode() if new_payroll and result else "")


def _field(location: str) -> str:
    for name, *_ in PERIOD_FIELDS:
        if location.endswith(f".{name}") and location.startswith("periods"):
            return f"p-{name}"
    return "reason" if location == "reason" else "general"


def _pretty(doc: dict) -> str:
    """The document as the text area shows it: a key a line, a list's items a line each, exact numbers."""
    def value(v) -> str:
        if isinstance(v, list) and v:
            return "[\n" + ",\n".join(f"    {exact_json.dumps(item)}" for item in v) + "\n  ]"
        return exact_json.dumps(v)
    return "{\n" + ",\n".join(f"  {exact_json.dumps(k)}: {value(v)}" for k, v in doc.items()) + "\n}"


def _form_or_refusal(request: Request, who: Principal, claim_id: int, kind: str, back: str, period_start: str | None = None):
    """The GET of an amendment form: the claim's current revision (and the period amended) shown
    in the form, or the service's refusal as a page."""
    try:
        cur = current(request.app.state.db, who, claim_id)
        if kind == "claim":
            return _form_page(request, who, cur, kind, document=_pretty(cur.document))
        if kind == "next":
            return _form_page(request, who, cur, kind, values=next_period_values(cur.document))
        period = _period_of(cur.document, period_start)
    except ApiError as e:
        return refusal(request, who, e, back=back)
    return _form_page(request, who, cur, kind, values=values_of_period(period), period_start=period_start)


@router.get("/claims/{claim_id:int}/amend")
def amend_form(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    return _form_or_refusal(request, who, claim_id, "claim", back="/claims")


@router.get("/claims/{claim_id:int}/periods/new")
def next_period_form(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    return _form_or_refusal(request, who, claim_id, "next", back="/claims")


@router.get("/claims/{claim_id:int}/periods/{period_start}")
def period_form(request: Request, claim_id: int, period_start: str, who: Principal = Depends(viewer)):
    return _form_or_refusal(request, who, claim_id, "period", back=f"/claims/{claim_id}", period_start=period_start)


def preview(cur: Current, kind: str, form, new_payroll: Upload | None) -> dict:
    """Decide the amended claim without storing it: every problem, or the figures before and after."""
    out = {"problems": [], "det": None, "document": None, "reason": "", "compare": None}
    try:
        document, out["reason"] = amended_document(cur, kind, form, new_payroll)
        out["document"] = document
        payroll, _keep = _payroll_for(cur, kind, document, new_payroll)
        out["det"] = evaluate(document, payroll).result
    except (ApiError, ClaimError) as e:
        out["problems"] = problems_of(e)[1]
        return out
    out["compare"] = compare(cur.det, out["det"])
    return out


@router.post("/claims/{claim_id:int}/amend/preview")
async def amend_preview(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    form = await request.form(max_part_size=request.app.state.settings.upload_limit)
    kind = str(form.get("kind") or "claim")
    try:
        check_csrf(request, form)
        require(who, "preparer", "examiner")
        if kind not in KINDS:
            raise ApiError(422, "unknown amendment", [("kind", "claim, next or period")])
        cur = await run_in_threadpool(current, request.app.state.db, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    new_payroll = await _upload(form, "payroll") if kind == "claim" else None
    result = await run_in_threadpool(preview, cur, kind, form, new_payroll)
    return _form_page(request, who, cur, kind, values=period_values(form), document=str(form.get("document") or ""),
                      reason=str(form.get("reason") or ""), period_start=str(form.get("period_start") or ""),
                      result=result, new_payroll=new_payroll, status=200 if result["det"] else 422)


@router.post("/claims/{claim_id:int}/amend/confirm")
async def amend_confirm(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    """Store the amendment previewed: the same document decided again, from the revision previewed."""
    form = await request.form(max_part_size=request.app.state.settings.upload_limit * 2)
    db = request.app.state.db
    try:
        check_csrf(request, form)
        require(who, "preparer", "examiner")
        kind = str(form.get("kind") or "claim")
        cur = await run_in_threadpool(current, db, who, claim_id)
        document, reason = str(form.get("document") or ""), str(form.get("amend_reason") or "amended")[:REASON_LIMIT]
        new_payroll = _previewed(form) if form.get("payroll_b64") else None
        payroll, keep = _payroll_for(cur, kind, document, new_payroll)
        ev = await run_in_threadpool(evaluate, document, payroll)
        base = int(str(form.get("revision") or "0") or 0)
        await run_in_threadpool(db.write, lambda s: stored.amend(s, who, claim_id, ev, reason, base_revision=base,
                                                                 reuse_payroll_id=keep))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    except ValueError:
        return refusal(request, who, ApiError(422, "the form was damaged", [("revision", "open the amendment again")]),
                       back=f"/claims/{claim_id}")
    return RedirectResponse(f"/claims/{claim_id}", status_code=303)
