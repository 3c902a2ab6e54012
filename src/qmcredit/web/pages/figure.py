"""A figure's page (B1): its rule, citation, reading, parameters, inputs and what it depends on, and
the employee-months behind it — grouped (by employee, month or status), filtered and paged, each
row down to its payroll row. ``month-YYYY-MM`` gives one month's employees."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request

from ...service.auth import Principal
from ...service.errors import ApiError
from . import drill
from .guard import viewer
from .labels import label
from .load import load_claim
from .render import page, refusal

router = APIRouter(include_in_schema=False)

FILTERS = ("employee", "month", "status", "period")


def _query(request: Request) -> dict[str, str]:
    q = {k: (request.query_params.get(k) or "").strip() for k in (*FILTERS, "group", "page")}
    if "group" not in request.query_params:
        q["group"] = "" if any(q[f] for f in FILTERS) else "employee"
    if q["group"] not in drill.GROUPS:
        q["group"] = ""
    return q


def link(base: str, query: dict, **change) -> str:
    """The page's address with ``change`` applied to its query (blank values left out)."""
    merged = {**query, **change}
    return base + "?" + urlencode({k: v for k, v in merged.items() if v not in ("", None)} | {"group": merged.get("group", "")})


@router.get("/claims/{claim_id:int}/figures/{figure}")
def figure_page(request: Request, claim_id: int, figure: str, who: Principal = Depends(viewer)):
    try:
        view = load_claim(request.app.state.db, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back="/claims")
    det = view.det
    month = figure[len("month-"):] if figure.startswith("month-") else None
    entry = None if month else drill.explained(det).get(figure)
    if month is None and entry is None:
        return refusal(request, who, ApiError(404, f"claim {claim_id} has no figure {figure!r}",
                                              [("figure", "pick a figure on the claim page")]), back=f"/claims/{claim_id}")
    behind = drill.rows_behind(det, month=month) if month else drill.rows_behind(det, figure)
    q = _query(request)
    rows = drill.filtered(behind, q["employee"], q["month"], q["status"], q["period"])
    groups = drill.grouped(rows, q["group"]) if q["group"] else None
    shown, where = drill.paged(groups if groups is not None else rows, q["page"])
    statuses = drill.employee_months(det).get("statuses") or {}
    base = f"/claims/{claim_id}/figures/{figure}"
    return page(request, "figure.html", who, view=view, figure=figure, title=label(figure, det), month=month, entry=entry,
                rows=shown, groups=groups is not None, where=where, q=q, total_behind=len(behind), base=base,
                link=lambda **change: link(base, q, **change), statuses=statuses, drill=drill, det=det,
                status_choices=sorted({r.get("status") for r in behind if r.get("status")}),
                period_choices=[p for p in drill.PERIODS if any(r.get("period") == p for r in behind)],
                periods=drill.periods_behind(det, figure) if entry else [])
