"""decide(claim) -> Determination: the single entry point of the core.

Load -> validate -> decide -> present flows one way, for one claim or a million:

1. ``prepare``: what the rules need of each header, read once, and the rules that need nothing
   else (W1-W3, E1-E5, the parameters in force, the minimum tax of L2, L1-L3: each credit year's
   period of allowance and each period's room, in cents).
2. ``law.positions`` (``classify``, ``monthly``): P1-P4 over every claim's payroll rows at once.
3. ``figures``: P5, C1-C3, L4-L5 and R1-R3 of each claim in exact whole numbers (positions as
   numerators over one denominator, money in cents): ``law.positions``, ``law.credit``,
   ``law.ledger``.
4. ``present``: one claim's figures as a ``Determination`` with its explanation (B1).

``decide`` is ``decide_many`` of one claim; the batch engine runs the same four steps and writes
its tables from the figures (``present`` only for the JSON Lines it is asked for). A claim is a
return: one location, or with ``locations`` several (L6), each measured alone (``measure``) and
settled together under one room per period (``settle``); a one-location claim is a return of one.
Every rule is a step of ``law`` carrying its reading; this module only orchestrates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import date
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import polars as pl

from .claim import Claim, ClaimHeader
from .determination import Determination, employee_months_by_claim, exact
from .law import credit as C
from .law import eligibility as E
from .law import ledger as L
from .law import limits
from .law import order as O
from .law.eligibility import Check
from .law.parameter_set import ParameterSet, baseline
from .law.parameters import Parameter
from .law.positions import CLAIM_COLUMNS, Month, Thresholds, average, average_denominator, classify, monthly, period_sums
from .law.windows import PERIOD_NAMES, Windows, windows, windows_from, year_one_first_month
from .money import cents, cents_text, exact_decimal, from_cents, money
from .payroll import HOURS_SCALE, first_unknown_month
from .problems import ClaimError, Problem

YEARS = ("year_one", "year_two")
_AMOUNTS = {"year_one": "amount_year_one", "year_two": "amount_year_two"}
_new = tuple.__new__  # a named tuple made without the Python frame of its __new__ (a batch makes several a claim)


class Constants(NamedTuple):
    """What a claim's rules take from its operations date and options alone (shared by the
    claims of a batch that have the same): W1-W3, the P2-P3 hour tests in force at the start of
    credit year one and the positions pass's columns, the parameters of C2, L2, L5 and E2."""

    windows: Windows
    thresholds: Thresholds
    columns: dict                  # the positions pass's per-claim columns (CLAIM_COLUMNS)
    warnings: tuple[str, ...]
    carryforward: int | None       # L5
    share: tuple[int, int]         # L2: the 50% limit, as a fraction
    amount_cents: tuple[int, int]  # C2: the amount per new position of each credit year
    year_ends: tuple[date, date]   # L1: the last day of each credit year
    qualified: tuple               # E2: the qualified municipalities for a credit year one starting then
    params: ParameterSet | None = None  # the parameters read (claim_constants always records the set)


def claim_constants(header: ClaimHeader, params: ParameterSet | None = None) -> Constants:
    """The ``Constants`` of a claim, under ``params`` (default: the baseline)."""
    params = params or baseline()
    header = params.header_for(header)  # a reform may set options
    return _constants(year_one_first_month(header.location.operations_began, header.options), header.options, params)


@lru_cache(maxsize=8192)  # a run's claims start in a few hundred months under a few options: once a process, not once a partition
def _constants(year_one: int, opts, params: ParameterSet) -> Constants:
    """``claim_constants`` of a claim whose credit year one starts in month ``year_one`` (W1:
    the operations date matters only through it)."""
    parameter = params.parameter
    w = windows_from(year_one)  # W1-W3
    t = Thresholds.at(w.year_one.start, params)
    cols = {"base_idx": w.first_month, "excl_temp": opts.part_time_excludes_temporary, **t.columns(),
            "eq_cap": None if opts.equivalent_hours_cap is None else opts.equivalent_hours_cap * HOURS_SCALE}  # P4a
    warnings = []
    for name in YEARS:
        par, when = parameter(_AMOUNTS[name]), getattr(w, name).start
        if when < par.values[0].start:
            warnings.append(f"credit {name.replace('_', ' ')} starts {when}, before the Act's first recorded date {par.values[0].start}; the first recorded amount is used")
    cf = opts.carryforward_periods
    if cf == "form_313":
        cf = int(parameter("carryforward_periods").at(w.year_one.start).value)
    share = Fraction(parameter("credit_limit_share").at(w.year_one.start).value)
    amounts = tuple(cents(parameter(_AMOUNTS[y]).at(getattr(w, y).start).value) for y in YEARS)
    return Constants(w, t, cols, tuple(warnings), cf, (share.numerator, share.denominator), amounts, (w.year_one.end, w.year_two.end),
                     params.qualified(w.year_one.start), params)


