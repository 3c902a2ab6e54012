"""The figures of Form 313 ("Economic Recovery Tax Credit", N.J. Division of Taxation) for one
privilege period, line for line as the Division prints the form of the period's year, built on
``qmcredit.form313`` (the core's Form 313 lines) with the determination's employee-months.

Only the form's own parts, questions and lines are here (the layouts of ``form313_versions.toml``):
Part I questions 1-6, Part II the qualifying employees (SSN, name, employment dates; a rider when
more than five), Part III lines 7-10, Part IV lines 11-18 with line 16's lettered credits, Part V
the carryover in tax-year columns A-F (lines 1, 2(a)-(f), 3, 4). Everything else (checks, averages,
credit years, excluded people, credits applied after this one) is on the worksheet (``worksheet``).
Every amount is the determination's string; the only arithmetic is Decimal addition, subtraction
and comparison of those strings where a form line totals, subtracts or compares others.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path

import polars as pl

from ..determination import Determination
from ..form313 import form313
from ..law.order import directors_list
from ..law.parameters import parameter
from ..law.positions import STATUS
from ..money import from_cents, money
from .figures import PERIOD_LABELS, shown

TAX_NAMES = {"cbt": "Corporation Business Tax", "insurance_premiums": "Tax on Insurers (Insurance Premiums Tax)"}
COUNTED = ("full_time", "part_time_equivalent")
EXCLUDED = ("owner", "owner_relative", "temporary_not_part_time", "temporary_excluded")
ON_FORM_EMPLOYEES = 5  # Part II has rows a-e; the rest go on the rider
COLUMNS = "ABCDEF"


@dataclass(frozen=True)
class FormLine:
    no: str
    text: str
    value: str = ""
    key: str = ""  # the e-file line id of an unnumbered line with a figure (``efile``)


@dataclass(frozen=True)
class Part:
    number: str
    title: str
    lines: tuple[FormLine, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()  # header row first; empty when the part has none
    note: str = ""
    after: tuple[FormLine, ...] = ()  # lines printed below the table (Part V line 4)


@dataclass(frozen=True)
class Preparer:
    name: str = ""
    firm: str = ""
    ptin: str = ""


@dataclass(frozen=True)
class Form313:
    tax: str
    taxpayer_name: str
    taxpayer_id: str
    start: str
    end: str
    version: dict
    unitary_id: str
    combined_group_member: bool
    eligible: bool
    ineligible_because: tuple[str, ...]
    parts: tuple[Part, ...] = field(default=())
    rider: tuple[tuple[str, ...], ...] = ()  # Part II rows beyond the form's five, header first
    preparer: Preparer = Preparer()
    location_id: str = ""  # a location of a several-location return (L6); "" for a one-location claim
    locations: int = 1     # how many locations the return has

    @property
    def period(self) -> str:
        return f"{self.start} to {self.end}"


# --- the published versions ---------------------------------------------------------------

VERSIONS_FILE = Path(__file__).with_name("form313_versions.toml")


@cache
def versions() -> tuple[dict, ...]:
    """The recorded versions of Form 313, earliest first, each with its line 16 names resolved."""
    doc = tomllib.loads(VERSIONS_FILE.read_text(encoding="utf-8"))["version"]
    by_id = {v["id"]: v for v in doc}
    out = [{**v, "line16": by_id[v["line16_as"]]["line16"] if "line16_as" in v else v["line16"]} for v in doc]
    return tuple(sorted(out, key=lambda v: v["from_form_year"]))


def form_year(end: date) -> int:
    """The year of the CBT forms a return for a period ending on ``end`` uses: periods ending July 31
    of a year through June 30 of the next use that year's forms."""
    return end.year if end.month >= 7 else end.year - 1


