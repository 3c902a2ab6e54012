"""The preparer's worksheet: what `qmcredit compute CLAIM` prints (rich tables).

Eligibility checks, the people excluded (P1-P3), the monthly table of positions for the three
periods, the averages, the credits, and for each privilege period the lines of Form 313 Parts III-V
under the form's line numbers.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table

from .claim import Claim
from .determination import Determination
from .form313 import form313
from .web.form import excluded_people, room_shared


def _v(x) -> str:
    return "pending" if x is None else str(x)


def return_worksheet(claim: Claim, det: Determination) -> Group:
    """A several-location return (L6): how the room of each period was shared, then each
    location's worksheet with its share."""
    h, d = claim.header, det.to_dict(explain=False)
    parts = [Panel(
        f"{len(det.locations)} locations; credit window (E4) {d['windows']['year_one']['start']} to {d['windows']['year_two']['end']}\n"
        f"Eligible: [bold]{'yes' if det.eligible else 'NO'}[/bold]    Refund: {_v(d['refund'])}    Carried forward: {_v(d['carried_forward'])}",
        title=f"Form 313 worksheet - N.J.S.A. 52:27BBB-55 - {h.taxpayer.name or h.taxpayer.id} ({h.taxpayer.id}): one return", expand=False)]
    t = Table(title=f"One room per period, shared among the locations (L6; year one first, L4; location_order = {h.options.location_order})")
    for col in ("period", "room", "year of origin", "room left", "location", "balance", "share", "applied"):
        t.add_column(col, justify="right" if col in ("room", "room left", "balance", "share", "applied") else "left")
    for s in room_shared(det):
        first = True
        for origin, left, _total, held in s.origins:
            for k, (loc, balance, share, applied) in enumerate(held):
                t.add_row(s.period if first else "", s.room if first else "", origin.replace("_", " ") if not k else "", left if not k else "",
                          loc, balance, share, applied)
                first = False
        t.add_row(s.period if first else "", s.room if first else "", "[bold]applied on the return[/bold]", "", "", "", "", s.applied)
    parts.append(t)
    for part, loc in zip(claim.parts, det.locations):
        parts.append(worksheet(part, loc, det))
    return Group(*parts)