def cached_constants(header: ClaimHeader, cache: dict, params: ParameterSet | None = None) -> Constants:
    """``claim_constants``, computed once per (credit year one, options, parameter set): the
    operations date matters only through the month credit year one starts (W1). Both as the set
    reads the header: a reform's options may move credit year one for some of the claims that
    share it without them (``year_one_start``: those whose operations began on the first of a month)."""
    read = header if params is None else params.header_for(header)
    key = (year_one_first_month(read.location.operations_began, read.options), read.options, params)
    k = cache.get(key)  # one lookup: the key's hash (the options model's) is not cached
    if k is None:
        k = cache[key] = claim_constants(header, params)
    return k


def with_claim_columns(payrolls: Sequence[pl.DataFrame], cols: Sequence[dict]) -> pl.DataFrame:
    """The payrolls of many claims as one table, each row with its claim's code (``claim_id``, its
    place in ``payrolls``) and constants (``cols``, the ``CLAIM_COLUMNS``): gathered from a table
    of one row per claim, not built claim by claim (nor the codes a row at a time)."""
    heights = pl.Series([df.height for df in payrolls], dtype=pl.Int64)
    codes = pl.int_range(len(payrolls), dtype=pl.Int64, eager=True).repeat_by(heights).explode(empty_as_null=False).alias("claim_id")
    constants = pl.DataFrame([pl.Series(k, [c[k] for c in cols], dtype=t) for k, t in CLAIM_COLUMNS.items()])
    return pl.concat(payrolls, how="vertical").hstack([codes, *constants[codes].get_columns()])


class Prepared(NamedTuple):
    """What the rules need of one claim's header, read once, and what L1-L3 make of it (a named
    tuple: a batch makes one per claim, a frozen dataclass's fields cost a call each)."""

    header: ClaimHeader
    claim_id: str
    constants: Constants                  # what its operations date and options alone decide
    checks: tuple[Check, ...]             # E1-E4
    eligible: bool                        # E5: every condition of ``checks`` holds (read once a claim, not once a reading)
    cut: int | None                       # the first month not known yet (as_of)
    limited: bool                         # L2 applies: CBT, or insurers by option L3
    minimum_taxes: tuple                  # per period: limits.MinimumTax, or None when not limited
    period_dates: tuple[tuple[date, date], ...]
    allowed_in: tuple[int | None, int | None]  # L1: the period of allowance of each credit year (None: not among the periods)
    rooms: tuple[limits.Room, ...]             # L2-L3: each period's room for the credit
    placed: tuple[tuple[O.Placed, ...], ...]   # L2a: each period's other credits, before or after this one
    notes: tuple[str, ...]                     # warnings of the header's reading (L2a: an earlier list in force)

    @property
    def windows(self) -> Windows:
        return self.constants.windows

    def amount(self, year: str) -> tuple[Parameter, Decimal]:
        """C2: the amount per new position in force at the start of the credit year."""
        par = self.constants.params.parameter(_AMOUNTS[year])
        return par, par.at(getattr(self.windows, year).start).value


def prepare(header: ClaimHeader, claim_id: str | None = None, cache: dict | None = None, window_of: tuple[str, str] | None = None,
            params: ParameterSet | None = None, constants: Constants | None = None) -> Prepared:
    """Read a validated one-location header for the rules, under ``params`` (default: the
    baseline). ``cache``, shared by the claims of a batch: their ``Constants``, computed once for
    the claims that share its inputs (``constants``: the claim's, when the caller has them).
    ``window_of``: for a location of a several-location return without
    ``earlier_credit_period_start``, the taxpayer's window (E4 across locations) as (its first
    month "YYYY-MM", the id of the first listed location). Raises ``ClaimError`` when a period's
    minimum tax (L2) can be neither read nor derived."""
    k = constants or (claim_constants(header, params) if cache is None else cached_constants(header, cache, params))
    header = k.params.header_for(header)
    tp, opts, w = header.taxpayer, header.options, k.windows
    cid = claim_id or tp.id
    limited = limits.limited(tp.tax, opts.insurer_limits)  # L2-L3
    earlier, first_site = (tp.earlier_credit_period_start, None) if window_of is None else window_of
    checks = E.checks(tp.tax, header.location.municipality, tp.uez_benefit, earlier, w, first_site, k.qualified)  # E1-E4
    periods = header.periods
    dates = tuple([(p.start, p.end) for p in periods])
    allowed_in = (L.allowed_in(k.year_ends[0], dates), L.allowed_in(k.year_ends[1], dates))  # L1
    eligible_tax, share, room = tp.tax in E.TAXES, k.share, limits.room
    if limited:  # L2: each period's minimum tax and floor
        mts, floors, minimum_tax, floor, tax, sgm = [], [], limits.minimum_tax, limits.floor, tp.tax, opts.s_corporation_group_minimum
        for i, p in enumerate(periods):
            try:
                mt = minimum_tax(tax, p.start, p.end, p.minimum_tax, p.nj_gross_receipts, p.s_corporation, p.group_payroll_5m,
                                 p.group_payroll, p.combined_group_member, sgm, params)
            except limits.MinimumTaxUnknown as e:
                raise ClaimError([Problem(f"periods[{i}].minimum_tax", str(e))], cid) from None
            mts.append(mt)
            floors.append(floor(mt.amount, p.alternative_minimum_assessment))
        mts = tuple(mts)
    else:  # L3: neither
        mts, floors = (None,) * len(periods), (0,) * len(periods)
    placed, others, notes = _placed(header, cid)
    rooms = tuple([room(cents(p.liability), limited, eligible_tax, fl, before, after, share) for p, fl, (before, after) in zip(periods, floors, others)])  # L2-L3
    return _new(Prepared, (
        header, cid, k, checks, E.eligible(checks), first_unknown_month(header.as_of), limited, mts, dates, allowed_in, rooms, placed, notes))


