"""The claim page (checklist, charts, ledger, every figure's explanation, history), the Form 313
and worksheet downloads, and the workflow buttons (a figure's page is ``figure.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError

from qmcredit import ClaimError

from ...service import claims as stored
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.api.schemas import Reason
from ...service.rules import RULE_IDS
from ..charts import ledger_chart_svg, ledger_table, monthly_chart_svg, monthly_table
from ..figures import PeriodNotFound
from ..pdf import form313_pdf, forms313_pdf, worksheet_pdf
from . import drill
from .guard import check_csrf, viewer
from .load import load_claim
from .render import page, refusal
from .return_forms import form_source

router = APIRouter(include_in_schema=False)

HEADLINE = ("credit.year_one", "credit.year_two", "refund", "carried_forward")


@router.get("/claims/{claim_id:int}")
def claim_page(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    try:
        view = load_claim(request.app.state.db, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back="/claims")
    return _claim_response(request, who, view)


def _claim_response(request: Request, who: Principal, view, status: int = 200, decision: dict | None = None):
    """The claim page; ``decision`` holds a refused decision form's values and its errors by field."""
    det = view.det
    figures = drill.explained(det)
    return page(request, "claim.html", who, status=status, view=view, det=det, figures=figures, headline=HEADLINE,
                monthly_svg=monthly_chart_svg(det), ledger_svg=ledger_chart_svg(det),
                months=monthly_table(det), ledger=ledger_table(det), drill=drill, rule_ids=RULE_IDS,
                behind={name: len(drill.rows_behind(det, name)) for name in figures},
                decision=decision or {"values": {}, "errors": {}, "error": None})


def _pdf(content: bytes, filename: str) -> Response:
    return Response(content, media_type="application/pdf",
                    headers={"content-disposition": f'attachment; filename="{filename}"', "cache-control": "no-store"})


async def _pdf_of(request: Request, who: Principal, claim_id: int, make):
    """The claim's stored revision, the claim it decides and the location printed (``form_source``)
    handed to ``make(claim, det, location)``: the view and the PDF's bytes (the service's errors raised)."""
    view = await run_in_threadpool(load_claim, request.app.state.db, who, claim_id)
    claim, det, location = await run_in_threadpool(form_source, request.app.state.db, view)
    return view, await run_in_threadpool(make, claim, det, location)


@router.get("/claims/{claim_id:int}/form313/{period:int}")
async def form313_download(request: Request, claim_id: int, period: int, who: Principal = Depends(viewer)):
    try:
        view, content = await _pdf_of(request, who, claim_id, lambda c, d, loc: form313_pdf(c, d, period, location=loc))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    except PeriodNotFound as e:
        return refusal(request, who, ApiError(404, str(e), [("period", str(e))]), back=f"/claims/{claim_id}")
    end = view.det["periods"][period]["end"]
    return _pdf(content, f"form313-claim{claim_id}-{end}.pdf")


@router.get("/claims/{claim_id:int}/form313-all")
async def form313_all_download(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    """Every privilege period's Form 313 in one PDF (issue 16)."""
    try:
        _view, content = await _pdf_of(request, who, claim_id, lambda c, d, loc: forms313_pdf(c, d, location=loc))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    return _pdf(content, f"form313-claim{claim_id}-all-periods.pdf")


@router.get("/claims/{claim_id:int}/worksheet")
async def worksheet_download(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    try:
        _view, content = await _pdf_of(request, who, claim_id, lambda c, d, _loc: worksheet_pdf(c, d))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    return _pdf(content, f"form313-worksheet-claim{claim_id}.pdf")


STEPS = {"submit": "submit", "review": "start_review", "certify-refund": None}


@router.post("/claims/{claim_id:int}/{step}")
async def workflow_step(request: Request, claim_id: int, step: str, who: Principal = Depends(viewer)):
    """submit, review, decision, certify-refund: the service's own workflow functions."""
    form = await request.form()
    db = request.app.state.db
    try:
        check_csrf(request, form)
        if step == "decision":
            outcome, reasons = _decision(form)
            await run_in_threadpool(db.write, lambda s: stored.decide(s, who, claim_id, outcome, reasons))
        elif step == "certify-refund":
            await run_in_threadpool(db.write, lambda s: stored.certify_refund(s, who, claim_id))
        elif step in STEPS:
            await run_in_threadpool(db.write, lambda s: stored.move(s, who, claim_id, STEPS[step]))
        else:
            raise ApiError(404, f"no step {step!r}", [("step", "submit, review, decision or certify-refund")])
    except ApiError as e:
        if step == "decision" and e.status == 422:
            values = {k: str(form.get(k) or "") for k in ("outcome", "rule", "message")}
            errors = {loc.split(".")[-1].split("[")[0]: msg for loc, msg in e.problems}
            if "reasons" in errors:  # an adjustment or denial without a reason: the fix is to cite a rule
                errors.setdefault("rule", errors.pop("reasons"))
            view = await run_in_threadpool(load_claim, db, who, claim_id)
            return _claim_response(request, who, view, 422, {"values": values, "errors": errors, "error": e.error})
        return refusal(request, who, e, back=f"/claims/{claim_id}")
    return RedirectResponse(f"/claims/{claim_id}", status_code=303)


OUTCOMES = ("approved", "adjusted", "denied")


def _decision(form) -> tuple[str, list[dict]]:
    """The outcome and its reasons (each a rule id of RULES.md and the examiner's words)."""
    outcome = str(form.get("outcome") or "")
    if outcome not in OUTCOMES:
        raise ApiError(422, "choose approve, adjust or deny", [("outcome", "choose one of approve, adjust, deny")])
    rule, message = str(form.get("rule") or "").strip(), str(form.get("message") or "").strip()
    if not rule and not message:
        return outcome, []
    try:
        reason = Reason(rule=rule, message=message)
    except ValidationError as e:
        problems = [(str(err["loc"][0]), FIXES[str(err["loc"][0])]) for err in e.errors()]
        raise ApiError(422, "the reason needs a rule and a few words", problems) from None
    return outcome, [reason.model_dump()]


FIXES = {"rule": "choose the rule of RULES.md the reason cites",
         "message": "say why in plain words (at most 4000 characters, no control characters)"}
