"""The claims list (and the examiner's queue, ``queue.py``): each claim with its amounts as its
current determination states them, searched (taxpayer, claim id), filtered (status, tax, year of
credit year one; the queue also by age), sorted by any column, paged, and exported as CSV or Excel
(every claim the filters select, in the order shown)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from openpyxl import Workbook
from sqlalchemy import select

from ...service import exact_json
from ...service.access import visible
from ...service.auth import Principal
from ...service.models import Claim, Location, Revision, Taxpayer
from . import drill
from .guard import viewer
from .labels import COLUMNS
from .render import STATE_LABELS, page

router = APIRouter(include_in_schema=False)

PER_PAGE = 25
TAXES = {"cbt": "Corporation Business Tax", "insurance_premiums": "Tax on insurers' premiums"}
# (key, heading, money?) in the order of the table and the export
HEADINGS = (("id", "Claim", False), ("taxpayer", "Taxpayer", False), ("ein", "EIN", False), ("tax", "Tax", False),
            ("location", "Location", False), ("year_one_start", "Credit year one starts", False), ("state", "Status", False),
            *((k, words, True) for k, words in COLUMNS.items()), ("updated", "Last change (UTC)", False), ("age", "Days since changed", False))
SORTABLE = {k for k, _, _ in HEADINGS}
MONEY = {k for k, _, money in HEADINGS if money}


def _total(values: list) -> str | None:
    """The periods' amounts added exactly; None (pending) when one of them is undecided."""
    if any(v is None for v in values):
        return None
    return str(sum((Decimal(v) for v in values), Decimal("0.00")))


def row_of(claim: Claim, tp: Taxpayer, loc: Location, determination: str, now: datetime) -> dict:
    det = exact_json.loads(determination)
    credit = det.get("credit") or {}
    updated = claim.updated_at if claim.updated_at.tzinfo else claim.updated_at.replace(tzinfo=timezone.utc)
    return {"id": claim.id, "taxpayer": tp.name, "ein": tp.ein, "tax": tp.tax, "location": f"{loc.address}, {loc.municipality}".strip(", "),
            "year_one_start": claim.year_one_start.isoformat() if claim.year_one_start else "", "state": claim.state,
            "year_one": credit.get("year_one"), "year_two": credit.get("year_two"),
            "applied": _total([p.get("applied") for p in det.get("periods") or []]), "refund": det.get("refund"),
            "updated": updated.strftime("%Y-%m-%d %H:%M"), "age": (now - updated).days, "eligible": det.get("eligible")}


@dataclass
class Asked:
    """What the person asked of a list: search, filters, order and page (blank: not asked)."""

    q: str = ""
    status: str = ""
    tax: str = ""
    year: str = ""
    age: str = ""
    sort: str = ""
    dir: str = "asc"
    page: str = "1"

    @classmethod
    def of(cls, query, default_sort: str) -> "Asked":
        a = cls(**{k: (query.get(k) or "").strip() for k in cls.__dataclass_fields__ if query.get(k)})
        if a.sort not in SORTABLE:
            a.sort = default_sort
        if a.dir not in ("asc", "desc"):
            a.dir = "asc"
        return a

    def query(self, **change) -> str:
        merged = {**self.__dict__, **change}
        return urlencode({k: v for k, v in merged.items() if v not in ("", None)})


def load_rows(db, who: Principal, states: tuple[str, ...] | None = None) -> list[dict]:
    """Every claim ``who`` may see (in ``states`` when given), with its current determination's amounts."""
    now = datetime.now(timezone.utc)
    with db.read() as session:
        stmt = visible(select(Claim, Taxpayer, Location, Revision.determination)
                       .join(Taxpayer, Taxpayer.id == Claim.taxpayer_id).join(Location, Location.id == Claim.location_id)
                       .join(Revision, (Revision.claim_id == Claim.id) & (Revision.number == Claim.revision)), who)
        if states:
            stmt = stmt.where(Claim.state.in_(states))
        return [row_of(c, t, loc, det, now) for c, t, loc, det in session.execute(stmt)]


def _sort_key(key: str):
    def k(r: dict):
        v = r[key]
        if key in MONEY:
            return (v is None, Decimal(v) if v is not None else Decimal(0), r["id"])
        return (v is None, v.casefold() if isinstance(v, str) else v, r["id"])
    return k