_NO_OTHERS = (0, 0)  # L2: no other credits before this one or after it


def _placed(header: ClaimHeader, claim_id: str) -> tuple[tuple[tuple[O.Placed, ...], ...], tuple[tuple[int, int], ...], tuple[str, ...]]:
    """L2a: every period's other credits placed before or after this one, the sums of those
    before and after it (L2, in cents), and the warnings of periods that used the Director's list
    before it was in force. Raises ``ClaimError`` naming each credit that cannot be placed."""
    periods = header.periods
    if not any([p.other_credits for p in periods]):
        return ((),) * len(periods), (_NO_OTHERS,) * len(periods), ()
    found, out, sums, notes = [], [], [], []
    credit_order = header.options.credit_order
    for i, p in enumerate(periods):
        if not p.other_credits:
            out.append(())
            sums.append(_NO_OTHERS)
            continue
        row, used_list = [], False
        for j, c in enumerate(p.other_credits):
            try:
                row.append(x := O.place(c.code, c.name, c.order, credit_order))
            except O.CreditNotPlaced as e:
                found.append(Problem(f"periods[{i}].other_credits[{j}]", str(e)))
                continue
            used_list = used_list or x.basis == "regulation" or c.code is not None
        if used_list and (note := O.earlier_version(p.start)) is not None:
            notes.append(note)
        out.append(tuple(row))
        if not found:
            sums.append(O.sums([cents(c.amount) for c in p.other_credits], row))
    if found:
        raise ClaimError(found, claim_id)
    return tuple(out), tuple(sums), tuple(notes)


# -- the same claims under a second parameter set (analysis.reform) ---------------------------------
#: The rules ``prepare`` applies (step 1 above). A parameter of any other rule (C2's amounts, the hour
#: tests of P2-P3, L5's carryforward) is only handed on by it, in a claim's ``Constants``.
PREPARE_RULES = frozenset({"W1", "W2", "W3", "E1", "E2", "E3", "E4", "L1", "L2", "L2a", "L2b", "L2c", "L3"})


def read_after_prepare(params: ParameterSet, prepared_under: ParameterSet) -> bool:
    """Whether ``params`` differs from ``prepared_under`` only in what ``prepare`` does not read:
    every part of the set but its credit parameters alike (the municipalities of E2, the minimum
    tax of L2, the options; its name and description aside), and each credit parameter that
    differs (each names its rule, ``credit.toml``) of a rule outside ``PREPARE_RULES``."""
    parts = [f.name for f in fields(ParameterSet) if f.name not in ("name", "description", "changes", "credit")]
    if any(getattr(params, k) != getattr(prepared_under, k) for k in parts):
        return False
    before = prepared_under.credit
    return params.credit.keys() == before.keys() and all(par.rule not in PREPARE_RULES for name, par in params.credit.items() if par != before[name])


def prepared_again(prep: Prepared, constants: Constants) -> Prepared:
    """``prepare(header, ..., params=params)`` of the claim ``prep`` prepared under another set,
    one that differs from ``params`` only after ``prepare`` (``read_after_prepare``): ``prep``
    with ``constants``, its header's ``Constants`` under ``params`` (``cached_constants``): made as
    ``_replace`` would make it, without its keywords (a reform makes one a claim)."""
    header, claim_id, _, *rest = prep
    return _new(Prepared, (header, claim_id, constants, *rest))


class Measured(NamedTuple):
    """A location's figures before the ledger, exact: positions as numerators over ``den``, money
    in cents; None where a month after ``as_of`` leaves it undecided."""

    den: int
    averages: tuple[int | None, int | None, int | None]   # base, year one, year two (P5)
    new: tuple[int | None, int | None]                    # C1
    credit: tuple[int | None, int | None]                 # C2
    ratio: tuple[int, int] | None                         # C3


class Figures(NamedTuple):
    """Every figure of one location after the positions pass and the return's ledger."""

    den: int
    averages: tuple[int | None, int | None, int | None]   # base, year one, year two (P5)
    new: tuple[int | None, int | None]                    # C1
    credit: tuple[int | None, int | None]                 # C2
    ratio: tuple[int, int] | None                         # C3
    allowed_in: tuple[int | None, int | None]             # L1
    rooms: tuple[limits.Room, ...]                        # L2-L3 (the return's)
    lines: tuple[L.Line, ...]                             # L4-L6, R1-R3 (this location's share)
    pending_from: int | None

    @property
    def refund(self) -> int:
        return L.refunded(self.lines)

    @property
    def carried_forward(self) -> int:
        return L.carried_out(self.lines)