def version_for(end: date) -> dict:
    """The recorded version of Form 313 whose layout the form of a period ending on ``end`` follows,
    with ``warning`` (else "") when that form year's own print is not recorded (a year before the
    version's ``print_year``, e.g. every year before 2013)."""
    year = form_year(end)
    fitting = [v for v in versions() if v["from_form_year"] <= year]
    v = fitting[-1] if fitting else versions()[0]
    warning = "" if year >= v["print_year"] else (
        f"The Division's layout of Form 313 for form year {year} is not recorded: this form follows the {v['id']} print "
        f"({v['printed']}), whose parts and line numbers are recorded; compare it with the form the Division published for {year}.")
    return {**v, "form_year": year, "warning": warning}


def layout_warnings(ends) -> list[str]:
    """The worksheet's notes on the layouts of periods ending on ``ends``: one per recorded print
    used for form years whose own print is not recorded, naming those years."""
    years: dict[str, list[int]] = {}
    for end in ends:
        v = version_for(end)
        if v["warning"] and v["form_year"] not in years.setdefault(v["id"], []):
            years[v["id"]].append(v["form_year"])
    by_id = {v["id"]: v for v in versions()}
    return [f"The Division's layout of Form 313 for form year{'s' if len(ys) > 1 else ''} {', '.join(map(str, ys))} is not recorded: "
            f"{'these forms follow' if len(ys) > 1 else 'this form follows'} the {vid} print ({by_id[vid]['printed']}), whose parts and line "
            f"numbers are recorded; compare with the form{'s' if len(ys) > 1 else ''} the Division published for {'those years' if len(ys) > 1 else ys[0]}."
            for vid, ys in years.items() if ys]


# --- data the claim gives (isolated: other engineers' fields arrive here) --------------------

@dataclass(frozen=True)
class Identity:
    name: str
    ssn: str  # shown: XXX-XX-1234, or "" when not given
    hired: str
    separated: str


def employee_identities(claim) -> dict[str, Identity]:
    """Each employee's name, masked SSN and employment dates (FORMAT.md "Who the employees are"):
    the claim's people (``Claim.people``, read from the payroll table, its roster or the embedded
    employees by ``qmcredit.imports.people``); an employee without a name is shown by id."""
    from ..imports.people import listed

    employees, excluded = listed(claim.payroll, claim.people)
    return {e["employee_id"]: Identity(str(e["name"] or "") or e["employee_id"], e["ssn"] or "", e["hired"] or "", e["separated"] or "")
            for e in (*employees, *excluded)}


def identity(identities: dict[str, Identity], employee_id: str) -> Identity:
    return identities.get(employee_id) or Identity(employee_id, "", "", "")


def line16_credits(claim, index: int) -> list[tuple[str, int | None, str, bool]]:
    """The other credits of the return for period ``index``: (name, Director's list number or None,
    amount, counted on line 16). A credit counts on line 16 when the determination subtracts it
    before this one: the law's own placing (``law.order.place``, L2, L2a)."""
    from ..law.order import place

    out = []
    for c in claim.periods[index].other_credits:
        placed = place(c.code, c.name, c.order, claim.options.credit_order)
        code = c.code if c.code is not None else placed.listed.number if placed.listed is not None else None
        out.append((c.name, code, money(c.amount), placed.order == "before"))
    return out


def unitary_id(claim) -> str:
    return claim.taxpayer.unitary_id


def combined_group_member(claim, index: int) -> bool:
    return claim.periods[index].combined_group_member


# --- the parts ----------------------------------------------------------------------------------

def _total(*amounts: str | None) -> str:
    return str(sum((Decimal(a) for a in amounts if a is not None), Decimal("0.00")))


def employee_rows(d: dict) -> list[dict]:
    em = next((e for e in d.get("explanation", []) if e.get("figure") == "employee_months"), None)
    return [] if em is None else em["rows"]


def location_text(address: str, municipality: str) -> str:
    """Question 5's address: the municipality is added only when the address does not name it."""
    if municipality and municipality.lower() not in address.lower():
        return ", ".join(x for x in (address, municipality) if x)
    return address or municipality


