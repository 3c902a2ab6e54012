"""A new claim from a payroll file: the header (a short form, or a header JSON file) and the payroll
table are read and decided, and the preview shows what was read and every problem found. Nothing is
stored until the preparer confirms; the confirmed form carries the same file back, decided again."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json

import polars as pl
from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse

from qmcredit import ClaimError, Problem

from ...service import claims as stored
from ...service import exact_json
from ...service.access import require
from ...service.auth import Principal
from ...service.errors import ApiError
from ...service.evaluate import Upload, evaluate, mapping_of, payroll_kind, read_payroll
from . import questions
from .guard import check_csrf, viewer
from .render import page, problems_of, refusal

router = APIRouter(include_in_schema=False)

SAMPLE_ROWS = 12
NOT_A_QUESTION = ("general", "periods", "payroll", "header_file")


def _values(form) -> dict[str, str]:
    return {n: str(form.get(n) or "").strip() for n in questions.field_names()}


def reading(payroll: Upload) -> dict | None:
    """How an export's columns were read (issue 13): each column with its field, for the choice
    per column the preview offers, the date formats found and the mapping as JSON; None for JSON rows."""
    from qmcredit.imports.mapping import FIELDS
    from qmcredit.imports.preview import chosen_mapping
    from qmcredit.imports.table import Unmapped
    from qmcredit.loaders import import_payroll

    kind = payroll_kind(payroll)
    if kind == "json":
        return None
    given = mapping_of(payroll)
    try:
        read = import_payroll(payroll.content, kind=kind, name=payroll.filename, mapping=given)
    except Unmapped as e:
        read = e.read
    except ClaimError:
        return None
    field = {h: f for f, hs in read.columns.items() for h in hs}
    return {"columns": [{"header": h, "field": field.get(h, "")} for h in read.headers], "fields": FIELDS,
            "formats": read.formats, "notes": read.notes, "mapping": json.dumps(chosen_mapping(read, given).to_dict())}


def mapping_from_form(form, remembered: str) -> str:
    """The mapping the preview's choices make (``col-N`` for the column ``colname-N``), over the
    one remembered for the taxpayer; the remembered one when nothing was chosen."""
    names = {k.removeprefix("colname-"): str(v) for k, v in form.multi_items() if k.startswith("colname-")}
    if not names:
        return remembered
    columns: dict[str, list[str]] = {}
    for i, header in names.items():
        f = str(form.get(f"col-{i}") or "")
        if f and (f == "hours" or f not in columns):
            columns.setdefault(f, []).append(header)
    base = json.loads(remembered) if remembered else {}
    return json.dumps({**base, "columns": {f: hs if f == "hours" else hs[0] for f, hs in columns.items()}})


def summary(table: pl.DataFrame) -> dict:
    """What was read: rows, employees, months, and the first rows as a sample."""
    months = sorted(m for m in table["month"].unique().to_list() if m is not None) if "month" in table.columns else []
    return {"rows": table.height,
            "employees": table["employee_id"].n_unique() if "employee_id" in table.columns else 0,
            "months": len(months), "first_month": months[0] if months else None, "last_month": months[-1] if months else None,
            "columns": table.columns,
            "sample": [[("" if v is None else str(v)) for v in row] for row in table.head(SAMPLE_ROWS).iter_rows()]}


async def _upload(form, field: str) -> Upload | None:
    f = form.get(field)
    if f is None or isinstance(f, str) or not f.filename:
        return None
    return Upload(f.filename, f.content_type or "application/octet-stream", await f.read())


def _document(values: dict, header_file: Upload | None, payroll: Upload | None) -> tuple[str, list]:
    if header_file is not None:
        doc = exact_json.loads(header_file.content)
        if not isinstance(doc, dict):
            raise ClaimError([Problem("header_file", "a claim header is a JSON object")])
        rows = []  # the file's problems are named by their JSON path, not a form field
    else:
        doc, rows = questions.header_from_form(values)
    if payroll is not None:
        doc["payroll"] = payroll.filename
    return exact_json.dumps(doc), rows


def preview(values: dict, header_file: Upload | None, payroll: Upload | None) -> dict:
    """Read and decide without storing: what was read, every problem (with its form field), and the
    figures the claim would have."""
    out = {"read": None, "problems": [], "det": None, "document": None, "reading": None}
    rows: list = []
    try:
        document, rows = _document(values, header_file, payroll)
        out["document"] = document
    except (ValueError, UnicodeDecodeError) as e:
        out["problems"] = [{"location": "header_file", "message": f"not a JSON claim header: {e}", "field": "header_file"}]
        return out
    except ClaimError as e:
        out["problems"] = [{**p, "field": "header_file"} for p in problems_of(e)[1]]
        return out
    if header_file is None:
        out["problems"] += questions.unanswered(values)
    if payroll is None:
        out["problems"].append({"location": "payroll", "message": "choose the payroll file (.csv, .xlsx or .parquet)", "field": "payroll"})
        return out
    out["reading"] = reading(payroll) if not out["problems"] else None
    try:
        out["read"] = summary(read_payroll(payroll))
        ev = evaluate(document, payroll)
        out["det"] = None if out["problems"] else ev.result
    except ClaimError as e:
        out["problems"] += [{**p, "field": questions.field_of(p["location"], rows, payroll.filename) if header_file is None
                             else "header_file" if not p["location"].startswith(("payroll", payroll.filename)) else "payroll"}
                            for p in problems_of(e)[1]]
    return out


def _form_page(request: Request, who: Principal, values: dict, result: dict | None = None, payroll: Upload | None = None,
               status: int = 200):
    fields: dict[str, list[str]] = {}
    for p in (result or {}).get("problems", []):
        named = p["field"] not in NOT_A_QUESTION
        fields.setdefault(p["field"], []).append(p["message"] if named else f"{p['location']}: {p['message']}")
    return page(request, "new_claim.html", who, status=status, values=values, result=result, field_errors=fields,
                q=questions, listed=questions.listed_credits(), payroll=payroll,
                payroll_b64=base64.b64encode(payroll.content).decode() if payroll and result else "")


def _remembered(db, who: Principal, ein: str) -> str:
    with db.read() as session:
        return stored.last_mapping(session, who, ein)


def _previewed(form) -> Upload:
    """The file the preview carried (``payroll_b64``), as it was uploaded."""
    try:
        content = base64.b64decode(str(form.get("payroll_b64") or ""), validate=True)
    except binascii.Error:
        raise ApiError(422, "the previewed file was damaged in transit: upload it again",
                       [("payroll", "upload the file again")]) from None
    return Upload(str(form.get("payroll_name") or "payroll.csv"), str(form.get("payroll_type") or "text/csv"), content,
                  str(form.get("payroll_mapping") or ""))


@router.get("/claims/new")
def new_claim(request: Request, who: Principal = Depends(viewer)):
    values = questions.blank_values()
    return _form_page(request, who, values)


@router.post("/claims/new")
async def new_claim_preview(request: Request, who: Principal = Depends(viewer)):
    form = await request.form(max_part_size=request.app.state.settings.upload_limit)
    try:
        check_csrf(request, form)
        require(who, "preparer")
    except ApiError as e:
        return refusal(request, who, e, back="/claims")
    values = _values(form)
    payroll, header_file = await _upload(form, "payroll"), await _upload(form, "header_file")
    again = payroll is None and bool(form.get("payroll_b64"))  # read again, with the columns chosen: the same file
    if again:
        payroll = _previewed(form)
    if payroll is not None:
        remembered = payroll.mapping
        if not remembered and values["taxpayer_id"]:
            remembered = await run_in_threadpool(_remembered, request.app.state.db, who, values["taxpayer_id"])
        payroll = dataclasses.replace(payroll, mapping=mapping_from_form(form, remembered) if again else remembered)
    result = await run_in_threadpool(preview, values, header_file, payroll)
    return _form_page(request, who, values, result, payroll, status=200 if result["det"] else 422)


@router.post("/claims/new/confirm")
async def new_claim_confirm(request: Request, who: Principal = Depends(viewer)):
    """Store the claim previewed: the same document and file, decided again (nothing trusted from the page)."""
    form = await request.form(max_part_size=request.app.state.settings.upload_limit * 2)
    db = request.app.state.db
    try:
        check_csrf(request, form)
        require(who, "preparer")
        payroll = _previewed(form)
        ev = await run_in_threadpool(evaluate, str(form.get("document") or ""), payroll)
        submit = form.get("action") == "submit"
        claim = await run_in_threadpool(db.write, lambda s: stored.create(s, who, ev, submit))
    except (ApiError, ClaimError) as e:
        return refusal(request, who, e, back="/claims/new")
    return RedirectResponse(f"/claims/{claim.id}", status_code=303)