def measure(prep: Prepared, sums: tuple[int, int, int, int, int, int]) -> Measured:
    """P5, C1-C3 of one location. ``sums``: the full-time positions and equivalent hours of each
    period (``law.positions.period_sums``: base, year one, year two)."""
    k, cut = prep.constants, prep.cut
    first, cols, whole = k.windows.first_month, k.columns, prep.header.options.whole_positions
    ft_num, ft_den = cols["ft_num"], cols["ft_den"]
    base = average(0, first, sums[0], sums[3], ft_num, ft_den, cut)  # P5
    one = average(1, first, sums[1], sums[4], ft_num, ft_den, cut)
    two = average(2, first, sums[2], sums[5], ft_num, ft_den, cut)
    den = average_denominator(ft_num)
    new = (C.new_positions(one, base, den, whole), C.new_positions(two, base, den, whole))  # C1
    return _credited(prep, den, (base, one, two), new)


def _credited(prep: Prepared, den: int, averages: tuple, new: tuple) -> Measured:
    """C2 and C3 of one location whose P5 averages and C1 new positions are ``averages`` and ``new``."""
    amounts, eligible = prep.constants.amount_cents, prep.eligible
    credit = (C.potential_credit(new[0], den, amounts[0], eligible), C.potential_credit(new[1], den, amounts[1], eligible))  # C2, E5
    return _new(Measured, (den, averages, new, credit, C.sustained_effort_ratio(*new)))  # C3


def measured_again(prep: Prepared, before: Measured) -> Measured:
    """``measure`` of the claim ``prep`` prepared again (``prepared_again``) from its Prepared under
    another set, ``before`` being its Measured there, when its P1-P4 constants are the same under
    both (``Constants.columns``: the hour tests, the first base month, the options P1-P4 read):
    the same rows give the same P5 averages and C1 new positions, so only C2 (the set's amounts)
    and C3 are worked out again."""
    return _credited(prep, before.den, before.averages, before.new)


def settle(preps: Sequence[Prepared], measured: Sequence[Measured]) -> tuple[tuple[L.Line, ...], list[Figures], int | None]:
    """L4-L6, R1-R3 of one return: its locations' credits applied together under the return's
    room (the first location's ``rooms``: the periods are the return's). Returns the return's
    lines, each location's ``Figures`` and the first undecided period."""
    first = preps[0]
    opts = first.header.options
    accounts = [_new(L.Account, (p.allowed_in, m.credit, m.ratio)) for p, m in zip(preps, measured)]
    total, lines, pending_from = L.run(
        [r.room for r in first.rooms], accounts, first.constants.carryforward, opts.refund, opts.location_order == "as_listed")
    figs = [_new(Figures, (*m, p.allowed_in, first.rooms, ln, pending_from)) for p, m, ln in zip(preps, measured, lines)]
    return total, figs, pending_from


def figures(prep: Prepared, sums: tuple[int, int, int, int, int, int]) -> Figures:
    """P5, C1-C3, L4-L5 and R1-R3 for a one-location return (with ``prep``'s L1-L3)."""
    return settle([prep], [measure(prep, sums)])[1][0]


NO_HOURS = (0, 0, 0, 0, 0, 0)


def measured_sums(per_month: pl.DataFrame) -> dict[int, tuple]:
    """P5's period sums of each claim (by code) from the monthly sums of the positions pass; a
    claim without hours in its periods has ``NO_HOURS``."""
    sums = period_sums(per_month)
    codes, *columns = (sums.get_column(c).to_list() for c in sums.columns)  # columns to lists: cheaper than a tuple a row from polars
    return dict(zip(codes, zip(*columns)))


def measured_months(per_month: pl.DataFrame) -> dict[int, dict[int, tuple[int, int]]]:
    """Each claim's (by code) monthly sums of the positions pass, by month: full-time positions
    and equivalent hours, as ``present`` takes them."""
    measured: dict[int, dict[int, tuple[int, int]]] = {}
    codes, idxs, fts, eqhs = (per_month.get_column(c).to_list() for c in ("claim_id", "month_idx", "full_time", "equivalent_hours"))
    for code, idx, sums in zip(codes, idxs, zip(fts, eqhs)):  # columns to lists: cheaper than a tuple a row from polars
        measured.setdefault(code, {})[idx] = sums
    return measured


def _entry(value, step, inputs=None, parameters=None, depends_on=(), reading: str | None = None, rule: str | None = None) -> dict:
    """One figure of the explanation (B1), after its name: ``step`` is the law's function, whose
    rule, citation and reading it carries (``reading`` when an option or fact adds to it)."""
    return {"value": value, "rule": rule or step.RULE, "cite": step.CITE, "reading": reading or step.READING,
            "inputs": inputs or {}, "parameters": parameters or {}, "depends_on": list(depends_on)}


def decide(claim: Claim) -> Determination:
    """Decide one claim (N.J.S.A. 52:27BBB-55 as RULES.md reads it): a return of one location or,
    with ``locations``, of several (L6)."""
    return decide_many([claim])[0]