def part_one(f: dict, d: dict) -> Part:
    """Part I: questions 1-4 (E3; subsection e.'s averages; P2 and P1, as the payroll was counted:
    the worksheet names who was excluded and why), the form's note, questions 5 and 6."""
    i1 = f["part_i"]
    inel = d.get("ineligible_because", [])
    note = ("If the answer to any of the above questions is \"YES\", the taxpayer does not qualify for this tax credit. "
            "Otherwise, questions 5 and 6 and Part II.")
    if inel:
        note = "The taxpayer does not qualify for this tax credit: " + "; ".join(f"{r['rule']} ({r['cite']}) {r['message']}" for r in inel) + " (see the worksheet)."
    return Part("I", "Taxpayer and Employee Preliminary Qualifications", (
        FormLine("1", "Is the taxpayer receiving a benefit under the New Jersey Urban Enterprise Zones Act?", i1["receiving_uez_benefit"].upper()),
        FormLine("2", "Did the new full-time position at the qualifying location exist prior to credit year one?",
                 i1["new_positions_existed_before_year_one"].upper()),
        FormLine("3", "Is the full-time position filled by an employee of the taxpayer on a temporary or seasonal basis?", "NO"),
        FormLine("4", "Is the employee of the taxpayer an individual with an ownership interest in the business, that individual's "
                      "spouse or dependent, or that individual's ancestor or descendant?", "NO"),
        FormLine("5", "Address of the qualifying location of the new or expanded operations", location_text(i1["location"], i1["municipality"])),
        FormLine("6", "Date when the new or expanded operation began at the qualifying location", i1["operations_began"]),
    ), note=note)


def _letters(k: int) -> str:
    """a, b, ... z, aa, ab, ...: the row labels of Part II and its rider."""
    s = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        s = chr(97 + r) + s
    return s


def qualifying_employees(claim, d: dict) -> list[tuple[str, str, str, str, str]]:
    """Part II's rows: each employee whose hours count in credit year one or two (P2 full-time, P4
    equivalents), as (row, SSN, name, from, to); the dates are the employment dates when the claim
    gives them, else the first and last month counted."""
    spans: dict[str, list[str]] = {}
    for r in employee_rows(d):
        if r["status"] in COUNTED and r["period"] in ("year_one", "year_two"):
            s = spans.setdefault(r["employee_id"], [r["month"], r["month"]])
            s[0], s[1] = min(s[0], r["month"]), max(s[1], r["month"])
    ids = employee_identities(claim)
    rows = []
    for k, (e, (a, b)) in enumerate(sorted(spans.items(), key=lambda kv: (identity(ids, kv[0]).name, kv[0]))):
        who = identity(ids, e)
        rows.append((f"{_letters(k)}.", who.ssn, who.name, who.hired or a, who.separated or (b if not who.hired else "")))
    return rows


PART_II_HEAD = ("", "Social Security Number", "Name", "Employment dates: From", "To")


def part_two(rows: list) -> Part:
    shown_rows = rows[:ON_FORM_EMPLOYEES] or [("a.", "", "", "", "")]
    more = len(rows) - ON_FORM_EMPLOYEES
    return Part("II", "Qualifying Employee Information", (), (PART_II_HEAD, *shown_rows),
                "Each of the taxpayer's qualifying employees reported in Part III."
                + (f" {more} more on the attached rider." if more > 0 else ""))


def part_three(f: dict, windows: dict) -> Part:
    """Part III: lines 7 and 8 (subsection a.: $2,500 and $1,250 per new full-time position), line 9
    the carryover from prior tax years (Part V), line 10 the credit available this period (L1, L4)."""
    iii = f["part_iii"]
    y1, y2 = iii["year_one"], iii["year_two"]
    carry = shown(iii["carryover"])

    def when(o):
        w = windows[o]
        return f" ({PERIOD_LABELS[o].lower()} {w['start']} to {w['end']}{'; allowed for this period' if o in iii['allows'] else ''})"

    return Part("III", "Calculation of the Economic Recovery Tax Credit", (
        FormLine("7", f"Number of new full-time positions at the location in credit year one{when('year_one')}: "
                      f"{shown(y1['new_positions'])} x ${y1['amount_per_position']}", shown(y1["credit"])),
        FormLine("8", f"Number of new full-time positions at the location in credit year two{when('year_two')}: "
                      f"{shown(y2['new_positions'])} x ${y2['amount_per_position']}", shown(y2["credit"])),
        FormLine("9", "Carryover of the credit from prior tax years (Part V)", carry),
        FormLine("10", "Total credit available for this tax period: the credit of line 7 or 8 allowed for this period, plus line 9",
                 "pending" if iii["allowed_this_period"] is None else _total(iii["allowed_this_period"], iii["carryover"])),
    ))


