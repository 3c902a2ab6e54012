"""What-if: the stored claim with one change (an hour count, a hire, a period's liability, an
option), decided again beside the filed figures. Reads only: nothing is written to the database."""

from __future__ import annotations

import copy

import polars as pl
from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool

import qmcredit
from qmcredit import ClaimError, Problem

from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.evaluate import read_payroll
from ..charts import monthly_chart_svg
from . import drill
from .guard import viewer
from .load import ClaimView, load_claim
from .render import page, problems_of, refusal

router = APIRouter(include_in_schema=False)

CHANGE_FIELDS = ("employee", "first_month", "last_month", "hours", "whole_positions", "part_time_excludes_temporary",
                 "refund", "carryforward_periods")


def months_between(first: str, last: str) -> list[str]:
    """The calendar months first..last (YYYY-MM), both included; [] unless both are months in order."""
    try:
        y, m = (int(x) for x in first.split("-"))
        ly, lm = (int(x) for x in last.split("-"))
    except ValueError:
        return []
    out = []
    while (y, m) <= (ly, lm) and len(out) < 600:
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def changes_of(query, periods: int) -> dict:
    """The what-if asked for: hours, liabilities and options (blank fields change nothing)."""
    got = {k: (query.get(k) or "").strip() for k in CHANGE_FIELDS}
    got["liabilities"] = [(query.get(f"liability-{i}") or "").strip() for i in range(periods)]
    return got


def apply(view: ClaimView, change: dict) -> qmcredit.Claim:
    """The stored claim document and payroll with the change applied (copies; the stored ones stay)."""
    doc = copy.deepcopy(view.document)
    problems = []
    for i, value in enumerate(change["liabilities"]):
        if value:
            doc["periods"][i]["liability"] = value
    options = dict(doc.get("options") or {})
    options["whole_positions"] = change["whole_positions"] == "on"
    options["part_time_excludes_temporary"] = change["part_time_excludes_temporary"] == "on"
    options["refund"] = change["refund"] != "off"
    limit = change["carryforward_periods"]
    if limit in ("", "form_313"):
        options.pop("carryforward_periods", None)
    elif limit == "none":
        options["carryforward_periods"] = None
    elif limit.isdigit():
        options["carryforward_periods"] = int(limit)
    else:
        problems.append(Problem("carryforward_periods", "a whole number of periods, or 'none' for no limit"))
    doc["options"] = options
    table = read_payroll(view.payroll) if view.payroll is not None else None
    if change["employee"] or change["hours"] or change["first_month"]:
        months = months_between(change["first_month"], change["last_month"] or change["first_month"])
        if not change["employee"]:
            problems.append(Problem("employee", "name the employee (an existing id changes their hours, a new id is a hire)"))
        if not months:
            problems.append(Problem("first_month", "give the month as YYYY-MM (and the last month, not before it)"))
        if not change["hours"]:
            problems.append(Problem("hours", "give the hours worked in each of those months"))
        if not problems:
            table = _set_hours(doc, table, change["employee"], months, change["hours"])
    if problems:
        raise ClaimError(problems)
    return qmcredit.claim_from_dict(doc, payroll=table, source="what-if")


def _set_hours(doc: dict, table: pl.DataFrame | None, employee: str, months: list[str], hours: str) -> pl.DataFrame | None:
    if table is None:
        staff = doc.setdefault("employees", [])
        person = next((e for e in staff if e.get("id") == employee), None)
        if person is None:
            person = {"id": employee, "ownership_interest": False, "owner_relation": None, "basis": "permanent", "hours": {}}
            staff.append(person)
        person["hours"] = {**(person.get("hours") or {}), **{m: hours for m in months}}
        return None
    kept = table.filter(~((pl.col("employee_id").cast(pl.Utf8) == employee) & pl.col("month").cast(pl.Utf8).is_in(months)))
    added = pl.DataFrame({c: [None] * len(months) for c in table.columns}, schema={c: pl.Utf8 for c in table.columns})
    added = added.with_columns(pl.lit(employee).alias("employee_id"), pl.Series("month", months),
                               pl.lit(hours).alias("hours"), pl.lit("what-if change").alias("source"))
    return pl.concat([kept, added.cast(dict(table.schema), strict=False)], how="vertical")


def compared(filed: dict, what_if: dict) -> list[dict]:
    """The figures side by side, as the two determinations state them."""
    rows = [("Eligible", filed["eligible"], what_if["eligible"])]
    for key, label in (("average_positions", "Average positions"), ("new_positions", "New positions"), ("credit", "Credit")):
        for period, value in (filed.get(key) or {}).items():
            rows.append((f"{label}, {period.replace('_', ' ')}", value, (what_if.get(key) or {}).get(period)))
    rows.append(("Sustained effort ratio", filed.get("sustained_effort_ratio"), what_if.get("sustained_effort_ratio")))
    for i, (p, q) in enumerate(zip(filed["periods"], what_if["periods"])):
        for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward"):
            rows.append((f"Period {p['start']} to {p['end']}: {k.replace('_', ' ')}", p.get(k), q.get(k)))
    rows += [("Refund, total", filed.get("refund"), what_if.get("refund")),
             ("Carried forward, total", filed.get("carried_forward"), what_if.get("carried_forward"))]
    shown = [(label, "pending" if a is None else drill.shown(a), "pending" if b is None else drill.shown(b)) for label, a, b in rows]
    return [{"label": label, "filed": a, "what_if": b, "changed": a != b} for label, a, b in shown]


@router.get("/claims/{claim_id:int}/what-if")
async def what_if(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    try:
        view = await run_in_threadpool(load_claim, request.app.state.db, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back="/claims")
    change = changes_of(request.query_params, len(view.det["periods"]))
    options = view.document.get("options") or {}
    asked = bool(request.query_params)
    if not asked:
        change |= {"whole_positions": "on" if options.get("whole_positions") else "",
                   "part_time_excludes_temporary": "on" if options.get("part_time_excludes_temporary") else "",
                   "refund": "off" if options.get("refund") is False else "on",
                   "carryforward_periods": "none" if "carryforward_periods" in options and options["carryforward_periods"] is None
                   else str(options.get("carryforward_periods", ""))}
    rows, svg, problems = None, None, []
    if asked:
        try:
            det = await run_in_threadpool(lambda: qmcredit.decide(apply(view, change)).to_dict(explain=True))
            rows, svg = compared(view.det, det), monthly_chart_svg(det, id_prefix="qmc-whatif")
        except ClaimError as e:
            problems = problems_of(e)[1]
    return page(request, "what_if.html", who, status=422 if problems else 200, view=view, change=change, rows=rows,
                svg=svg, problems=problems, filed_svg=monthly_chart_svg(view.det, id_prefix="qmc-filed"))