def first_site_window(first: ClaimHeader, site: str, params: ParameterSet | None = None) -> tuple[str, str]:
    """E4 across locations: the taxpayer's window taken from its first listed location ``site``
    (header ``first``), as (its first month "YYYY-MM", ``site``): that location's credit year one
    (W1) under ``params``, whose option changes may move it, as they move the location's own."""
    header = (params or baseline()).header_for(first)
    y1 = year_one_first_month(header.location.operations_began, header.options)
    return f"{y1 // 12:04d}-{y1 % 12 + 1:02d}", site


def _window_of(claim: Claim, params: ParameterSet | None) -> tuple[str, str] | None:
    """E4 across locations: the taxpayer's window when it is taken from the first listed
    location (several locations and no ``earlier_credit_period_start``)."""
    parts = claim.locations
    if not claim.parts or claim.header.taxpayer.earlier_credit_period_start is not None:
        return None
    return first_site_window(parts[0].header, parts[0].location_id, params)


def decide_many(claims: Sequence[Claim], explain: bool = True, params: ParameterSet | None = None) -> list[Determination]:
    """Decide many claims: one columnar positions pass over every location, then each return's
    figures (its locations under one room, L6), presented. ``explain=False`` builds no
    explanation (B1) at all: the figures, ``pending`` and the rest are the same. ``params``: the
    parameter set (a reform's, ``law.parameter_set``; default the baseline)."""
    if not claims:
        return []
    cache: dict = {}
    parts, returns = [], []
    for c in claims:
        window = _window_of(c, params)
        first = len(parts)
        for part in c.locations:
            parts.append((part, prepare(part.header, part.location_id or c.source or part.header.taxpayer.id, cache, window, params)))
        returns.append(range(first, len(parts)))
    classified = classify(with_claim_columns([c.payroll for c, _ in parts], [p.constants.columns for _, p in parts])).collect()
    per_month = monthly(classified.lazy()).collect()
    sums, measured = measured_sums(per_month), measured_months(per_month)
    emps = employee_months_by_claim(classified) if explain else {}
    out = []
    for c, codes in zip(claims, returns):
        preps = [parts[i][1] for i in codes]
        total, figs, pending_from = settle(preps, [measure(p, sums.get(i, NO_HOURS)) for p, i in zip(preps, codes)])
        dets = [present(p, f, measured.get(i, {}), emps.get((i,)), explain) for p, f, i in zip(preps, figs, codes)]
        out.append(dets[0] if not c.parts else present_return(c, preps, figs, total, pending_from, dets, explain))
    return out


def _fraction(num: int | None, den: int) -> Fraction | None:
    return None if num is None else Fraction(num, den)


def _cash(c: int | None) -> Decimal | None:
    return None if c is None else from_cents(c)


def _not_yet(allowed_in, credit, w: Windows) -> dict:
    """L1: the credits whose period of allowance is not among the periods given."""
    return {
        y: {"amount": cents_text(credit[o]), "allowed_for_period_containing": getattr(w, y).end.isoformat()}
        for o, y in enumerate(YEARS)
        if allowed_in[o] is None and credit[o] is not None and credit[o] > 0
    }


def ledger_of(prep: Prepared, f: Figures) -> L.Ledger:
    """A location's figures as its ``Ledger`` (Form 313 Parts IV and V)."""
    return L.Ledger(prep.period_dates, f.rooms, f.lines, f.pending_from, _not_yet(f.allowed_in, f.credit, prep.windows))


def _missing_year_one_period(prep: Prepared, f: Figures, pending: dict | None, undecided: list[str]) -> dict | None:
    """V2: ``pending`` with the period of allowance of credit year one that is missing, when the
    ledger is undecided for want of it (``ledger.year_one_period_missing``)."""
    if not L.year_one_period_missing(f.allowed_in, f.credit):
        return pending
    ends = prep.windows.year_one.end.isoformat()
    return {**(pending or {"figures": undecided}), "missing_periods": [
        {"containing": ends, "why": f"credit year one ends {ends}: its period of allowance (L1) is not among the periods given, so its "
                                    "balance entering them, the refund (R1) and what is carried are undecided (V2); add that period "
                                    "and those between it and the first one given"}]}


_NO_SUMS = (0, 0)  # P5: a month without hours recorded: no full-time positions, no equivalent hours
#: A location whose payroll records no hours in any month of its windows (W1-W3): every average
#: is zero, which a date written wrong (operations_began, the payroll's months) also gives.
_NO_HOURS_IN_WINDOWS = ("no hours are recorded in any month from {start} to {end} (the base year and credit years one and two, W1-W3): "
                        "every average, new position and credit is zero; check the payroll's months and operations_began")


class _Notes:
    """The figures of a determination as ``present`` records them: ``note(figure, missing, entry)``
    adds the figure to ``undecided`` when ``missing`` and, explaining, ``entry()`` (its
    ``_entry``) to the ``trace`` (B1)."""

    __slots__ = ("explain", "trace", "undecided")

    def __init__(self, explain: bool):
        self.explain, self.trace, self.undecided = explain, [], []

    def __call__(self, figure: str, missing: bool, entry) -> None:
        if missing:
            self.undecided.append(figure)
        if self.explain:
            self.trace.append({"figure": figure, **entry()})