def _norm(name: str) -> str:
    words = "".join(ch.lower() if ch.isalnum() else " " for ch in name).split()
    return " ".join(w for w in words if w not in ("tax", "credit", "the", "program"))


def line16_letter(version: dict, name: str, code: int | None) -> str | None:
    """The letter of line 16 a credit goes on: by its Director's list number, else by its name."""
    for ln in version["line16"]:
        if code is not None and code in ln["codes"]:
            return ln["letter"]
    n = _norm(name)
    for ln in version["line16"]:
        k = _norm(ln["name"])
        if n and (n == k or k in n or n in k):
            return ln["letter"]
    return None


def other_locations(of: Determination | None, location_id: str, index: int) -> list[tuple[str, str]]:
    """This credit as the return's other locations take it in period ``index`` (L6): (location id,
    amount applied), in the claim's order; empty for a one-location claim."""
    if of is None:
        return []
    return [(loc.claim_id, "pending" if line.pending else money(from_cents(line.applied)))
            for loc in of.locations if loc.claim_id != location_id for line in (loc.ledger.lines[index],)]


def part_four(claim, f: dict, version: dict, others: list[tuple[str, str]] = ()) -> Part:
    """Part IV, lines 11-18: the allowable amount (L2 for the CBT: 50% of the liability and the
    minimum-tax / AMA floor, less the credits taken on the return before this one, N.J.A.C.
    18:7-3.17; L3 for insurers), line 16 by the credits' names (L2a) and, for a location of a
    several-location return, this credit as the taxpayer's other locations take it under the
    return's one room (``others``, L6), so that line 17 is what the room leaves this location."""
    iv = f["part_iv"]
    lines = [FormLine("11", "Tax liability otherwise due, before any credit", iv["tax_liability"])]
    note = ""
    if iv["limits_apply"]:
        lines += [
            FormLine("12", "50% of line 11", iv["fifty_percent_of_liability"]),
            FormLine("13", "Statutory minimum tax (N.J.S.A. 54:10A-5(e)) or alternative minimum assessment, the larger", iv["minimum_tax_floor"]),
            FormLine("14", "Subtract line 13 from line 11", iv["liability_less_floor"]),
            FormLine("15", "Enter the lesser of line 12 or line 14", str(min(Decimal(iv["fifty_percent_of_liability"]), Decimal(iv["liability_less_floor"])))),
        ]
    else:
        lines += [FormLine(n, t, "n/a") for n, t in (("12", "50% of line 11"), ("13", "Statutory minimum tax"),
                                                       ("14", "Subtract line 13 from line 11"), ("15", "Enter the lesser of line 12 or line 14"))]
        note = "Lines 12-15 do not apply: no 50% limit or minimum tax for the tax on insurers (rule L3); line 17 is line 11 minus line 16."
    on16 = [c for c in line16_credits(claim, f["index"]) if c[3]]
    by_letter: dict[str, list[str]] = {}
    other: list[str] = []
    for name, code, amount, _ in on16:
        letter = line16_letter(version, name, code)
        (by_letter.setdefault(letter, []) if letter else other).append(amount)
    lines.append(FormLine("", "16. Tax credits taken on current year's return:"))  # line 16's caption; its number is the total's
    lines += [FormLine(f"{ln['letter']})", ln["name"], _total(*by_letter[ln["letter"]]) if ln["letter"] in by_letter else "")
              for ln in version["line16"]]
    if other:
        lines.append(FormLine("", "Other credits taken on this return, not named on line 16 (listed on the worksheet)", _total(*other), "16other"))
    erc = directors_list().credits[directors_list().this_credit - 1].name
    lines += [FormLine("", f"{erc} taken on this return for the taxpayer's location {loc} (one room per return, L6; see the worksheet)",
                       amount, f"16erc.{loc}") for loc, amount in others]
    lines += [
        FormLine("16", "Total", shown(iv["line_16_total"])),
        FormLine("17", "Subtract line 16 from line " + ("15" if iv["limits_apply"] else "11") + ". If the result is less than zero, enter zero",
                 shown(iv["allowable_credit"])),
        FormLine("18", "Allowable credit for the current tax period: the lesser of line 10 or line 17 (here and on Schedule A-3 of the "
                       "CBT-100, CBT-100S or BFC-1)", shown(iv["credit_applied"])),
    ]
    return Part("IV", "Calculation of the Allowable Credit Amount", tuple(lines), note=note)


