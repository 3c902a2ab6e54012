"""What-if: the stored claim with a list of changes at once (employees' hours or status over ranges of
months, a hire, each period's tax, the tax itself, any option), decided again beside the filed
figures. The page reads only; **Save as a new draft claim** (or, for a draft, **save into this
draft**) stores the changed claim through the service's own ``claims.create`` / ``claims.amend``."""

from __future__ import annotations

import copy
import io

import polars as pl
from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse

import qmcredit
from qmcredit import ClaimError, Problem

from ...service import claims as stored
from ...service import exact_json
from ...service.access import require
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.evaluate import Upload, evaluate, read_payroll
from ..charts import monthly_chart_svg
from . import drill, questions
from .guard import check_csrf, viewer
from .labels import label
from .load import ClaimView, load_claim
from .render import page, problems_of, refusal

router = APIRouter(include_in_schema=False)

CHANGE_ROWS, MAX_ROWS = 3, 20
CHANGE_FIELDS = ("employee", "first_month", "last_month", "hours", "basis")
BASES = (("", "unchanged"), ("permanent", "permanent"), ("temporary", "temporary (P2)"), ("seasonal", "seasonal (P2)"))


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


def asked_of(query, view: ClaimView) -> dict:
    """The what-if asked for: the rows of changes, the liabilities, the tax and the options; when
    nothing was asked, the stored claim's own values (so the form starts from the filed claim)."""
    count = min(MAX_ROWS, max(CHANGE_ROWS, int(query.get("rows")) if str(query.get("rows") or "").isdigit() else CHANGE_ROWS))
    get = lambda k: str(query.get(k) or "").strip()  # noqa: E731
    options = view.document.get("options") or {}
    asked = {"rows": [{f: get(f"c{k}-{f}") for f in CHANGE_FIELDS} for k in range(count)],
             "liabilities": [get(f"liability-{i}") or str(p.get("liability") or "") for i, p in enumerate(view.document.get("periods") or [])],
             "tax": get("tax") or view.document["taxpayer"].get("tax", "cbt"), "options": {}}
    for o in questions.OPTIONS:
        if query.get(f"option-{o.name}") is not None:
            asked["options"][o.name] = (get(f"option-{o.name}"), get(f"option-{o.name}-number"))
        else:
            v = options.get(o.name, questions.NOT_GIVEN)
            chosen = o.default if v is questions.NOT_GIVEN else questions.form_value(v)
            asked["options"][o.name] = ("", chosen) if isinstance(v, int) and not isinstance(v, bool) else (chosen, "")
    return asked


def _field(location: str) -> str:
    """The what-if form's field for a problem of the changed claim."""
    if location.startswith("options."):
        return "option-" + location.split(".")[1]
    if location == "taxpayer.tax":
        return "tax"
    if location.startswith("periods[") and location.endswith("].liability"):
        return "liability-" + location[len("periods["):-len("].liability")]
    return location


def changed(view: ClaimView, asked: dict) -> tuple[dict, pl.DataFrame | None]:
    """The stored claim document and payroll with every change applied (copies; the stored ones stay)."""
    doc = copy.deepcopy(view.document)
    problems: list[Problem] = []
    for i, value in enumerate(asked["liabilities"]):
        if value:
            doc["periods"][i]["liability"] = value
    doc["taxpayer"]["tax"] = asked["tax"]
    values = {f"option-{n}": v for n, (v, _) in asked["options"].items()} | {f"option-{n}-number": x for n, (_, x) in asked["options"].items()}
    options = {k: v for k, v in (doc.get("options") or {}).items() if k not in values and f"option-{k}" not in values}
    for o in questions.OPTIONS:
        v = questions.option_value(values, o)
        if v is not questions.NOT_GIVEN:
            options[o.name] = v
    doc["options"] = options
    table = read_payroll(view.payroll) if view.payroll is not None else None
    for k, row in enumerate(asked["rows"]):
        if not any(row.values()):
            continue
        n = k + 1
        months = months_between(row["first_month"], row["last_month"] or row["first_month"])
        if not row["employee"]:
            problems.append(Problem(f"c{k}-employee", f"change {n}: name the employee (an existing id changes them, a new id is a hire)"))
        if not months:
            problems.append(Problem(f"c{k}-first_month", f"change {n}: give the first month as YYYY-MM (and the last, not before it)"))
        if not row["hours"] and not row["basis"]:
            problems.append(Problem(f"c{k}-hours", f"change {n}: give the hours worked in each of those months, or a new status"))
        if table is not None and "month" not in table.columns:
            problems.append(Problem(f"c{k}-first_month", f"change {n}: this claim's payroll gives pay periods (P6), not months; "
                                                         "change the payroll file itself and amend the claim"))
        if not problems:
            table = _change(doc, table, row["employee"], months, row["hours"], row["basis"])
    if problems:
        raise ClaimError(problems)
    return doc, table


def _change(doc: dict, table: pl.DataFrame | None, employee: str, months: list[str], hours: str, basis: str) -> pl.DataFrame | None:
    if table is None:  # employees in the document: the status is the employee's, for every month
        staff = doc.setdefault("employees", [])
        person = next((e for e in staff if e.get("id") == employee), None)
        if person is None:
            person = {"id": employee, "ownership_interest": False, "owner_relation": None, "basis": "permanent", "hours": {}}
            staff.append(person)
        if hours:
            person["hours"] = {**(person.get("hours") or {}), **{m: hours for m in months}}
        if basis:
            person["basis"] = basis
        return None
    table = table.with_columns(pl.col(c).cast(pl.Utf8) for c in ("employee_id", "month", "hours"))
    if "basis" not in table.columns:
        table = table.with_columns(pl.lit(None, pl.Utf8).alias("basis"))
    hit = (pl.col("employee_id") == employee) & pl.col("month").is_in(months)
    existing = table.filter(hit)
    have = set(existing["month"].to_list())
    template = {c: None for c in table.columns} | {"employee_id": employee, "source": "what-if change"}
    added = pl.DataFrame([template | {"month": m} for m in months if m not in have], schema=table.schema) if hours else table.clear()
    changed_rows = pl.concat([existing.with_columns(pl.lit("what-if change").alias("source")), added], how="vertical")
    if hours:
        changed_rows = changed_rows.with_columns(pl.lit(hours).alias("hours"))
    if basis:
        changed_rows = changed_rows.with_columns(pl.lit(basis).alias("basis"))
    return pl.concat([table.filter(~hit), changed_rows], how="vertical")