def present(
    prep: Prepared,
    f: Figures,
    measured: dict[int, tuple[int, int]],
    employee_months: pl.DataFrame | None = None,
    explain: bool = True,
) -> Determination:
    """One location's ``Figures`` as a ``Determination`` (``measured``: its monthly sums by
    month), with the explanation (B1) of each figure: its rule, citation, reading (the law's
    step's), parameters, inputs and the figures it depends on. ``explain=False`` leaves the
    explanation out; which figures are undecided (``pending``) is recorded either way."""
    header, w, t = prep.header, prep.windows, prep.constants.thresholds
    opts = header.options
    tp = header.taxpayer
    note = _Notes(explain)
    trace, undecided = note.trace, note.undecided

    # E1-E5 (a), (d)
    checks, eligible = prep.checks, prep.eligible
    note("eligible", False, lambda: _entry(
        eligible, E.checks,
        {"checks": [c.to_dict() for c in checks], **E.operations_began_known(header.location.operations_began, header.location.operations_source)}))

    # W1-W3 (e)
    note("windows", False, lambda: _entry(
        w.to_dict(), windows,
        {"operations_began": header.location.operations_began.isoformat(), "operations_source": header.location.operations_source,
         "option year_one_start": opts.year_one_start}))

    # P5: monthly positions and the averages, with completeness (as_of)
    first, cut = w.first_month, prep.cut
    known_to, got = first + 36 if cut is None else cut, measured.get  # the months before as_of's first unknown one are known
    months = tuple([_new(Month, (idx, *got(idx, _NO_SUMS), idx < known_to)) for idx in range(first, first + 36)])
    averages = {name: _fraction(f.averages[k], f.den) for k, name in enumerate(PERIOD_NAMES)}
    for name in PERIOD_NAMES:
        note(f"average_positions.{name}", averages[name] is None, lambda: _entry(
            exact_decimal(averages[name]) if averages[name] is not None else None, average,
            {"exact": exact(averages[name]), "period": name},  # its twelve months are added from `monthly` when presented
            t.trace, ["employee_months"]))

    # C1 (e): new positions
    new = {name: _fraction(f.new[o], f.den) for o, name in enumerate(YEARS)}
    for name in YEARS:
        note(f"new_positions.{name}", new[name] is None, lambda: _entry(
            exact_decimal(new[name]) if new[name] is not None else None, C.new_positions,
            {"exact": exact(new[name]), "option whole_positions": opts.whole_positions},
            depends_on=[f"average_positions.{name}", "average_positions.base"],
            reading=C.new_positions.READING + (C.WHOLE_POSITIONS if opts.whole_positions else "")))

    # C2 (a): the credit of each year (zero when not eligible, E5)
    credit = {name: _cash(f.credit[o]) for o, name in enumerate(YEARS)}
    for name in YEARS:
        note(f"credit.{name}", credit[name] is None, lambda: _credit_entry(prep, name, credit[name], eligible))

    # C3 (e): sustained effort ratio
    ratio = None if f.ratio is None else Fraction(*f.ratio)
    note("sustained_effort_ratio", ratio is None, lambda: _entry(
        exact_decimal(ratio) if ratio is not None else None, C.sustained_effort_ratio,
        {"exact": exact(ratio)}, depends_on=["new_positions.year_two", "new_positions.year_one"]))

    ledger = ledger_of(prep, f)
    _trace_rooms(note, prep)
    _trace_lines(note, prep, ledger, ratio)
    warnings = list(prep.constants.warnings) + list(prep.notes)
    if not measured and known_to > first:  # not a figure pending: zero for want of any hours in the windows
        warnings.append(_NO_HOURS_IN_WINDOWS.format(start=w.base.start.isoformat(), end=w.year_two.end.isoformat()))
    _trace_totals(note, ledger, len(header.periods), warnings)

    pending = None
    if cut is not None:
        missing = [f"{m.idx // 12:04d}-{m.idx % 12 + 1:02d}" for m in months if not m.known]
        if missing or undecided:
            pending = {"as_of": header.as_of.isoformat(), "missing_months": missing, "figures": undecided,
                       "reading": "months after as_of are unknown, not zero; figures that depend on them are left undecided"}
    pending = _missing_year_one_period(prep, f, pending, undecided)  # V2

    return Determination(
        claim_id=prep.claim_id, taxpayer_id=tp.id, eligible=eligible, checks=checks, windows=w, months=months,
        full_time_hours=t.full_time_hours, averages=averages, new_positions=new, credit=credit,
        sustained_effort_ratio=ratio, ledger=ledger, pending=pending, warnings=tuple(warnings),
        explanation=tuple(trace), employee_months=employee_months,
    )