def matches(r: dict, q: str) -> bool:
    """The search: "claim 12" or "#12" is claim 12; otherwise the taxpayer's name or EIN contains it
    (case and the EIN's hyphen aside), or it is the claim's number."""
    q = q.strip().casefold()
    for prefix in ("claim ", "#"):
        if q.startswith(prefix):
            return q[len(prefix):].strip() == str(r["id"])
    if q == str(r["id"]):
        return True
    return q in r["taxpayer"].casefold() or q.replace("-", "") in r["ein"].replace("-", "")


def select_rows(rows: list[dict], a: Asked) -> list[dict]:
    """The rows the search and filters select, in the order asked (missing amounts last)."""
    rows = [r for r in rows if matches(r, a.q)] if a.q else rows
    if a.status:
        rows = [r for r in rows if r["state"] == a.status]
    if a.tax:
        rows = [r for r in rows if r["tax"] == a.tax]
    if a.year:
        rows = [r for r in rows if r["year_one_start"].startswith(a.year)]
    if a.age.isdigit():
        rows = [r for r in rows if r["age"] >= int(a.age)]
    ordered = sorted(rows, key=_sort_key(a.sort))
    if a.dir == "desc":  # missing amounts stay last either way
        ordered = [r for r in reversed(ordered) if r[a.sort] is not None] + [r for r in ordered if r[a.sort] is None]
    return ordered


def _cell(key: str, r: dict):
    v = r[key]
    if key == "state":
        return STATE_LABELS.get(v, v)
    if key == "tax":
        return TAXES.get(v, v)
    if key in MONEY:
        return "pending" if v is None and r["eligible"] else ("" if v is None else Decimal(v))
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v  # a spreadsheet never reads a name as a formula
    return v


def export(rows: list[dict], kind: str, stem: str) -> Response:
    """The rows as CSV (UTF-8) or Excel; amounts exact (decimal text in CSV, decimal numbers in Excel)."""
    head = [h for _, h, _ in HEADINGS]
    body = [[_cell(k, r) for k, _, _ in HEADINGS] for r in rows]
    if kind == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(head)
        writer.writerows(["" if v is None else str(v) for v in line] for line in body)
        return Response(out.getvalue().encode("utf-8"), media_type="text/csv; charset=utf-8",
                        headers={"content-disposition": f'attachment; filename="{stem}.csv"', "cache-control": "no-store"})
    wb = Workbook()
    ws = wb.active
    ws.title = stem[:31]
    ws.append(head)
    for line in body:
        ws.append(line)
    for col, (k, _, money) in enumerate(HEADINGS, start=1):
        if money:
            for (cell,) in ws.iter_rows(min_row=2, min_col=col, max_col=col):
                cell.number_format = "#,##0.00"
    buf = io.BytesIO()
    wb.save(buf)
    return Response(buf.getvalue(), media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                    headers={"content-disposition": f'attachment; filename="{stem}.xlsx"', "cache-control": "no-store"})


def listing(request: Request, who: Principal, template: str, stem: str, default_sort: str,
            states: tuple[str, ...] | None = None, **context):
    """A list page, or its export (``format=csv`` or ``xlsx``) of every row the filters select."""
    a = Asked.of(request.query_params, default_sort)
    everything = load_rows(request.app.state.db, who, states)
    rows = select_rows(everything, a)
    kind = request.query_params.get("format")
    if kind in ("csv", "xlsx"):
        return export(rows, kind, stem)
    shown, where = drill.paged(rows, a.page, PER_PAGE)
    years = sorted({r["year_one_start"][:4] for r in everything if r["year_one_start"]})
    return page(request, template, who, rows=shown, where=where, asked=a, headings=HEADINGS, money=MONEY,
                states=[(s, STATE_LABELS[s]) for s in (states or STATE_LABELS)], taxes=TAXES, years=years,
                cell=_cell, any_claims=bool(everything), **context)


@router.get("/claims")
def claim_list(request: Request, who: Principal = Depends(viewer)):
    return listing(request, who, "claims.html", "claims", "taxpayer")