def carryforward_limit(claim, windows: dict) -> int | None:
    cf = claim.options.carryforward_periods
    if cf == "form_313":
        return int(parameter("carryforward_periods").at(date.fromisoformat(windows["year_one"]["start"])).value)
    return cf


def part_five(claim, forms: list[dict], i: int, windows: dict) -> Part:
    """Part V: the carryover schedule in tax-year columns A-F, earliest first (L4, L5, R1). Line 1 the
    credit calculated for each tax year; lines 2(a)-(f) the allowable credit (Part IV line 18) of
    each tax year applied to it; line 3 the remainder; line 4 the carryover to the next tax year.
    What is refunded (R1) or forfeited after the years allowed (L5) is stated under the columns."""
    allowed_in = {o: j for j, f in enumerate(forms[: i + 1]) for o in f["part_iii"]["allows"]}
    after = (FormLine("4", "Carryover to the next tax year: line 3, less what is refunded or forfeited", shown(forms[i]["totals"]["carried_forward"])),)
    if not allowed_in:
        return Part("V", "Economic Recovery Tax Credit Carryover", (), (),
                    "No credit has been calculated for this or an earlier tax year: no carryover.", after)
    first = max(min(allowed_in.values()), i - len(COLUMNS) + 1)
    years = list(range(first, i + 1))
    limit = carryforward_limit(claim, windows)
    head = ("Tax year ending", *(f"{COLUMNS[c]}: {forms[j]['end']}" for c, j in enumerate(years)))
    origins_of = {j: [o for o, k in allowed_in.items() if k == j] for j in years}

    def cell(j: int, k: int, what: str) -> str:
        """What period ``k`` did (applied, refund, forfeited) to the credit calculated for tax year ``j``."""
        if not origins_of[j] or k < j:
            return ""
        vals = {o["origin"]: o[what] for o in forms[k]["part_v"]}
        if forms[k]["pending"] and what == "applied":
            return "pending"
        return _total(*(vals.get(o, "0.00") for o in origins_of[j]))

    line1 = [_total(*(forms[j]["part_iii"][o]["credit"] for o in origins_of[j])) if origins_of[j] else "0.00" for j in years]
    rows = [("1. Credit calculated for the tax year", *line1)]
    for r, k in enumerate(years):
        rows.append((f"2({'abcdef'[r]}) Part IV line 18, tax year ending {forms[k]['end']}", *(cell(j, k, "applied") for j in years)))
    line3 = []
    for c, j in enumerate(years):
        used = [cell(j, k, "applied") for k in years]
        line3.append("pending" if "pending" in used else str(Decimal(line1[c]) - Decimal(_total(*(u for u in used if u)))))
    rows.append(("3. Line 1 minus lines 2(a) through 2(f)", *line3))
    notes = []
    for c, j in enumerate(years):
        for o in origins_of[j]:
            refund = [(forms[k]["end"], cell_o(forms[k], o, "refund")) for k in years if k >= j]
            lost = [(forms[k]["end"], cell_o(forms[k], o, "forfeited")) for k in years if k >= j]
            closing = cell_o(forms[i], o, "carryover") if not forms[i]["pending"] else "pending"
            if limit is None:
                through = "no carryforward limit (option carryforward_periods)"
            elif j + limit < len(forms):
                through = f"usable through the tax year ending {forms[j + limit]['end']}"
            else:
                through = f"usable for {limit} tax years after the one ending {forms[j]['end']}"
            bits = [f"{PERIOD_LABELS[o]}, column {COLUMNS[c]}: {through}"]
            bits += [f"refunded {v} as an overpayment at the close of the tax year ending {e} (52:27BBB-55(c)(2))" for e, v in refund if v not in ("0.00", "")]
            bits += [f"forfeited {v} at the close of the tax year ending {e} (five-year limit, Form 313-A)" for e, v in lost if v not in ("0.00", "")]
            bits.append(f"carried forward {closing}")
            notes.append("; ".join(bits) + ".")
    return Part("V", "Economic Recovery Tax Credit Carryover", (), (head, *rows), " ".join(notes), after)


