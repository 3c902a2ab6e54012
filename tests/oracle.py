"""An independent reading of RULES.md, written apart from the engine, in plain loops over the
claim document (no polars, no qmcredit imports). The engine must agree with it on generated claims.
The minimum tax is given or derived by L2c from the schedule of N.J.A.C. 18:7-3.4 as RULES.md states
it (privilege periods beginning in 2002 and after). V2: without credit year one's period, the ledger
is undecided (None)."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from fractions import Fraction

CENT = Decimal("0.01")


def _r_half_up(x: Fraction) -> Decimal:
    return (Decimal(x.numerator) / Decimal(x.denominator)).quantize(CENT, rounding=ROUND_HALF_UP) if x.denominator != 1 else Decimal(x.numerator).quantize(CENT)


def _half_up(x: Fraction) -> Decimal:
    # exact: floor(x*100 + 1/2) / 100
    n = x * 100 + Fraction(1, 2)
    return Decimal(n.numerator // n.denominator) / 100


def _floor(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_FLOOR)


def _idx(s: str) -> int:
    return int(s[:4]) * 12 + int(s[5:7]) - 1


def _last_day(idx: int) -> date:
    y, m = divmod(idx + 1, 12)
    return date.fromordinal(date(y, m + 1, 1).toordinal() - 1)


def _num(v) -> Decimal:
    return Decimal(str(v).replace(",", ""))


def _minimum_tax(p: dict, o: dict) -> Decimal:
    """L2c, read from RULES.md: schedule by receipts; $2,000 for a $5M-payroll group (a period
    touching fewer than 12 months: more than $416,667 a month touched) or a combined group
    (periods ending from 2019-07-31); S corporations at 75% from 2012, the group minimum too
    unless s_corporation_group_minimum = "full"."""
    if "minimum_tax" in p:
        return _num(p["minimum_tax"])
    s, e = date.fromisoformat(p["start"]), date.fromisoformat(p["end"])
    touched = (e.year - s.year) * 12 + e.month - s.month + 1
    if "group_payroll" in p:
        gp = _num(p["group_payroll"])
        member = gp > 416667 * touched if touched < 12 else gp >= 5000000
    else:
        member = bool(p.get("group_payroll_5m"))
    group = member or (bool(p.get("combined_group_member")) and e >= date(2019, 7, 31))
    if group:
        amount = Decimal(2000)
    else:
        r = _num(p["nj_gross_receipts"])
        amount = Decimal(500 if r < 100000 else 750 if r < 250000 else 1000 if r < 500000 else 1500 if r < 1000000 else 2000)
    if p.get("s_corporation") and s.year >= 2012 and not (group and o.get("s_corporation_group_minimum") == "full"):
        amount = amount * Decimal("0.75")
    return amount


def oracle(doc: dict) -> dict:
    o = doc.get("options", {})
    tp, loc = doc["taxpayer"], doc["location"]
    began = date.fromisoformat(loc["operations_began"])
    y1 = began.year * 12 + began.month - 1 + (0 if o.get("year_one_start") == "same_month_if_first_day" and began.day == 1 else 1)
    base = y1 - 12
    excl = o.get("part_time_excludes_temporary", False)
    ft_count = [0] * 36
    pt_hours = [Fraction(0)] * 36
    for e in doc["employees"]:
        if e.get("ownership_interest") or e.get("owner_relation"):
            continue
        perm = e.get("basis", "permanent") == "permanent"
        hours = {_idx(m): Fraction(str(h)) for m, h in e["hours"].items()}
        for k in range(3):
            ms = range(base + 12 * k, base + 12 * k + 12)
            may = perm or not excl
            qualifying = sum(1 for m in ms if may and hours.get(m, 0) * 12 >= 20 * 52)
            for m in ms:
                h = hours.get(m, Fraction(0))
                if perm and h >= 140:
                    ft_count[m - base] += 1
                elif qualifying >= 3 and may:
                    cap = o.get("equivalent_hours_cap")  # P4a
                    pt_hours[m - base] += h if cap is None else min(h, Fraction(str(cap)))
    avg = [sum(ft_count[i] + pt_hours[i] / 140 for i in range(12 * k, 12 * k + 12)) / 12 for k in range(3)]
    new = [max(avg[k] - avg[0], Fraction(0)) for k in (1, 2)]
    if o.get("whole_positions"):
        new = [Fraction(int(x)) for x in new]
    eligible = (
        tp["tax"] in ("cbt", "insurance_premiums")
        and loc["municipality"].strip().lower() in ("camden", "camden city", "city of camden")
        and not tp.get("uez_benefit")
        and tp.get("earlier_credit_period_start") in (None, f"{y1 // 12:04d}-{y1 % 12 + 1:02d}")
    )
    credit = [_half_up(2500 * new[0]) if eligible else Decimal("0.00"), _half_up(1250 * new[1]) if eligible else Decimal("0.00")]
    ratio = min(new[1] / new[0], Fraction(1)) if new[0] > 0 else Fraction(0)
    ends = [_last_day(y1 + 11), _last_day(y1 + 23)]
    cf = o.get("carryforward_periods", 5)
    cf = 5 if cf == "form_313" else None if cf is None else int(cf)
    lots = []  # [origin, allowed_in, remaining]
    out_periods = []
    floors = []
    refund_total = Decimal(0)
    for i, p in enumerate(doc["periods"]):
        L = Decimal(str(p["liability"]))
        before = sum((Decimal(str(c["amount"])) for c in p.get("other_credits", []) if c["order"] == "before"), Decimal(0))
        limited = tp["tax"] == "cbt" or (tp["tax"] == "insurance_premiums" and o.get("insurer_limits") == "cbt")
        floor = None
        if tp["tax"] not in ("cbt", "insurance_premiums"):
            room = Decimal("0.00")
        elif limited:
            floor = max(_minimum_tax(p, o) if tp["tax"] == "cbt" else _num(p.get("minimum_tax", 0)), _num(p.get("alternative_minimum_assessment", 0)))
            room = _floor(max(min(L * Decimal("0.5"), L - floor) - before, Decimal(0)))
        else:
            room = _floor(max(L - before, Decimal(0)))
        s, e = date.fromisoformat(p["start"]), date.fromisoformat(p["end"])
        allowed = Decimal(0)
        for k in (0, 1):
            if s <= ends[k] <= e:
                lots.append([k, i, credit[k]])
                allowed += credit[k]
        applied = Decimal(0)
        left = room
        for lot in sorted(lots, key=lambda x: (x[1], x[0])):
            t = min(lot[2], left)
            lot[2] -= t
            left -= t
            applied += t
        refund = Decimal(0)
        if s <= ends[1] <= e and o.get("refund", True):
            for lot in lots:
                if lot[0] == 0:
                    r = min(_half_up(Fraction(lot[2]) * ratio), lot[2])
                    lot[2] -= r
                    refund += r
        forfeited = Decimal(0)
        for lot in lots:
            if cf is not None and i >= lot[1] + cf:
                forfeited += lot[2]
                lot[2] = Decimal(0)
        lots = [lot for lot in lots if lot[2] > 0]
        refund_total += refund
        floors.append(floor if limited and tp["tax"] in ("cbt", "insurance_premiums") else None)
        out_periods.append({
            "allowed": allowed, "room": room, "applied": applied, "refund": refund, "forfeited": forfeited,
            "carried_forward": sum((lot[2] for lot in lots), Decimal(0)),
        })
    carried = sum((lot[2] for lot in lots), Decimal(0))
    spans = [(date.fromisoformat(p["start"]), date.fromisoformat(p["end"])) for p in doc["periods"]]
    if credit[0] != 0 and not any(s <= ends[0] <= e for s, e in spans) and any(s <= ends[1] <= e for s, e in spans):
        # V2: year one's period is not given, year two's is: the year-one balance is unknown
        out_periods = [{k: (v if k == "room" else None) for k, v in p.items()} for p in out_periods]
        refund_total = carried = None
    return {
        "eligible": eligible, "averages": avg, "new": new, "credit": credit, "ratio": ratio,
        "periods": out_periods, "refund": refund_total, "carried_forward": carried, "floors": floors,
    }
