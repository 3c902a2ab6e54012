"""An independent reading of RULES.md, written apart from the engine, in plain loops over the
claim document (no polars, no qmcredit imports). The engine must agree with it on generated claims.
The minimum tax is given or derived by L2c from the schedule of N.J.A.C. 18:7-3.4 as RULES.md states
it (privilege periods beginning in 2002 and after). V2: without credit year one's period, the ledger
is undecided (None). ``params`` reads RULES.md under changed parameters (a reform's, in force for
every claim)."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from fractions import Fraction

CENT = Decimal("0.01")


#: the parameters RULES.md reads (a reform changes them for every claim)
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


# The Director's list as RULES.md's appendix gives it (L2a): the numbers of the listed names.
LISTED = {n.lower(): k for k, n in enumerate([
    "Business Employment Incentive Grant (BEIP)", "Urban Enterprise Zone Employee Tax Credit", "Urban Enterprise Zone Investment Tax Credit",
    "Redevelopment Authority Project Tax Credit", "Research and Development Tax Credit",
    "Manufacturing Equipment and Employment Investment Tax Credit", "New Jobs Investment Tax Credit",
    "Business Retention and Relocation Assistance Act (BRRAG)", "Small New Jersey Based High Technology Business Investment Tax Credit",
    "HMO Assistance Fund Tax Credit", "Effluent Equipment Tax Credit", "Neighborhood Revitalization State Tax Credit", "AMA Tax Credit",
    "Economic Recovery Tax Credit", "Sheltered Workshop Tax Credit", "Urban Transit Hub", "Offshore Wind Economic Development",
    "Grow New Jersey Assistance Tax Credit", "Angel Investor Credit", "Residential Economic Recovery and Growth Tax Credit"], 1)}


def counts_before(c: dict, credit_order: str) -> bool:
    """L2a: a given order stands; else form_313 puts every credit before, regulation by number."""
    if c.get("order"):
        return c["order"] == "before"
    if credit_order == "form_313":
        return True
    number = c.get("code") or LISTED[c["name"].lower()]
    return number < 14


def _measure(doc: dict, loc: dict, employees: list, window: int | None, par: dict) -> dict:
    """One location alone: P1-P5, C1-C3, E1-E4 (``window``: the taxpayer's first month of credit
    year one, None when this location sets it)."""
    o = doc.get("options", {})
    tp = doc["taxpayer"]
    full = Fraction(str(par["full_time_hours"]))
    began = date.fromisoformat(loc["operations_began"])
    y1 = began.year * 12 + began.month - 1 + (0 if o.get("year_one_start") == "same_month_if_first_day" and began.day == 1 else 1)
    base = y1 - 12
    excl = o.get("part_time_excludes_temporary", False)
    ft_count = [0] * 36
    pt_hours = [Fraction(0)] * 36
    for e in employees:
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
                    cap = o.get("equivalent_hours_cap")  # P4a
                    pt_hours[m - base] += h if cap is None else min(h, Fraction(str(cap)))
    avg = [sum(ft_count[i] + pt_hours[i] / full for i in range(12 * k, 12 * k + 12)) / 12 for k in range(3)]
    new = [max(avg[k] - avg[0], Fraction(0)) for k in (1, 2)]
    if o.get("whole_positions"):
        new = [Fraction(int(x)) for x in new]
    earlier = tp.get("earlier_credit_period_start")
    if earlier is None and window is not None:
        earlier = f"{window // 12:04d}-{window % 12 + 1:02d}"
    eligible = (
        tp["tax"] in ("cbt", "insurance_premiums")
        and loc["municipality"].strip().lower() in ("camden", "camden city", "city of camden")
        and not tp.get("uez_benefit")
        and earlier in (None, f"{y1 // 12:04d}-{y1 % 12 + 1:02d}")
    )
    amounts = [Fraction(str(par["amount_year_one"])), Fraction(str(par["amount_year_two"]))]
    credit = [_half_up(amounts[0] * new[0]) if eligible else Decimal("0.00"), _half_up(amounts[1] * new[1]) if eligible else Decimal("0.00")]
    ratio = min(new[1] / new[0], Fraction(1)) if new[0] > 0 else Fraction(0)
    return {"y1": y1, "eligible": eligible, "averages": avg, "new": new, "credit": credit, "ratio": ratio,
            "ends": [_last_day(y1 + 11), _last_day(y1 + 23)]}


def _share(room: Decimal, balances: list[Decimal], as_listed: bool) -> list[Decimal]:
    """L6: the room among balances of one year of origin."""
    if sum(balances) <= room:
        return list(balances)
    if as_listed:
        out = []
        for b in balances:
            out.append(min(b, room))
            room -= out[-1]
        return out
    total = sum(balances)
    exact = [Fraction(room) * Fraction(b) / Fraction(total) for b in balances]
    cents = [int(x * 100) for x in exact]  # floor: exact shares are not negative
    order = sorted(range(len(balances)), key=lambda k: (-(exact[k] * 100 - cents[k]), k))
    for k in order[: int(room * 100) - sum(cents)]:
        cents[k] += 1
    return [Decimal(c) / 100 for c in cents]


def oracle(doc: dict, params: dict | None = None) -> dict:
    """A one-location claim, or with ``locations`` the return (its figures, and each location's
    under ``locations``); ``params``: changed parameters (``PARAMS``' names)."""
    par = {**PARAMS, **(params or {})}
    sites = doc.get("locations") or [{**doc["location"], "employees": doc["employees"]}]
    window = None
    figures = []
    for k, s in enumerate(sites):
        figures.append(_measure(doc, s, s["employees"], None if k == 0 or "locations" not in doc else figures[0]["y1"], par))
    return {**figures[0], **_ledger(doc, figures, par)} if "locations" not in doc else _ledger(doc, figures, par)


def _ledger(doc: dict, locs: list[dict], par: dict) -> dict:
    o = doc.get("options", {})
    tp = doc["taxpayer"]
    cf = o.get("carryforward_periods", par["carryforward"])
    cf = par["carryforward"] if cf == "form_313" else None if cf is None else int(cf)
    as_listed = o.get("location_order") == "as_listed"
    lots = []  # [location, origin, allowed_in, remaining]
    out_periods = []
    per = [[] for _ in locs]
    floors = []
    refund_total = Decimal(0)
    for i, p in enumerate(doc["periods"]):
        L = Decimal(str(p["liability"]))
        before = sum((Decimal(str(c["amount"])) for c in p.get("other_credits", []) if counts_before(c, o.get("credit_order", "form_313"))), Decimal(0))
        limited = tp["tax"] == "cbt" or (tp["tax"] == "insurance_premiums" and o.get("insurer_limits") == "cbt")
        floor = None
        if tp["tax"] not in ("cbt", "insurance_premiums"):
            room = Decimal("0.00")
        elif limited:
            floor = max(_minimum_tax(p, o) if tp["tax"] == "cbt" else _num(p.get("minimum_tax", 0)), _num(p.get("alternative_minimum_assessment", 0)))
            room = _floor(max(min(L * par["share"], L - floor) - before, Decimal(0)))
        else:
            room = _floor(max(L - before, Decimal(0)))
        s, e = date.fromisoformat(p["start"]), date.fromisoformat(p["end"])
        mine = [dict.fromkeys(("allowed", "applied", "refund", "forfeited"), Decimal(0)) for _ in locs]
        for j, f in enumerate(locs):
            for k in (0, 1):
                if s <= f["ends"][k] <= e:
                    lots.append([j, k, i, f["credit"][k]])
                    mine[j]["allowed"] += f["credit"][k]
        left = room
        for k in (0, 1):
            these = [lot for lot in lots if lot[1] == k]
            for lot, t in zip(these, _share(left, [lot[3] for lot in these], as_listed)):
                lot[3] -= t
                left -= t
                mine[lot[0]]["applied"] += t
        for j, f in enumerate(locs):
            if s <= f["ends"][1] <= e and o.get("refund", True):
                for lot in lots:
                    if lot[0] == j and lot[1] == 0:
                        r = min(_half_up(Fraction(lot[3]) * f["ratio"]), lot[3])
                        lot[3] -= r
                        mine[j]["refund"] += r
        for lot in lots:
            if cf is not None and i >= lot[2] + cf:
                mine[lot[0]]["forfeited"] += lot[3]
                lot[3] = Decimal(0)
        lots = [lot for lot in lots if lot[3] > 0]
        for j in range(len(locs)):
            per[j].append({**mine[j], "carried_forward": sum((lot[3] for lot in lots if lot[0] == j), Decimal(0))})
        refund_total += sum(m["refund"] for m in mine)
        floors.append(floor)
        out_periods.append({
            **{k: sum(m[k] for m in mine) for k in ("allowed", "applied", "refund", "forfeited")}, "room": room,
            "carried_forward": sum((lot[3] for lot in lots), Decimal(0)),
        })
    carried = sum((lot[3] for lot in lots), Decimal(0))
    spans = [(date.fromisoformat(p["start"]), date.fromisoformat(p["end"])) for p in doc["periods"]]
    if any(f["credit"][0] != 0 and not any(s <= f["ends"][0] <= e for s, e in spans) and any(s <= f["ends"][1] <= e for s, e in spans)
           for f in locs):
        # V2: year one's period is not given, year two's is: the year-one balance is unknown
        out_periods = [{k: (v if k == "room" else None) for k, v in p.items()} for p in out_periods]
        refund_total = carried = None
    return {
        "periods": out_periods, "refund": refund_total, "carried_forward": carried, "floors": floors,
        "credit": [sum(f["credit"][k] for f in locs) for k in (0, 1)], "eligible": any(f["eligible"] for f in locs),
        "locations": [{**f, "periods": ps, "refund": sum(x["refund"] for x in ps)} for f, ps in zip(locs, per)],
    }