def cell_o(form: dict, origin: str, what: str) -> str:
    return next((o[what] for o in form["part_v"] if o["origin"] == origin), "0.00")


def forms_for(claim, det: Determination, indices: list[int] | None = None, preparer: Preparer = Preparer(),
              of: Determination | None = None) -> list[Form313]:
    """Form 313 for the privilege periods at ``indices`` (all when None), in that order, each laid out
    as the version of the Division's form of the period's year (``version_for``). ``of``: the
    several-location return that ``claim`` and ``det`` are a location of (L6)."""
    forms = form313(claim, det, of)
    d = det.to_dict(explain=True)
    employees = qualifying_employees(claim, d)
    rider = (PART_II_HEAD, *employees[ON_FORM_EMPLOYEES:]) if len(employees) > ON_FORM_EMPLOYEES else ()
    out = []
    for i in range(len(forms)) if indices is None else indices:
        f = forms[i]
        i1 = f["part_i"]
        version = version_for(date.fromisoformat(f["end"]))
        out.append(Form313(
            tax=i1["tax"], taxpayer_name=i1["taxpayer"], taxpayer_id=i1["taxpayer_id"], start=f["start"], end=f["end"],
            version=version, unitary_id=unitary_id(claim), combined_group_member=combined_group_member(claim, i),
            eligible=d["eligible"],
            ineligible_because=tuple(f"{r['rule']} ({r['cite']}): {r['message']}" for r in d["ineligible_because"]),
            parts=(part_one(f, d), part_two(employees), part_three(f, d["windows"]),
                   part_four(claim, f, version, other_locations(of, det.claim_id, i)), part_five(claim, forms, i, d["windows"])),
            rider=rider, preparer=preparer,
            location_id="" if of is None else det.claim_id, locations=1 if of is None else len(of.locations),
        ))
    return out


class LocationNotFound(ValueError):
    """The location asked for is not among the claim's."""


def return_forms(claim, det: Determination, indices: list[int] | None = None, preparer: Preparer = Preparer(),
                 location: str | None = None) -> list[Form313]:
    """Form 313 of every location of the claim (L6: each under the return's one room, location after
    location, each for the periods at ``indices``), or of the location whose id is ``location``; a
    one-location claim's own forms. Raises ``LocationNotFound`` naming the locations."""
    if not claim.parts:
        if location is not None:
            raise LocationNotFound(f"the claim gives one location, not several (\"locations\"): leave out the location {location!r}")
        return forms_for(claim, det, indices, preparer)
    ids = [p.location_id for p in claim.parts]
    if location is not None and location not in ids:
        raise LocationNotFound(f"no location {location!r} in the claim; its locations are: {', '.join(ids)}")
    return [f for part, loc in zip(claim.parts, det.locations) if location in (None, part.location_id)
            for f in forms_for(part, loc, indices, preparer, of=det)]