def worksheet(claim: Claim, det: Determination, of: Determination | None = None) -> Group:
    """The worksheet of a one-location claim, or of one location of the return ``of``."""
    if det.locations:
        return return_worksheet(claim, det)
    h = claim.header
    d = det.to_dict(explain=False)
    parts = []
    title = f"{h.taxpayer.name or h.taxpayer.id} ({h.taxpayer.id}) - {h.location.address}, {h.location.municipality}"
    parts.append(Panel(
        f"Operations began {h.location.operations_began} (source: {h.location.operations_source or 'not given'}; B2)\n"
        f"Tax: {h.taxpayer.tax}    Eligible: [bold]{'yes' if det.eligible else 'NO'}[/bold]"
        + (f"\n{f'as of {h.as_of}: ' if h.as_of else ''}pending {', '.join(d['pending']['figures'])}" if d["pending"] else "")
        + "".join(f"\nmissing: the period containing {m['containing']} (V2)" for m in (d["pending"] or {}).get("missing_periods", [])),
        title=f"Form 313 worksheet - N.J.S.A. 52:27BBB-55 - {title}" + (f" - location {det.claim_id}" if of else ""), expand=False,
    ))
    t = Table(title="Eligibility (E1-E5)")
    for col in ("rule", "cite", "condition", "result"):
        t.add_column(col)
    for c in det.checks:
        t.add_row(c.rule, c.cite, c.condition, ("[green]pass[/green] " if c.passed else "[red]FAIL[/red] ") + c.message)
    parts.append(t)

    excluded = excluded_people(claim, det.to_dict(explain=True))
    if excluded:
        t = Table(title="People excluded or counted part-time only (Form 313 Part I questions 3-4; P1-P4)")
        for col in ("name", "SSN", "rule", "why"):
            t.add_column(col)
        for row in excluded:
            t.add_row(*row)
        parts.append(t)

    t = Table(title="Monthly positions (P2-P5)")
    for col, j in (("month", "left"), ("period", "left"), ("full-time", "right"), ("part-time hours", "right"), ("equivalents", "right"), ("positions", "right")):
        t.add_column(col, justify=j)
    for r in d["monthly"]:
        t.add_row(r["month"], r["period"], _v(r["full_time"]), _v(r["equivalent_hours"]), _v(r["equivalents"]), _v(r["positions"]))
    parts.append(t)

    t = Table(title="Averages, new positions and credit (P5, C1-C3)")
    for col in ("", "window", "average", "new positions", "credit"):
        t.add_column(col, justify="right" if col in ("average", "new positions", "credit") else "left")
    for name in ("base", "year_one", "year_two"):
        win = d["windows"][name]
        t.add_row(name.replace("_", " "), f"{win['start']} to {win['end']}", _v(d["average_positions"][name]),
                  "" if name == "base" else _v(d["new_positions"][name]), "" if name == "base" else _v(d["credit"][name]))
    t.caption = f"Sustained effort ratio (C3): {_v(d['sustained_effort_ratio'])}"
    parts.append(t)

    for f in form313(claim, det, of):
        p4, p3 = f["part_iv"], f["part_iii"]
        t = Table(title=f"Form 313 - period {f['start']} to {f['end']}" + (" (pending)" if f["pending"] else ""), show_header=False)
        t.add_column("line")
        t.add_column("amount", justify="right")
        t.add_row("[bold]Part III[/bold] line 10 less carryover: credit allowed this period (L1)", _v(p3["allowed_this_period"]) + (f"  ({', '.join(p3['allows'])})" if p3["allows"] else ""))
        t.add_row("[bold]Part IV[/bold] 11 tax liability", p4["tax_liability"])
        if p4["limits_apply"]:
            t.add_row("  12 50% of liability (L2)", p4["fifty_percent_of_liability"])
            t.add_row("  13 floor: max(minimum tax, AMA) (L2)", p4["minimum_tax_floor"])
            t.add_row("  14 liability less floor", p4["liability_less_floor"])
        else:
            t.add_row("  12-15 limits (L3)", "none for this tax")
        t.add_row("  16 credits taken on the return before this one (L2a" + (", L6" if of is not None else "") + ")", _v(p4["line_16_total"]))
        for c in p4["line_16"]:
            t.add_row(f"    {c['name']}" + (f" ({c['code']})" if c["code"] else ""), c["amount"])
        t.add_row("  17 allowable credit (room)", _v(p4["allowable_credit"]))
        t.add_row("  18 credit applied", _v(p4["credit_applied"]))
        for o in f["part_v"]:
            t.add_row(f"[bold]Part V[/bold] {o['label']}: opening / allowed / applied / refund / forfeited",
                      f"{o['opening']} / {o['allowed']} / {o['applied']} / {o['refund']} / {o['forfeited']}")
            t.add_row(f"  {o['label']} carryover", o["carryover"])
        tot = f["totals"]
        t.add_row("refund (R1) / forfeited (L5) / carried forward (L4)", f"{_v(tot['refund'])} / {_v(tot['forfeited'])} / {_v(tot['carried_forward'])}")
        parts.append(t)
    totals = f"Refund: {_v(d['refund'])}    Carried forward: {_v(d['carried_forward'])}"
    if d["not_yet_applied"]:
        totals += "\nAllowed but not yet applied (period not given): " + ", ".join(
            f"{k} {v['amount']} for the period containing {v['allowed_for_period_containing']}" for k, v in d["not_yet_applied"].items())
    for wmsg in d["warnings"]:
        totals += f"\nwarning: {wmsg}"
    parts.append(Panel(totals, expand=False))
    return Group(*parts)


def print_worksheet(claim: Claim, det: Determination, console: Console | None = None) -> None:
    (console or Console()).print(worksheet(claim, det))
