"""decide(claim) -> Determination: the single entry point of the core.

Load -> validate -> decide -> present flows one way. ``decide_many`` measures positions for all
claims in one columnar pass (``law.positions``) and then applies the per-claim rules
(``determine``); ``decide`` is ``decide_many`` of one claim, and the batch engine calls the same
``law.positions`` expressions and ``determine``: one code path decides a claim, alone or in a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

import polars as pl

from .claim import Claim, ClaimHeader
from .determination import Determination, exact
from .law import credit as C
from .law import eligibility as E
from .law import ledger as L
from .law import limits
from .law.parameters import parameter
from .law.positions import CLAIM_COLUMNS, Month, Thresholds, average, classify, monthly
from .law.windows import PERIOD_NAMES, Windows, windows
from .money import ZERO, exact_decimal, money
from .payroll import first_unknown_month
from .problems import ClaimError, Problem


def claim_constants(header: ClaimHeader) -> tuple[Windows, Thresholds, dict]:
    """Per-claim constants of the positions pass: the windows (W1-W3), the hour tests in force at
    the start of credit year one (P2-P3), and the part-time option (P3)."""
    w = windows(header.location.operations_began, header.options)
    t = Thresholds.at(w.year_one.start)
    cols = {"base_idx": w.first_month, "excl_temp": header.options.part_time_excludes_temporary, **t.columns()}
    return w, t, cols


def with_constants(payroll: pl.DataFrame, claim_id, cols: dict) -> pl.DataFrame:
    return payroll.with_columns(
        pl.lit(claim_id).alias("claim_id"),
        *(pl.lit(v, dtype=CLAIM_COLUMNS[k]).alias(k) for k, v in cols.items()),
    )


def decide(claim: Claim) -> Determination:
    """Decide one claim (N.J.S.A. 52:27BBB-55 as RULES.md reads it)."""
    return decide_many([claim])[0]


def decide_many(claims: Sequence[Claim]) -> list[Determination]:
    """Decide many claims with one columnar positions pass."""
    if not claims:
        return []
    consts = [claim_constants(c.header) for c in claims]
    frames = [with_constants(c.payroll, i, cols) for i, (c, (_, _, cols)) in enumerate(zip(claims, consts))]
    rows = pl.concat(frames, how="vertical")
    classified = classify(rows.lazy().with_columns(pl.col("claim_id").cast(pl.Int64))).collect()
    per_month = monthly(classified.lazy()).collect()
    months_by_claim: dict[int, dict[int, tuple[int, int]]] = {}
    for cid, idx, ft, eqh in per_month.iter_rows():
        months_by_claim.setdefault(cid, {})[idx] = (ft, eqh)
    parts = classified.partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
    out = []
    for i, claim in enumerate(claims):
        w, t, _ = consts[i]
        rows_i = parts.get((i,))
        out.append(determine(claim.header, w, t, months_by_claim.get(i, {}), rows_i, claim_id=claim.source or claim.header.taxpayer.id))
    return out


def _entry(value, rule, cite, reading, inputs=None, parameters=None, depends_on=()) -> dict:
    """One figure of the explanation (B1), after its name."""
    return {"value": value, "rule": rule, "cite": cite, "reading": reading,
            "inputs": inputs or {}, "parameters": parameters or {}, "depends_on": list(depends_on)}


def determine(
    header: ClaimHeader,
    w: Windows,
    t: Thresholds,
    measured: dict[int, tuple[int, int]],
    employee_months: pl.DataFrame | None = None,
    claim_id: str | None = None,
    explain: bool = True,
) -> Determination:
    """Every rule after the positions pass, for one claim: E1-E5, P5, C1-C3, L1-L5, R1-R3, with
    the explanation (B1) of each figure. ``explain=False`` leaves the explanation out (for a
    caller that keeps only the figures, as the batch's tables do): each figure's entry is built
    only when it is kept, while which figures are undecided (``pending``) is recorded either way."""
    opts = header.options
    tp = header.taxpayer
    trace: list[dict] = []
    undecided: list[str] = []
    warnings: list[str] = []

    def note(figure: str, missing: bool, entry) -> None:
        """Record a figure: undecided when ``missing``; ``entry()`` gives its ``_entry``."""
        if missing:
            undecided.append(figure)
        if explain:
            trace.append({"figure": figure, **entry()})

    # E1-E5 (a), (d)
    checks = E.checks(tp.tax, header.location.municipality, tp.uez_benefit, tp.earlier_credit_period_start, w)
    eligible = all(c.passed for c in checks)
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
    cut = first_unknown_month(header.as_of)
    months = tuple(
        Month(idx, *measured.get(idx, (0, 0)), known=cut is None or idx < cut)
        for idx in range(w.first_month, w.first_month + 36)
    )
    known = {name: all(m.known for m in months[k * 12:(k + 1) * 12]) for k, name in enumerate(PERIOD_NAMES)}
    averages: dict[str, Fraction | None] = {}
    for k, name in enumerate(PERIOD_NAMES):
        ms = list(months[k * 12:(k + 1) * 12])
        averages[name] = average(ms, t.full_time_hours) if known[name] else None
        note(f"average_positions.{name}", averages[name] is None, lambda: _entry(
            exact_decimal(averages[name]) if averages[name] is not None else None, "P5", "N.J.S.A. 52:27BBB-55(e)",
            "sum over the period's twelve months of (full-time positions + part-time hours / full-time hours), divided by 12",
            {"exact": exact(averages[name]), "period": name},  # its twelve months are added from `monthly` when presented
            t.trace, ["employee_months"]))

    # C1 (e): new positions
    new: dict[str, Fraction | None] = {}
    for name in ("year_one", "year_two"):
        ok = known["base"] and known[name]
        new[name] = C.new_positions(averages[name], averages["base"], opts.whole_positions) if ok else None
        note(f"new_positions.{name}", not ok, lambda: _entry(
            exact_decimal(new[name]) if ok else None, "C1", "N.J.S.A. 52:27BBB-55(e)",
            "the rise of the year's average over the base period's, not below zero" + (", rounded down to whole positions" if opts.whole_positions else ""),
            {"exact": exact(new[name]), "option whole_positions": opts.whole_positions},
            depends_on=[f"average_positions.{name}", "average_positions.base"]))

    # C2 (a): the credit of each year (zero when not eligible, E5)
    credit: dict[str, Decimal | None] = {}
    for name, pname in (("year_one", "amount_year_one"), ("year_two", "amount_year_two")):
        par = parameter(pname)
        when = getattr(w, name).start
        if when < par.values[0].start:
            warnings.append(f"credit {name.replace('_', ' ')} starts {when}, before the Act's first recorded date {par.values[0].start}; the first recorded amount is used")
        amount = par.at(when).value
        credit[name] = None if new[name] is None else (C.credit_amount(new[name], amount) if eligible else ZERO)
        note(f"credit.{name}", credit[name] is None, lambda: _entry(
            money(credit[name]) if credit[name] is not None else None, "C2", "N.J.S.A. 52:27BBB-55(a)",
            f"${amount} for each new full-time position, rounded half-up to cents" + ("" if eligible else "; zero: the claim is not eligible (E5)"),
            {"eligible": eligible}, {pname: par.trace(when)}, [f"new_positions.{name}", "eligible"]))

    # C3 (e): sustained effort ratio
    ratio = None if new["year_one"] is None or new["year_two"] is None else C.sustained_effort_ratio(new["year_one"], new["year_two"])
    note("sustained_effort_ratio", ratio is None, lambda: _entry(
        exact_decimal(ratio) if ratio is not None else None, "C3", "N.J.S.A. 52:27BBB-55(e)",
        "year two's new positions / year one's, at most one; zero when year one has none",
        {"exact": exact(ratio)}, depends_on=["new_positions.year_two", "new_positions.year_one"]))

    # L2-L3 (b)(3): room of each period
    rooms = []
    limited = tp.tax == "cbt" or (tp.tax == "insurance_premiums" and opts.insurer_limits == "cbt")
    for i, p in enumerate(header.periods):
        floor = mt = None
        if limited:
            try:
                mt = limits.minimum_tax(tp.tax, p.start.year, p.minimum_tax, p.nj_gross_receipts, p.s_corporation, p.group_payroll_5m)
            except limits.MinimumTaxUnknown as e:
                raise ClaimError([Problem(f"periods[{i}].minimum_tax", str(e))], claim_id) from None
            floor = max(mt.amount, p.alternative_minimum_assessment or ZERO)
        before = sum((c.amount for c in p.other_credits if c.order == "before"), ZERO)
        after = sum((c.amount for c in p.other_credits if c.order == "after"), ZERO)
        if tp.tax in ("cbt", "insurance_premiums"):
            r = limits.room(p.liability, limited, floor, before, after, w.year_one.start)
        else:  # E1: the credit cannot be used against any other tax
            r = limits.Room(p.liability, False, None, None, None, before, after, ZERO)
        rooms.append(r)
        note(f"periods[{i}].room", False, lambda: _entry(
            money(r.room), "L2" if limited else "L3", limits.CITE,
            "min(50% of liability, liability - max(minimum tax, AMA)) - other credits before this one, not below zero, rounded down to cents"
            if limited else "liability - other credits before this one, not below zero (no 50% limit or floor for this tax)",
            {"liability": str(p.liability),
             **({"minimum_tax": mt.trace, "alternative_minimum_assessment": None if p.alternative_minimum_assessment is None else str(p.alternative_minimum_assessment)} if limited else {}),
             "other_credits": [{"name": c.name, "amount": str(c.amount), "order": c.order} for c in p.other_credits]},
            {"credit_limit_share": parameter("credit_limit_share").trace(w.year_one.start)} if limited else {}))

    # L1, L4, L5, R1-R3 (b), (c)
    cf = opts.carryforward_periods
    if cf == "form_313":
        cf = int(parameter("carryforward_periods").at(w.year_one.start).value)
    pending_years = {n for n in ("year_one", "year_two") if credit[n] is None}
    ledger = L.run(
        rooms, [(p.start, p.end) for p in header.periods],
        {n: credit[n] if credit[n] is not None else ZERO for n in ("year_one", "year_two")},
        {"year_one": w.year_one.end, "year_two": w.year_two.end},
        ratio if ratio is not None else Fraction(0), cf, opts.refund, pending_years,
    )
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
        claim_id=claim_id or tp.id, taxpayer_id=tp.id, eligible=eligible, checks=checks, windows=w, months=months,
        full_time_hours=t.full_time_hours, averages=averages, new_positions=new, credit=credit,
        sustained_effort_ratio=ratio, ledger=ledger, pending=pending, warnings=tuple(warnings),
        explanation=tuple(trace), employee_months=employee_months,
    )