def form_for_period(claim, det: Determination, i: int, preparer: Preparer = Preparer()) -> Form313:
    """The figures of Form 313 for the privilege period at index ``i``."""
    return forms_for(claim, det, [i], preparer)[0]


def excluded_people(claim, d: dict) -> list[tuple[str, str, str, str]]:
    """The worksheet's list for Part I questions 3 and 4: each person whose hours were not counted
    in the credit years for who they are or how they were employed (P1 owners and relatives; P2 and
    P3 temporary or seasonal), as (name, SSN, rule, reason), and each temporary or seasonal worker
    counted as a part-time position (P3, P4), which question 3 (full-time positions) does not ask about."""
    ids = employee_identities(claim)
    seen: dict[str, dict[str, set]] = {}
    for r in employee_rows(d):
        if r["period"] in ("year_one", "year_two") and (r["status"] in EXCLUDED or r["status"] in COUNTED):
            seen.setdefault(r["employee_id"], {}).setdefault(r["status"], set()).add(r["month"])
    bases = temporary_bases(claim)
    out = []
    for e, statuses in sorted(seen.items()):
        who = identity(ids, e)
        for s in EXCLUDED:
            if s in statuses and not (s.startswith("temporary") and statuses.keys() & set(COUNTED)):
                rule, why = STATUS[s]
                out.append((who.name, who.ssn, rule, why))
        if "part_time_equivalent" in statuses and e in bases:
            out.append((who.name, who.ssn, "P3, P4", f"{'/'.join(sorted(bases[e]))}: counted as a part-time position (hours toward full-time "
                        "equivalents), never as a full-time position (P2); question 3 asks about full-time positions, so its answer is NO"))
    return out


def temporary_bases(claim) -> dict[str, set[str]]:
    df = claim.payroll
    if "basis" not in df.columns:
        return {}
    rows = df.select("employee_id", "basis").unique().iter_rows()
    out: dict[str, set[str]] = {}
    for e, b in rows:
        if b in ("temporary", "seasonal"):
            out.setdefault(e, set()).add(b)
    return out


@dataclass(frozen=True)
class Sharing:
    """How one period's room was shared among a return's locations (L6), year of origin by year of
    origin (L4: year one first): the room each year of origin found, the locations' balances of it
    (opening plus allowed) and what each took; amounts as the determination's strings."""

    period: str
    room: str
    applied: str
    origins: tuple[tuple[str, str, str, tuple[tuple[str, str, str, str], ...]], ...]  # (origin, room left, balances, ((location, balance, share, applied), ...))
    pending: bool


def room_shared(det: Determination) -> list[Sharing]:
    """Each period of a several-location return ``det``: the room (one per return, L6), and for
    each year of origin in turn the room left for it, every location's balance, its share of the
    year's balances (exact, as a percentage to 0.01) and the amount it was applied."""
    out = []
    for k, ((start, end), r, line) in enumerate(zip(det.ledger.dates, det.ledger.rooms, det.ledger.lines)):
        left, origins = r.room, []
        for origin in ("year_one", "year_two"):
            held = []
            for loc in det.locations:
                o = next((o for o in loc.ledger.lines[k].origins if o.origin == origin), None)
                if o is not None and o.opening + o.allowed:
                    held.append((loc.claim_id, o.opening + o.allowed, o.applied))
            if not held:
                continue
            total = sum(b for _, b, _ in held)
            rows = tuple((loc, money(from_cents(b)), f"{Decimal(100 * b) / Decimal(total):.2f}%", "pending" if line.pending else money(from_cents(a)))
                         for loc, b, a in held)
            origins.append((origin, money(from_cents(left)), money(from_cents(total)), rows))
            left -= sum(a for _, _, a in held)
        out.append(Sharing(f"{start} to {end}", money(from_cents(r.room)), "pending" if line.pending else money(from_cents(line.applied)),
                           tuple(origins), line.pending))
    return out