def _credit_entry(prep: Prepared, name: str, credit: Decimal | None, eligible: bool) -> dict:
    """C2 (a), E5: the explanation of credit year ``name``'s credit, with the amount in force."""
    par, amount = prep.amount(name)
    return _entry(
        money(credit) if credit is not None else None, C.potential_credit,
        {"eligible": eligible}, {par.name: par.trace(getattr(prep.windows, name).start)}, [f"new_positions.{name}", "eligible"],
        reading=C.potential_credit.READING.replace("{amount}", str(amount)) + ("" if eligible else C.NOT_ELIGIBLE))


def _trace_rooms(note, prep: Prepared) -> None:
    """L2-L3 (b)(3): the room of each period of the return (always decided: nothing to record
    without the explanation)."""
    if not note.explain:
        return
    header, w, opts = prep.header, prep.windows, prep.header.options
    share = prep.constants.params.parameter("credit_limit_share").trace(w.year_one.start) if prep.limited else None  # L2: one for the return
    for i, (p, r) in enumerate(zip(header.periods, prep.rooms)):
        mt = prep.minimum_taxes[i]
        note(f"periods[{i}].room", False, lambda: _entry(
            cents_text(r.room), limits.room,
            {"liability": str(p.liability),
             **({"minimum_tax": mt.trace, "alternative_minimum_assessment": None if p.alternative_minimum_assessment is None else str(p.alternative_minimum_assessment)} if prep.limited else {}),
             "other_credits": [_other_credit(c, x, opts.credit_order) for c, x in zip(p.other_credits, prep.placed[i])]},
            {"credit_limit_share": share} if prep.limited else {},
            reading=limits.ROOM_LIMITED if prep.limited else limits.ROOM_UNLIMITED, rule="L2" if prep.limited else "L3"))


def _other_credit(c, x: O.Placed, credit_order: str) -> dict:
    """L2a: an other credit as the trace shows it: where it was placed, and why."""
    how = {"given": "the order given in the claim stands (stated by the claimant or examiner)",
           "form_313": O.FORM_313, "regulation": O.REGULATION}[x.basis]
    return {"name": c.name, "amount": str(c.amount), "code": c.code, "order": x.order, "order_from": x.basis, "reading": how,
            **({"listed": {"number": x.listed.number, "name": x.listed.name, "statute": x.listed.statute}} if x.listed else {}),
            "option credit_order": credit_order, "rule": O.place.RULE, "cite": O.place.CITE}


def _trace_lines(note, prep: Prepared, ledger: L.Ledger, ratio: Fraction | None, shares: list | None = None) -> None:
    """L1, L4-L6, R1-R3 (b), (c): each period's movements. ``shares``: with several locations,
    each period's lines of the locations (by id), how the room was shared."""
    if not note.explain and ledger.pending_from is None:  # every period decided: nothing to record without the explanation
        return
    opts, w, cf = prep.header.options, prep.windows, prep.constants.carryforward
    ends = {"year_one_ends": w.year_one.end.isoformat(), "year_two_ends": w.year_two.end.isoformat()}
    for i, ((start, end), line) in enumerate(zip(ledger.dates, ledger.lines)):
        period = f"{start}..{end}"
        base = lambda: {"period": period, "pending": line.pending}  # noqa: E731
        cash = lambda x: None if line.pending else cents_text(x)  # noqa: E731
        note(f"periods[{i}].allowed", line.pending, lambda: _entry(
            cash(line.allowed), L.allowed_in, {**base(), "allows": list(line.allows), **ends},
            depends_on=[f"credit.{o}" for o in line.allows]))
        share = {} if shares is None else {"locations": {k: {"applied": cash(ln.applied), "origins": {o.origin: o.to_dict() for o in ln.origins}}
                                                         for k, ln in shares[i]}, "option location_order": opts.location_order}
        note(f"periods[{i}].applied", line.pending, lambda: _entry(
            cash(line.applied), L.apply,
            {**base(), "origins": {o.origin: o.to_dict() for o in line.origins}, **share}, depends_on=[f"periods[{i}].room", f"periods[{i}].allowed"],
            reading=L.apply.READING + (L.APPLY_AS_LISTED if opts.location_order == "as_listed" else "")))
        if "year_two" in line.allows:
            y1 = next((o for o in line.origins if o.origin == "year_one"), None)
            note(f"periods[{i}].refund", line.pending, lambda: _entry(
                cash(line.refund), L.refund,
                {**base(), "option refund": opts.refund,
                 "year_one_balance_after_application": cents_text(y1.opening + y1.allowed - y1.applied) if y1 else "0.00",
                 **({"sustained_effort_ratio": exact(ratio)} if shares is None else {"locations": {k: cash(ln.refund) for k, ln in shares[i]}})},
                depends_on=[f"periods[{i}].applied"] + (["sustained_effort_ratio"] if shares is None else []),
                reading=L.refund.READING + ("" if opts.refund else L.REFUND_NOT_TAKEN)))
        note(f"periods[{i}].forfeited", line.pending, lambda: _entry(
            cash(line.forfeited), L.forfeit, {**base(), "carryforward_periods": cf}, depends_on=[f"periods[{i}].applied"]))
        note(f"periods[{i}].carried_forward", line.pending, lambda: _entry(
            cash(line.carried_forward), L.carried, base(),
            depends_on=[f"periods[{i}].applied", *([f"periods[{i}].refund"] if "year_two" in line.allows else []), f"periods[{i}].forfeited"]))


