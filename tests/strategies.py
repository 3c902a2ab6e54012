"""Hypothesis strategies: realistic and adversarial claim documents (boundary hours, periods ending
on a credit year's last day, binding limits, refunds, forfeitures, every option)."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from hypothesis import strategies as st

from .conftest import months

BOUNDARY_HOURS = ["0", "40", "86.666666", "86.666667", "86.67", "100", "139.99", "140", "140.000001", "160", "200", "672"]
hours_value = st.one_of(
    st.sampled_from(BOUNDARY_HOURS),
    st.decimals(min_value=0, max_value=250, places=2).map(str),
)
money_value = st.decimals(min_value=0, max_value=60000, places=2)


@st.composite
def employees(draw, first_month: str):
    n = draw(st.integers(0, 7))
    span = months(first_month, 38)  # a month either side of the 36
    out = []
    for i in range(n):
        start = draw(st.integers(0, 37))
        length = draw(st.integers(1, 38 - start))
        hours = {m: draw(hours_value) for m in span[start:start + length] if draw(st.integers(0, 9)) > 0}
        out.append({
            "id": f"E{i}",
            "ownership_interest": draw(st.sampled_from([False] * 9 + [True])),
            "owner_relation": draw(st.sampled_from([None] * 12 + ["spouse", "descendant"])),
            "basis": draw(st.sampled_from(["permanent"] * 5 + ["temporary", "seasonal"])),
            "hours": hours,
        })
    return out


@st.composite
def claims(draw):
    year = draw(st.integers(2003, 2012))
    month = draw(st.integers(1, 12))
    day = draw(st.sampled_from([1, 1, 2, 15, 28]))
    began = f"{year:04d}-{month:02d}-{day:02d}"
    first = f"{year - 1:04d}-{month:02d}" if True else None
    tax = draw(st.sampled_from(["cbt"] * 6 + ["insurance_premiums"] * 2 + ["gross_income_tax"]))
    # consecutive 12-month periods; the fiscal start month is sometimes the month after a credit year ends
    fy = draw(st.integers(1, 12))
    start_year = year - draw(st.integers(0, 1))
    periods = []
    short = draw(st.sampled_from([0] * 4 + [1, 5, 11]))  # months the first period lacks: a short first return (L2c)
    for k in range(draw(st.integers(1, 9))):
        sy, sm = start_year + k, fy
        ey, em = (sy, sm + 11) if sm == 1 else (sy + 1, sm - 1)
        if k == 0 and short:
            sy, sm = divmod(sy * 12 + sm - 1 + short, 12)
            sm += 1
        end_day = {1: 31, 2: 29 if ey % 4 == 0 else 28, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}[em]
        liability = draw(money_value)
        p = {"start": f"{sy:04d}-{sm:02d}-01", "end": f"{ey:04d}-{em:02d}-{end_day:02d}", "liability": str(liability)}
        if tax == "cbt" and draw(st.integers(0, 2)) == 0:  # L2c: the minimum tax derived, in every form a user writes its inputs
            p["nj_gross_receipts"] = draw(st.sampled_from(["0", "99999.99", "100000", "250000.00", "499999", "500000", "1000000", "1,500,000.00", Decimal("2000000")]))
            if draw(st.booleans()):
                p["s_corporation"] = draw(st.booleans())
            which = draw(st.integers(0, 3))
            if which == 1:
                p["group_payroll_5m"] = draw(st.sampled_from([True, False, None]))
            elif which == 2:
                p["group_payroll"] = draw(st.sampled_from(["4999999.99", "5000000", Decimal("5000000.00"), "416667", "416667.01", "833335", "2500000", "4583337.01"]))
            if draw(st.integers(0, 2)) == 0:
                p["combined_group_member"] = draw(st.booleans())
        else:
            p["minimum_tax"] = draw(st.sampled_from(["0.00", "500.00", "2000.00", "1125.00", Decimal("750")]))
        if draw(st.integers(0, 4)) == 0:  # L2b: a non-zero AMA only for CBT periods beginning 2002-2006, never an S corporation's
            ama_ok = tax == "cbt" and 2002 <= sy <= 2006 and not p.get("s_corporation")
            p["alternative_minimum_assessment"] = str(draw(money_value)) if ama_ok else draw(st.sampled_from(["0.00", "0", Decimal(0)]))
        oc = [draw(other_credit(j)) for j in range(draw(st.integers(0, 2)))]
        if oc:
            p["other_credits"] = oc
        periods.append(p)
    options = {}
    if draw(st.booleans()):
        options = draw(st.fixed_dictionaries({}, optional={
            "year_one_start": st.sampled_from(["next_month", "same_month_if_first_day"]),
            "part_time_excludes_temporary": st.booleans(),
            "whole_positions": st.booleans(),
            "insurer_limits": st.sampled_from(["none", "cbt"]),
            "carryforward_periods": st.sampled_from([None, 0, 1, 2, 5, Decimal(3), "4", "form_313"]),
            "equivalent_hours_cap": st.sampled_from([None, 140, Decimal(140), "140", 100]),
            "s_corporation_group_minimum": st.sampled_from(["reduced", "full"]),
            "refund": st.booleans(),
            "credit_order": st.sampled_from(["form_313", "regulation"]),
        }))
    return {
        "format": "qmcredit.claim/1",
        "taxpayer": {"id": "22-9999999", "name": "Generated", "tax": tax,
                     "uez_benefit": draw(st.sampled_from([False] * 9 + [True])),
                     "earlier_credit_period_start": draw(st.sampled_from([None] * 9 + ["2001-01"]))},
        "location": {"municipality": draw(st.sampled_from(["Camden"] * 8 + ["camden city", "Newark"])), "address": "x",
                     "operations_began": began, "operations_source": "generated"},
        "employees": draw(employees(first)),
        "periods": periods,
        "options": options,
    }


def json_text(doc) -> str:
    """A generated document as the JSON text a user writes: a ``Decimal`` as a JSON number (``3``,
    ``5000000.00``), never a string."""
    def mark(v):
        if isinstance(v, dict):
            return {k: mark(x) for k, x in v.items()}
        if isinstance(v, list):
            return [mark(x) for x in v]
        return f"\x00{v}\x00" if isinstance(v, Decimal) else v
    return re.sub(r'"\\u0000(.*?)\\u0000"', r"\1", json.dumps(mark(doc)))


LISTED_NAMES = ["Research and Development Tax Credit", "new jobs investment tax credit", "ANGEL INVESTOR CREDIT", "Urban Transit Hub",
                "AMA Tax Credit", "Sheltered Workshop Tax Credit"]


@st.composite
def other_credit(draw, j: int):
    """L2a: an other credit with its order given, or named by its number or its listed name."""
    c = {"name": f"other {j}", "amount": str(draw(st.decimals(0, 8000, places=2)))}
    how = draw(st.sampled_from(["order", "code", "name"]))
    if how == "order":
        c["order"] = draw(st.sampled_from(["before", "after"]))
    elif how == "code":
        c["code"] = draw(st.sampled_from([k for k in range(1, 21) if k != 14]))
    else:
        c["name"] = draw(st.sampled_from(LISTED_NAMES))
    return c


@st.composite
def returns(draw):
    """L6: a CBT return of two or three locations sharing the taxpayer, periods and options;
    most locations start credit year one on the same month (one may not: E4 fails it alone)."""
    doc = draw(claims())
    doc["taxpayer"]["tax"] = "cbt"
    doc["taxpayer"]["earlier_credit_period_start"] = None
    began = doc["location"]["operations_began"]
    y, m = int(began[:4]), int(began[5:7])
    later = f"{y + m // 12:04d}-{m % 12 + 1:02d}-10"  # a month later: another credit window
    sites = []
    for k in range(draw(st.integers(2, 3))):
        day = began if k == 0 else draw(st.sampled_from([began] * 4 + [began[:8] + "28", later]))
        sites.append({**doc["location"], "id": f"site-{k}", "operations_began": day, "employees": draw(employees(f"{y - 1:04d}-{m:02d}"))})
    doc.pop("location")
    doc.pop("employees")
    doc["locations"] = sites
    if draw(st.booleans()):
        doc["options"] = {**doc["options"], "location_order": draw(st.sampled_from(["proportional", "as_listed"]))}
    return doc


def decimalize(doc):
    """Numbers as the JSON loader would give them (Decimal), never floats."""
    if isinstance(doc, dict):
        return {k: decimalize(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [decimalize(v) for v in doc]
    if isinstance(doc, (int,)) and not isinstance(doc, bool):
        return Decimal(doc)
    return doc
