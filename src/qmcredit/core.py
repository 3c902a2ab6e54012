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
its tables from the figures (``present`` only for the JSON Lines it is asked for).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

import polars as pl

from .claim import Claim, ClaimHeader
from .determination import Determination, exact
from .law import credit as C
from .law import eligibility as E
from .law import ledger as L
from .law import limits
from .law.eligibility import Check
from .law.parameter_set import ParameterSet, baseline
from .law.parameters import Parameter
from .law.positions import CLAIM_COLUMNS, Month, Thresholds, average_denominator, average_numerator, classify, monthly, period_sums
from .law.windows import PERIOD_NAMES, Windows, windows, year_one_first_month
from .money import cents, exact_decimal, from_cents, money
from .payroll import first_unknown_month
from .problems import ClaimError, Problem

YEARS = ("year_one", "year_two")
_AMOUNTS = {"year_one": "amount_year_one", "year_two": "amount_year_two"}


class Constants(NamedTuple):
    """What a claim's rules take from its operations date and options alone (shared by the
    claims of a batch that have the same): W1-W3, the P2-P3 hour tests in force at the start of
    credit year one and the positions pass's columns, the parameters of C2, L2 and L5."""

    windows: Windows
    thresholds: Thresholds
    columns: dict                  # the positions pass's per-claim columns (CLAIM_COLUMNS)
    warnings: tuple[str, ...]
    carryforward: int | None       # L5
    share: tuple[int, int]         # L2: the 50% limit, as a fraction
    amount_cents: tuple[int, int]  # C2: the amount per new position of each credit year
    year_ends: tuple[date, date]   # L1: the last day of each credit year
    params: ParameterSet | None = None  # the parameters read (claim_constants always records the set)


def claim_constants(header: ClaimHeader, params: ParameterSet | None = None) -> Constants:
    """The ``Constants`` of a claim, under ``params`` (default: the baseline)."""
    params = params or baseline()
    header = params.header_for(header)  # a reform may set options
    opts, parameter = header.options, params.parameter
    w = windows(header.location.operations_began, opts)
    t = Thresholds.at(w.year_one.start, params)
    cols = {"base_idx": w.first_month, "excl_temp": opts.part_time_excludes_temporary, **t.columns()}
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
    return Constants(w, t, cols, tuple(warnings), cf, (share.numerator, share.denominator), amounts, (w.year_one.end, w.year_two.end), params)


def cached_constants(header: ClaimHeader, cache: dict, params: ParameterSet | None = None) -> Constants:
    """``claim_constants``, computed once per (credit year one, options, parameter set): the
    operations date matters only through the month credit year one starts (W1)."""
    key = (year_one_first_month(header.location.operations_began, header.options), header.options, params)
    k = cache.get(key)  # one lookup: the key's hash (the options model's) is not cached
    if k is None:
        k = cache[key] = claim_constants(header, params)
    return k


