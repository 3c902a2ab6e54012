"""An independent reading of RULES.md, written apart from the engine, in plain loops over the
claim document (no polars, no qmcredit imports). The engine must agree with it on generated claims.
Minimum tax must be given in the documents it reads (the schedule is tested separately).
``params`` reads RULES.md under changed parameters (a reform's, in force for every claim)."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from fractions import Fraction

CENT = Decimal("0.01")
#: The parameters of RULES.md as the statute and Form 313 set them.
PARAMS = {"amount_year_one": 2500, "amount_year_two": 1250, "full_time_hours": 140, "share": Decimal("0.5"), "carryforward": 5}


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


def oracle(doc: dict, params: dict | None = None) -> dict:
    par = {**PARAMS, **(params or {})}
    full = Fraction(str(par["full_time_hours"]))
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
                if perm and h >= full:
                    ft_count[m - base] += 1
                elif qualifying >= 3 and may:
                    pt_hours[m - base] += h
    avg = [sum(ft_count[i] + pt_hours[i] / full for i in range(12 * k, 12 * k + 12)) / 12 for k in range(3)]
    new = [max(avg[k] - avg[0], Fraction(0)) for k in (1, 2)]
    if o.get("whole_positions"):
        new = [Fraction(int(x)) for x in new]
    eligible = (
        tp["tax"] in ("cbt", "insurance_premiums")
        and loc["municipality"].strip().lower() in ("camden", "camden city", "city of camden")
        and not tp.get("uez_benefit")
        and tp.get("earlier_credit_period_start") in (None, f"{y1 // 12:04d}-{y1 % 12 + 1:02d}")
    )
    amounts = [Fraction(str(par["amount_year_one"])), Fraction(str(par["amount_year_two"]))]
    credit = [_half_up(amounts[0] * new[0]) if eligible else Decimal("0.00"), _half_up(amounts[1] * new[1]) if eligible else Decimal("0.00")]
    ratio = min(new[1] / new[0], Fraction(1)) if new[0] > 0 else Fraction(0)
    ends = [_last_day(y1 + 11), _last_day(y1 + 23)]
    cf = o.get("carryforward_periods", par["carryforward"])
    lots = []  # [origin, allowed_in, remaining]
    out_periods = []
    refund_total = Decimal(0)
    for i, p in enumerate(doc["periods"]):
        L = Decimal(str(p["liability"]))
        before = sum((Decimal(str(c["amount"])) for c in p.get("other_credits", []) if c["order"] == "before"), Decimal(0))
        limited = tp["tax"] == "cbt" or (tp["tax"] == "insurance_premiums" and o.get("insurer_limits") == "cbt")
        if tp["tax"] not in ("cbt", "insurance_premiums"):
            room = Decimal("0.00")
        elif limited:
            floor = max(Decimal(str(p.get("minimum_tax", 0))), Decimal(str(p.get("alternative_minimum_assessment", 0))))
            room = _floor(max(min(L * par["share"], L - floor) - before, Decimal(0)))
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
        out_periods.append({
            "allowed": allowed, "room": room, "applied": applied, "refund": refund, "forfeited": forfeited,
            "carried_forward": sum((lot[2] for lot in lots), Decimal(0)),
        })
    return {
        "eligible": eligible, "averages": avg, "new": new, "credit": credit, "ratio": ratio,
        "periods": out_periods, "refund": refund_total, "carried_forward": sum((lot[2] for lot in lots), Decimal(0)),
    }
