"""The program's cost, for examiners and auditors (issue 17 item 5): what the credit has cost so
far over the stored claims (by fiscal year, status and credit year, refunds certified), and a
reform run over them (a listed reform file, or one uploaded). Reads only (``service.cost``)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool

from qmcredit import ClaimError

from ...analysis.report import bar_chart, by_year, series, side_by_side
from ...law.parameter_set import ParameterSet
from ...service import cost as office_cost
from ...service.auth import Principal
from ...service.errors import ApiError
from .guard import check_csrf, viewer
from .render import page, problems_of, refusal

router = APIRouter(include_in_schema=False)


def _fy_chart(tables: dict, names: list[str], title: str) -> str:
    fy = tables["by_fiscal_year"]
    years = sorted(set(fy.get_column("fiscal_year").to_list()))
    return bar_chart(title, [f"FY{y}" for y in years], series(fy, "fiscal_year", years, names, "cost"))


def _compared(reform: ParameterSet, tables: dict) -> dict:
    """A reform's tables over the stored claims, as the page shows them."""
    names = ["baseline", reform.name]
    fy = tables["by_fiscal_year"]
    claims = tables["claims"]
    return {"name": reform.name, "description": reform.description, "changes": [c.row() for c in reform.changes],
            "totals": side_by_side(tables["totals"]), "by_fiscal_year": by_year(fy, names, sorted(set(fy.get_column("fiscal_year").to_list()))),
            "counts": tables["changes"], "differ": claims.filter(claims.get_column("change") != "same").head(100),
            "chart": _fy_chart(tables, names, f"Cost by fiscal year: baseline and {reform.name}")}


def _view(db, reform: ParameterSet | None) -> dict:
    with db.read() as session:
        found = office_cost.so_far(session)
        compared = _compared(reform, office_cost.reform_over_stored(session, reform)) if reform is not None else None
    found["chart"] = _fy_chart(found["tables"], ["baseline"], "Cost so far by fiscal year (applied + refunded)")
    return {"found": found, "reform": compared}


async def _page(request: Request, who: Principal, reform: ParameterSet | None = None, problems: list | None = None, chosen: str = ""):
    view = await run_in_threadpool(_view, request.app.state.db, reform)
    return page(request, "cost.html", who, status=422 if problems else 200, reforms=list(office_cost.reform_files()),
                chosen=chosen, problems=problems or [], **view)


def _allowed(request: Request, who: Principal):
    if who.role not in office_cost.ROLES:
        return refusal(request, who, ApiError(403, "the program's cost is for examiners and auditors",
                                              [("role", f"you are signed in as a {who.role}; ask an examiner or auditor")]), back="/claims")
    return None


@router.get("/cost")
async def cost_page(request: Request, who: Principal = Depends(viewer)):
    refused = _allowed(request, who)
    if refused is not None:
        return refused
    name = (request.query_params.get("reform") or "").strip()
    if not name:
        return await _page(request, who)
    try:
        reform = office_cost.chosen_reform(name)
    except ClaimError as e:
        return await _page(request, who, problems=problems_of(e)[1], chosen=name)
    return await _page(request, who, reform, chosen=name)


@router.post("/cost")
async def cost_upload(request: Request, who: Principal = Depends(viewer)):
    refused = _allowed(request, who)
    if refused is not None:
        return refused
    form = await request.form(max_part_size=office_cost.MAX_REFORM_BYTES + 1)
    try:
        check_csrf(request, form)
    except ApiError as e:
        return refusal(request, who, e, back="/cost")
    upload = form.get("reform_file")
    if upload is None or isinstance(upload, str) or not upload.filename:
        return await _page(request, who, problems=[{"location": "reform_file", "message": "choose a reform file (TOML) to upload"}])
    try:
        reform = office_cost.uploaded_reform(upload.filename, await upload.read())
    except ClaimError as e:
        return await _page(request, who, problems=problems_of(e)[1])
    return await _page(request, who, reform)