def compared(filed: dict, what_if: dict) -> list[dict]:
    """The figures side by side, as the two determinations state them, named by labels.py."""
    names = ["eligible", *(f"average_positions.{p}" for p in drill.PERIODS), *(f"new_positions.{p}" for p in drill.PERIODS[1:]),
             *(f"credit.{p}" for p in drill.PERIODS[1:]), "sustained_effort_ratio"]
    names += [f"periods[{i}].{k}" for i in range(min(len(filed["periods"]), len(what_if["periods"])))
              for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward")]
    names += ["refund", "carried_forward"]

    def value(det: dict, name: str):
        if name.startswith("periods["):
            i, k = name[len("periods["):].split("].")
            return det["periods"][int(i)].get(k)
        head, _, tail = name.partition(".")
        v = det.get(head)
        return (v or {}).get(tail) if tail else v

    out = []
    for name in names:
        a, b = value(filed, name), value(what_if, name)
        a, b = ("pending" if a is None else drill.shown(a)), ("pending" if b is None else drill.shown(b))
        out.append({"label": label(name, filed), "filed": a, "what_if": b, "changed": a != b})
    return out


def saved_form(view: ClaimView, asked: dict, doc: dict, table: pl.DataFrame | None) -> tuple[str, Upload | None]:
    """The changed claim as the service stores one: its document and its payroll as a CSV file."""
    if table is None:
        return exact_json.dumps(doc), None
    name = "what-if-" + view.payroll.filename.rsplit(".", 1)[0] + ".csv"
    doc["payroll"] = name
    buf = io.BytesIO()
    table.drop("source", strict=False).write_csv(buf)
    return exact_json.dumps(doc), Upload(name, "text/csv", buf.getvalue())


def summary(asked: dict) -> str:
    """The changes in words, for the revision's reason."""
    parts = []
    for row in asked["rows"]:
        if any(row.values()):
            months = row["first_month"] + (f" to {row['last_month']}" if row["last_month"] else "")
            parts.append(f"{row['employee']} in {months}: " + ", ".join(
                x for x in (row["hours"] and f"{row['hours']} hours", row["basis"] and row["basis"]) if x))
    return "what-if saved" + (": " + "; ".join(parts) if parts else " (tax, liabilities or options changed)")


def _page(request, who, view, asked, rows=None, svg=None, problems=(), status=200):
    fields = {}
    for p in problems:
        fields.setdefault(_field(p["location"]), []).append(p["message"])
    return page(request, "what_if.html", who, status=status, view=view, asked=asked, rows=rows, svg=svg, problems=list(problems),
                field_errors=fields, filed_svg=monthly_chart_svg(view.det, id_prefix="qmc-filed"), q=questions, bases=BASES,
                fields=CHANGE_FIELDS, query=request.query_params.multi_items())


@router.get("/claims/{claim_id:int}/what-if")
async def what_if(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    try:
        view = await run_in_threadpool(load_claim, request.app.state.db, who, claim_id)
    except ApiError as e:
        return refusal(request, who, e, back="/claims")
    asked = asked_of(request.query_params, view)
    if "show" not in request.query_params:
        return _page(request, who, view, asked)

    def decide():
        doc, table = changed(view, asked)
        return qmcredit.decide(qmcredit.claim_from_dict(doc, payroll=table, source="what-if")).to_dict(explain=True)
    try:
        det = await run_in_threadpool(decide)
    except ClaimError as e:
        return _page(request, who, view, asked, problems=problems_of(e)[1], status=422)
    return _page(request, who, view, asked, compared(view.det, det), monthly_chart_svg(det, id_prefix="qmc-whatif"))


@router.post("/claims/{claim_id:int}/what-if/save")
async def save_what_if(request: Request, claim_id: int, who: Principal = Depends(viewer)):
    """Store the what-if: ``action=new`` files it as a new draft claim (the service refuses a second
    claim for the same location and credit period, naming the claim to amend); ``action=into``
    amends this claim, when it is the preparer's draft."""
    form = await request.form()
    db = request.app.state.db
    try:
        check_csrf(request, form)
        require(who, "preparer")
        view = await run_in_threadpool(load_claim, db, who, claim_id)
        asked = asked_of(form, view)
        doc, table = await run_in_threadpool(changed, view, asked)
        document, upload = saved_form(view, asked, doc, table)
        ev = await run_in_threadpool(evaluate, document, upload)
        if form.get("action") == "into":
            if view.claim.state != "draft":
                raise ApiError(409, f"claim {claim_id} is no longer a draft", [("action", "save the what-if as a new draft claim, or amend the claim")])
            reason = summary(asked)
            claim = await run_in_threadpool(db.write, lambda s: stored.amend(s, who, claim_id, ev, reason, base_revision=view.claim.revision))
        else:
            claim = await run_in_threadpool(db.write, lambda s: stored.create(s, who, ev, False))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back=f"/claims/{claim_id}/what-if")
    return RedirectResponse(f"/claims/{claim.id}", status_code=303)