def with_constants(payroll: pl.DataFrame, claim_id, cols: dict) -> pl.DataFrame:
    return payroll.with_columns(
        pl.lit(claim_id).alias("claim_id"),
        *(pl.lit(v, dtype=CLAIM_COLUMNS[k]).alias(k) for k, v in cols.items()),
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """What the rules need of one claim's header, read once, and what L1-L3 make of it."""

    header: ClaimHeader
    claim_id: str
    constants: Constants                  # what its operations date and options alone decide
    checks: tuple[Check, ...]             # E1-E4
    cut: int | None                       # the first month not known yet (as_of)
    limited: bool                         # L2 applies: CBT, or insurers by option L3
    minimum_taxes: tuple                  # per period: limits.MinimumTax, or None when not limited
    period_dates: tuple[tuple[date, date], ...]
    allowed_in: tuple[int | None, int | None]  # L1: the period of allowance of each credit year (None: not among the periods)
    rooms: tuple[PeriodRoom, ...]              # L2-L3: each period's room for the credit

    @property
    def windows(self) -> Windows:
        return self.constants.windows

    @property
    def eligible(self) -> bool:
        return all(c.passed for c in self.checks)

    def amount(self, year: str) -> tuple[Parameter, Decimal]:
        """C2: the amount per new position in force at the start of the credit year."""
        par = self.constants.params.parameter(_AMOUNTS[year])
        return par, par.at(getattr(self.windows, year).start).value


def prepare(header: ClaimHeader, claim_id: str | None = None, cache: dict | None = None, params: ParameterSet | None = None) -> Prepared:
    """Read a validated header for the rules, under ``params`` (default: the baseline). ``cache``,
    shared by the claims of a batch: their ``Constants`` and E1-E4 checks, each computed once for
    the claims that share its inputs. Raises ``ClaimError`` when a period's minimum tax (L2) can
    be neither read nor derived."""
    k = claim_constants(header, params) if cache is None else cached_constants(header, cache, params)
    header = k.params.header_for(header)
    tp, opts, w = header.taxpayer, header.options, k.windows
    limited = tp.tax == "cbt" or (tp.tax == "insurance_premiums" and opts.insurer_limits == "cbt")
    mts = []
    for i, p in enumerate(header.periods):
        if not limited:
            mts.append(None)
            continue
        try:
            mts.append(limits.minimum_tax(tp.tax, p.start.year, p.minimum_tax, p.nj_gross_receipts, p.s_corporation, p.group_payroll_5m, params))
        except limits.MinimumTaxUnknown as e:
            raise ClaimError([Problem(f"periods[{i}].minimum_tax", str(e))], claim_id or tp.id) from None
    check_key = ("checks", tp.tax, header.location.municipality, tp.uez_benefit, tp.earlier_credit_period_start, w.year_one.first_month, params)
    checks = cache.get(check_key) if cache is not None else None
    if checks is None:
        checks = E.checks(tp.tax, header.location.municipality, tp.uez_benefit, tp.earlier_credit_period_start, w, k.params.qualified(w.year_one.start))
        if cache is not None:
            cache[check_key] = checks
    dates = tuple((p.start, p.end) for p in header.periods)
    allowed_in = (L.period_of_allowance(k.year_ends[0], dates), L.period_of_allowance(k.year_ends[1], dates))  # L1
    eligible_tax = tp.tax in E.TAXES
    rooms = []
    for liability, floor, before, after in map(_period_cents, header.periods, mts):  # L2-L3
        cap, above, room = limits.room(liability, limited, eligible_tax, floor, before, k.share)
        rooms.append(PeriodRoom(liability, cap, floor if cap is not None else None, above, before, after, room))
    return Prepared(
        header, claim_id or tp.id, k, checks, first_unknown_month(header.as_of), limited, tuple(mts), dates, allowed_in, tuple(rooms))


def _period_cents(p, mt: limits.MinimumTax | None) -> tuple[int, int, int, int]:
    """A period's L2-L3 inputs in cents: liability, floor (max of minimum tax and AMA, where the
    limits apply), other credits applied before this one and after it."""
    floor = 0
    if mt is not None:
        ama = p.alternative_minimum_assessment
        floor = cents(mt.amount if ama is None or mt.amount >= ama else ama)
    before = after = 0
    for c in p.other_credits:
        if c.order == "before":
            before += cents(c.amount)
        else:
            after += cents(c.amount)
    return cents(p.liability), floor, before, after


class PeriodRoom(NamedTuple):
    """Form 313 Part IV of one period, in cents (L2-L3)."""

    liability: int
    cap: int | None
    floor: int | None
    above_floor: int | None
    before: int
    after: int
    room: int


class Figures(NamedTuple):
    """Every figure of one claim after the positions pass, exact: positions as numerators over
    ``den``, money in cents; None where a month after ``as_of`` leaves it undecided."""

    den: int
    averages: tuple[int | None, int | None, int | None]   # base, year one, year two (P5)
    new: tuple[int | None, int | None]                    # C1
    credit: tuple[int | None, int | None]                 # C2
    ratio: tuple[int, int] | None                         # C3
    allowed_in: tuple[int | None, int | None]             # L1
    rooms: tuple[PeriodRoom, ...]                         # L2-L3
    lines: tuple[L.Line, ...]                             # L4-L5, R1-R3
    pending_from: int | None

    @property
    def refund(self) -> int:
        return sum(ln.refund for ln in self.lines if not ln.pending)

    @property
    def carried_forward(self) -> int:
        done = [ln for ln in self.lines if not ln.pending]
        return done[-1].carried_forward if done else 0


def figures(prep: Prepared, sums: tuple[int, int, int, int, int, int]) -> Figures:
    """P5, C1-C3, L4-L5 and R1-R3 for one claim (with ``prep``'s L1-L3). ``sums``: the full-time
    positions and equivalent hours of each period (``law.positions.period_sums``: base, year one,
    year two)."""
    opts, k, cut = prep.header.options, prep.constants, prep.cut
    first, ft_num, ft_den = k.windows.first_month, k.columns["ft_num"], k.columns["ft_den"]
    den = average_denominator(ft_num)
    averages = tuple(  # P5, each only once its twelve months are known
        average_numerator(sums[k], sums[3 + k], ft_num, ft_den) if cut is None or first + 12 * (k + 1) <= cut else None
        for k in range(3)
    )
    base, whole = averages[0], opts.whole_positions
    new = (C.new_positions(averages[1], base, den, whole), C.new_positions(averages[2], base, den, whole))  # C1
    eligible = prep.eligible
    credit = tuple(  # C2 (zero when not eligible, E5)
        None if new[o] is None else C.credit_cents(new[o], den, k.amount_cents[o]) if eligible else 0 for o in (0, 1)
    )
    ratio = C.sustained_effort_ratio(*new)  # C3
    rooms, allowed_in = prep.rooms, prep.allowed_in  # L1-L3, read off the header by ``prepare``
    lines, pending_from = L.run([r.room for r in rooms], allowed_in, credit, ratio, k.carryforward, opts.refund)  # L4-L5, R1-R3
    return Figures(den, averages, new, credit, ratio, allowed_in, rooms, lines, pending_from)


NO_HOURS = (0, 0, 0, 0, 0, 0)


def measured_sums(per_month: pl.DataFrame) -> dict[int, tuple]:
    """P5's period sums of each claim (by code) from the monthly sums of the positions pass; a
    claim without hours in its periods has ``NO_HOURS``."""
    return {r[0]: r[1:] for r in period_sums(per_month).iter_rows()}


def measured_months(per_month: pl.DataFrame) -> dict[int, dict[int, tuple[int, int]]]:
    """Each claim's (by code) monthly sums of the positions pass, by month: full-time positions
    and equivalent hours, as ``present`` takes them."""
    measured: dict[int, dict[int, tuple[int, int]]] = {}
    for code, idx, ft, eqh in per_month.select("claim_id", "month_idx", "full_time", "equivalent_hours").iter_rows():
        measured.setdefault(code, {})[idx] = (ft, eqh)
    return measured


def _entry(value, rule, cite, reading, inputs=None, parameters=None, depends_on=()) -> dict:
    """One figure of the explanation (B1), after its name."""
    return {"value": value, "rule": rule, "cite": cite, "reading": reading,
            "inputs": inputs or {}, "parameters": parameters or {}, "depends_on": list(depends_on)}


def decide(claim: Claim) -> Determination:
    """Decide one claim (N.J.S.A. 52:27BBB-55 as RULES.md reads it)."""
    return decide_many([claim])[0]


def decide_many(claims: Sequence[Claim]) -> list[Determination]:
    """Decide many claims: one columnar positions pass, then each claim's figures, presented."""
    if not claims:
        return []
    cache: dict = {}
    prepared = [prepare(c.header, c.source or c.header.taxpayer.id, cache) for c in claims]
    frames = [with_constants(c.payroll, i, p.constants.columns) for i, (c, p) in enumerate(zip(claims, prepared))]
    rows = pl.concat(frames, how="vertical")
    classified = classify(rows.lazy().with_columns(pl.col("claim_id").cast(pl.Int64))).collect()
    per_month = monthly(classified.lazy()).collect()
    sums, measured = measured_sums(per_month), measured_months(per_month)
    parts = classified.partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
    return [present(p, figures(p, sums.get(i, NO_HOURS)), measured.get(i, {}), parts.get((i,))) for i, p in enumerate(prepared)]


def _fraction(num: int | None, den: int) -> Fraction | None:
    return None if num is None else Fraction(num, den)


def _cash(c: int | None) -> Decimal | None:
    return None if c is None else from_cents(c)


def ledger_of(prep: Prepared, f: Figures) -> L.Ledger:
    """A claim's figures as its ``Ledger`` (Form 313 Parts IV and V), in dollars."""
    periods = []
    for i, (p, r, ln) in enumerate(zip(prep.header.periods, f.rooms, f.lines)):
        room = limits.Room(
            from_cents(r.liability), r.cap is not None, _cash(r.cap), _cash(r.floor), _cash(r.above_floor),
            from_cents(r.before), from_cents(r.after), from_cents(r.room))
        periods.append(L.PeriodLine(
            i, p.start, p.end, room, *(from_cents(x) for x in (ln.allowed, ln.applied, ln.refund, ln.forfeited, ln.carried_forward)),
            origins=tuple(L.OriginLine(o[0], *(from_cents(x) for x in o[1:])) for o in ln.origins), pending=ln.pending, allows=ln.allows))
    not_yet = {
        y: {"amount": money(from_cents(f.credit[o])), "allowed_for_period_containing": getattr(prep.windows, y).end.isoformat()}
        for o, y in enumerate(YEARS)
        if f.allowed_in[o] is None and f.credit[o] is not None and f.credit[o] > 0
    }
    return L.Ledger(tuple(periods), from_cents(f.refund), from_cents(f.carried_forward), not_yet, f.pending_from)


def present(
    prep: Prepared,
    f: Figures,
    measured: dict[int, tuple[int, int]],
    employee_months: pl.DataFrame | None = None,
    explain: bool = True,
) -> Determination:
    """One claim's ``Figures`` as a ``Determination`` (``measured``: its monthly sums by month),
    with the explanation (B1) of each figure: its rule, citation, reading, parameters, inputs and
    the figures it depends on. ``explain=False`` leaves the explanation out; which figures are
    undecided (``pending``) is recorded either way."""
    header, w, t = prep.header, prep.windows, prep.constants.thresholds
    opts = header.options
    tp = header.taxpayer
    trace: list[dict] = []
    undecided: list[str] = []

    def note(figure: str, missing: bool, entry) -> None:
        """Record a figure: undecided when ``missing``; ``entry()`` gives its ``_entry``."""
        if missing:
            undecided.append(figure)
        if explain:
            trace.append({"figure": figure, **entry()})

    # E1-E5 (a), (d)
    checks, eligible = prep.checks, prep.eligible
    note("eligible", False, lambda: _entry(
        eligible, "E5", "N.J.S.A. 52:27BBB-55(a), (d)", "eligible when every condition holds; every failed condition is reported",
        {"checks": [c.to_dict() for c in checks], **E.operations_began_known(header.location.operations_began, header.location.operations_source)}))

    # W1-W3 (e)
    note("windows", False, lambda: _entry(
        w.to_dict(), "W1-W3", "N.J.S.A. 52:27BBB-55(e)",
        "credit year one: the twelve calendar months after the month operations began; year two the next twelve; base the twelve before",
        {"operations_began": header.location.operations_began.isoformat(), "operations_source": header.location.operations_source,
         "option year_one_start": opts.year_one_start}))

    # P5: monthly positions and the averages, with completeness (as_of)
    cut = prep.cut
    months = tuple(
        Month(idx, *measured.get(idx, (0, 0)), known=cut is None or idx < cut)
        for idx in range(w.first_month, w.first_month + 36)
    )
    averages = {name: _fraction(f.averages[k], f.den) for k, name in enumerate(PERIOD_NAMES)}
    for name in PERIOD_NAMES:
        note(f"average_positions.{name}", averages[name] is None, lambda: _entry(
            exact_decimal(averages[name]) if averages[name] is not None else None, "P5", "N.J.S.A. 52:27BBB-55(e)",
            "sum over the period's twelve months of (full-time positions + part-time hours / full-time hours), divided by 12",
            {"exact": exact(averages[name]), "period": name},  # its twelve months are added from `monthly` when presented
            t.trace, ["employee_months"]))

    # C1 (e): new positions
    new = {name: _fraction(f.new[o], f.den) for o, name in enumerate(YEARS)}
    for name in YEARS:
        note(f"new_positions.{name}", new[name] is None, lambda: _entry(
            exact_decimal(new[name]) if new[name] is not None else None, "C1", "N.J.S.A. 52:27BBB-55(e)",
            "the rise of the year's average over the base period's, not below zero" + (", rounded down to whole positions" if opts.whole_positions else ""),
            {"exact": exact(new[name]), "option whole_positions": opts.whole_positions},
            depends_on=[f"average_positions.{name}", "average_positions.base"]))

    # C2 (a): the credit of each year (zero when not eligible, E5)
    credit = {name: _cash(f.credit[o]) for o, name in enumerate(YEARS)}
    for name in YEARS:
        par, amount = prep.amount(name)
        note(f"credit.{name}", credit[name] is None, lambda: _entry(
            money(credit[name]) if credit[name] is not None else None, "C2", "N.J.S.A. 52:27BBB-55(a)",
            f"${amount} for each new full-time position, rounded half-up to cents" + ("" if eligible else "; zero: the claim is not eligible (E5)"),
            {"eligible": eligible}, {par.name: par.trace(getattr(w, name).start)}, [f"new_positions.{name}", "eligible"]))

    # C3 (e): sustained effort ratio
    ratio = None if f.ratio is None else Fraction(*f.ratio)
    note("sustained_effort_ratio", ratio is None, lambda: _entry(
        exact_decimal(ratio) if ratio is not None else None, "C3", "N.J.S.A. 52:27BBB-55(e)",
        "year two's new positions / year one's, at most one; zero when year one has none",
        {"exact": exact(ratio)}, depends_on=["new_positions.year_two", "new_positions.year_one"]))

    # L2-L3 (b)(3): room of each period
    ledger = ledger_of(prep, f)
    for i, (p, line) in enumerate(zip(header.periods, ledger.periods)):
        r, mt = line.room, prep.minimum_taxes[i]
        note(f"periods[{i}].room", False, lambda: _entry(
            money(r.room), "L2" if prep.limited else "L3", limits.CITE,
            "min(50% of liability, liability - max(minimum tax, AMA)) - other credits before this one, not below zero, rounded down to cents"
            if prep.limited else "liability - other credits before this one, not below zero (no 50% limit or floor for this tax)",
            {"liability": str(p.liability),
             **({"minimum_tax": mt.trace, "alternative_minimum_assessment": None if p.alternative_minimum_assessment is None else str(p.alternative_minimum_assessment)} if prep.limited else {}),
             "other_credits": [{"name": c.name, "amount": str(c.amount), "order": c.order} for c in p.other_credits]},
            {"credit_limit_share": prep.constants.params.parameter("credit_limit_share").trace(w.year_one.start)} if prep.limited else {}))

    # L1, L4, L5, R1-R3 (b), (c)
    cf = prep.constants.carryforward
    for line in ledger.periods:
        i = line.index
        base = lambda: {"period": f"{line.start}..{line.end}", "pending": line.pending}  # noqa: E731
        cash = lambda x: None if line.pending else money(x)  # noqa: E731
        note(f"periods[{i}].allowed", line.pending, lambda: _entry(
            cash(line.allowed), "L1", "N.J.S.A. 52:27BBB-55(b)(1)",
            "a credit year's credit is allowed for the period in which or with which it ends",
            {**base(), "allows": list(line.allows), "year_one_ends": w.year_one.end.isoformat(), "year_two_ends": w.year_two.end.isoformat()},
            depends_on=[f"credit.{o}" for o in line.allows]))
        note(f"periods[{i}].applied", line.pending, lambda: _entry(
            cash(line.applied), "L4", "N.J.S.A. 52:27BBB-55(b)(2)",
            "balances are used up to the room, year one's (the older) first",
            {**base(), "origins": {o.origin: o.to_dict() for o in line.origins}}, depends_on=[f"periods[{i}].room", f"periods[{i}].allowed"]))
        if "year_two" in line.allows:
            note(f"periods[{i}].refund", line.pending, lambda: _entry(
                cash(line.refund), "R1", "N.J.S.A. 52:27BBB-55(c)(2)",
                "year one's balance left after this period's and earlier liabilities, times the sustained effort ratio, rounded half-up to cents, is an overpayment"
                + ("" if opts.refund else "; option refund = false carries it forward instead (R3)"),
                {**base(), "option refund": opts.refund,
                 "year_one_balance_after_application": next((str(o.opening + o.allowed - o.applied) for o in line.origins if o.origin == "year_one"), "0.00"),
                 "sustained_effort_ratio": exact(ratio)},
                depends_on=[f"periods[{i}].applied", "sustained_effort_ratio"]))
        note(f"periods[{i}].forfeited", line.pending, lambda: _entry(
            cash(line.forfeited), "L5", "Form 313 instructions; N.J.S.A. 52:27BBB-55(b)(2)",
            "what is left of a credit after the last period it may be used in is forfeited",
            {**base(), "carryforward_periods": cf}, depends_on=[f"periods[{i}].applied"]))
        note(f"periods[{i}].carried_forward", line.pending, lambda: _entry(
            cash(line.carried_forward), "L4", "N.J.S.A. 52:27BBB-55(b)(2), (c)(2)",
            "the balances left after application, refund and forfeiture carry to the next period",
            base(), depends_on=[f"periods[{i}].applied", f"periods[{i}].refund", f"periods[{i}].forfeited"]))
    warnings = list(prep.constants.warnings)
    last = len(header.periods) - 1
    totals_pending = ledger.pending_from is not None
    if last >= 0:
        note("refund", totals_pending, lambda: _entry(
            None if totals_pending else money(ledger.refund), "R1", "N.J.S.A. 52:27BBB-55(c)(2)",
            "the total refunded over the periods given", depends_on=[f"periods[{i}].refund" for i, ln in enumerate(ledger.periods) if "year_two" in ln.allows]))
        note("carried_forward", totals_pending, lambda: _entry(
            None if totals_pending else money(ledger.carried_forward), "L4", "N.J.S.A. 52:27BBB-55(b)(2)",
            "the balance carried out of the last period given", depends_on=[f"periods[{last}].carried_forward"]))
    else:
        warnings.append("no periods given: the credit is computed but applied nowhere; add the privilege or reporting periods to apply it")

    pending = None
    if cut is not None:
        missing = [f"{m.idx // 12:04d}-{m.idx % 12 + 1:02d}" for m in months if not m.known]
        if missing or undecided:
            pending = {"as_of": header.as_of.isoformat(), "missing_months": missing, "figures": undecided,
                       "reading": "months after as_of are unknown, not zero; figures that depend on them are left undecided"}

    return Determination(
        claim_id=prep.claim_id, taxpayer_id=tp.id, eligible=eligible, checks=checks, windows=w, months=months,
        full_time_hours=t.full_time_hours, averages=averages, new_positions=new, credit=credit,
        sustained_effort_ratio=ratio, ledger=ledger, pending=pending, warnings=tuple(warnings),
        explanation=tuple(trace), employee_months=employee_months,
    )