def _trace_totals(note, ledger: L.Ledger, n_periods: int, warnings: list[str]) -> None:
    last = n_periods - 1
    totals_pending = ledger.pending_from is not None
    if last >= 0:
        note("refund", totals_pending, lambda: _entry(
            None if totals_pending else cents_text(ledger.refund), L.refund,
            depends_on=[f"periods[{i}].refund" for i, ln in enumerate(ledger.lines) if "year_two" in ln.allows],
            reading="the total refunded over the periods given"))
        note("carried_forward", totals_pending, lambda: _entry(
            None if totals_pending else cents_text(ledger.carried_forward), L.carried,
            depends_on=[f"periods[{last}].carried_forward"], reading="the balance carried out of the last period given"))
    else:
        warnings.append("no periods given: the credit is computed but applied nowhere; add the privilege or reporting periods to apply it")


def taxpayer_windows(claim: Claim, preps: Sequence[Prepared]) -> Windows:
    """E4 across locations: the taxpayer's credit window, ``earlier_credit_period_start`` when
    given, else the first listed location's."""
    earlier = claim.header.taxpayer.earlier_credit_period_start
    if earlier is None:
        return preps[0].windows
    return windows_from(int(earlier[:4]) * 12 + int(earlier[5:7]) - 1)


def present_return(
    claim: Claim, preps: Sequence[Prepared], figs: Sequence[Figures], total: tuple[L.Line, ...], pending_from: int | None,
    dets: Sequence[Determination], explain: bool = True,
) -> Determination:
    """A several-location return (L6) as a ``Determination``: the return's credit, periods and
    totals, one room per period, with each location's determination under ``locations``."""
    first = preps[0]
    w = taxpayer_windows(claim, preps)
    eligible = any(p.eligible for p in preps)
    checks = () if eligible else tuple(c for p in preps for c in p.checks)
    credit = {y: None if any(f.credit[o] is None for f in figs) else from_cents(sum(f.credit[o] for f in figs)) for o, y in enumerate(YEARS)}
    not_yet: dict = {}
    for p, f in zip(preps, figs):
        for y, v in _not_yet(f.allowed_in, f.credit, p.windows).items():
            prev = not_yet.get(y)
            not_yet[y] = v if prev is None else {**prev, "amount": money(Decimal(prev["amount"]) + Decimal(v["amount"]))}
    ledger = L.Ledger(first.period_dates, first.rooms, total, pending_from, not_yet)
    note = _Notes(explain)
    trace, undecided = note.trace, note.undecided

    ids = [d.claim_id for d in dets]
    note("eligible", False, lambda: _entry(
        eligible, E.checks, {"locations": {d.claim_id: d.eligible for d in dets}},
        reading="the return is eligible when at least one of its locations is; each location is decided on its own conditions (E4: one window per taxpayer)"))
    note("windows", False, lambda: _entry(
        w.to_dict(), E.single_credit_period,
        {"earlier_credit_period_start": claim.header.taxpayer.earlier_credit_period_start, "first_location": ids[0]},
        reading="the taxpayer's credit window (E4): earlier_credit_period_start when given, else the first listed location's"))
    for o, y in enumerate(YEARS):
        note(f"credit.{y}", credit[y] is None, lambda: _entry(
            None if credit[y] is None else money(credit[y]), C.potential_credit, {"locations": {d.claim_id: None if d.credit[y] is None else money(d.credit[y]) for d in dets}},
            reading="the sum of the locations' credits, each measured at its location (C1-C3)"))
    shares = [[(d.claim_id, f.lines[i]) for d, f in zip(dets, figs)] for i in range(len(total))]
    _trace_rooms(note, first)
    _trace_lines(note, first, ledger, None, shares)
    # the return's warnings (its parameters', its header's) as they are; a location's own (its payroll's) naming it
    shared = [{*p.constants.warnings, *p.notes} for p in preps]
    warnings = sorted({m if m in common else f"location {d.claim_id}: {m}" for d, common in zip(dets, shared) for m in d.warnings})
    _trace_totals(note, ledger, len(first.period_dates), warnings)
    pending = None
    if any(d.pending for d in dets) or undecided:
        pending = {"as_of": claim.header.as_of.isoformat() if claim.header.as_of else None, "figures": undecided,
                   "locations": {d.claim_id: d.pending for d in dets if d.pending},
                   "reading": "months after as_of are unknown, not zero; figures that depend on them are left undecided"}
    return Determination(
        claim_id=claim.source or claim.header.taxpayer.id, taxpayer_id=claim.header.taxpayer.id, eligible=eligible, checks=checks,
        windows=w, months=(), full_time_hours=first.constants.thresholds.full_time_hours,
        averages=dict.fromkeys(PERIOD_NAMES), new_positions=dict.fromkeys(YEARS), credit=credit, sustained_effort_ratio=None,
        ledger=ledger, pending=pending, warnings=tuple(warnings), explanation=tuple(trace), locations=tuple(dets))
