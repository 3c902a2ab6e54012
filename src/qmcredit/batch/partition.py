"""One partition of a batch decided: the core's rules over its claims (``engine`` plans the
partitions and runs them; this module holds the rules' side, imported once a partition's payroll
rows are being read).

Each partition goes through the same code as ``qmcredit.decide``: the header is validated by
``ClaimHeader`` and read by ``core.prepare`` (W1-W3, E1-E5, parameters, minimum tax); payroll
rows are typed and checked by ``payroll.check`` (the work of ``normalize``); P1-P4 are the
``law.positions`` expressions (``classify``, ``monthly``) over the whole partition, grouped by
claim and month; every later rule (P5, C1-C3, L1-L5, R1-R3) is ``core.figures`` per claim, in
whole numbers. The tables are written column by column from those figures, with the text of
``Determination.to_dict``.
A claim with a bad header field or a bad payroll row gets a determination naming every problem,
as ``qmcredit compute`` reports them; the other claims go on.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl
from ..claim import ClaimHeader, validate_header
from ..core import (
    NO_HOURS, Prepared, cached_constants, first_site_window, measured_again, measured_months, measured_sums, prepare, prepared_again, present,
    read_after_prepare, settle,
)
from ..core import measure as measure_claim
from ..law.parameter_set import ParameterSet, baseline
from ..law.positions import CLAIM_COLUMNS, classify, monthly
from ..law.ledger import QUIET, carried_out, refunded
from ..money import exact_decimal_text, money_text
from ..payroll import Lookup, check, first_unknown_month, row_names
from ..problems import ClaimError, Problem
from . import outputs
from .engine import OutOfClaimOrder, PayrollSource
from .header_columns import plain_headers
from .tables import header_doc, periods_by_claim


@dataclass
class PartitionResult:
    claims: pl.DataFrame
    ledger: pl.DataFrame  # empty when written to ``ledger_file``
    jsonl: list[tuple[str, str]]  # (claim id, JSON line), in claim id order
    rows: int
    bad_rows: int
    orphan_rows: int
    orphan_claims: list[str]
    unrowed: list[str]  # claims of the partition without any payroll row
    ledger_file: Path | None = None  # where the process that decided the partition wrote its ledger rows (``engine._ledger_written``)

    def ledger_rows(self) -> pl.DataFrame:
        """The partition's ledger rows, from ``ledger_file`` when they were written there: mapped
        from the file, not copied (2 million rows in 50 files: 0.006 s, against 0.35-0.47 s read),
        so that the one copy made is the outputs' (``outputs.in_order`` makes them one piece)."""
        return pl.read_ipc(self.ledger_file, memory_map=True) if self.ledger_file is not None else self.ledger


def headers(claims: pl.DataFrame, periods: pl.DataFrame | None) -> tuple[dict[str, ClaimHeader], dict[str, list[Problem]]]:
    """Validate each claims-table row, with its periods-table rows, as a FORMAT.md header (the
    core's ``ClaimHeader``): read column by column when its every cell is plain
    (``header_columns.plain_headers``), else as a document (``header_doc``, ``validate_header``)."""
    valid: dict[str, ClaimHeader] = {}
    invalid: dict[str, list[Problem]] = {}
    seen: set[str] = set()
    fast = plain_headers(claims, periods)
    slow = [k for k, checked in enumerate(fast) if checked is None]
    ids = claims.get_column("claim_id").to_list()
    if slow and periods is not None:
        periods = periods.filter(pl.col("claim_id").is_in(pl.Series([ids[k] for k in slow], dtype=pl.Utf8).implode()))
    claim_periods = periods_by_claim(periods) if slow else {}
    for k, cid in enumerate(ids):
        if cid is None or cid == "":
            continue  # counted by the caller as claims-table rows without an id
        if cid in seen:
            invalid[cid] = [Problem("claim_id", f"{cid!r} is on more than one row of the claims table; give each claim once")]
            valid.pop(cid, None)
            continue
        seen.add(cid)
        if fast[k] is not None:
            header, found = fast[k]
        else:
            doc, found = header_doc(claims.row(k, named=True), claim_periods.get(cid))
            header, problems = validate_header(doc)
            found = problems + found
        if found:
            invalid[cid] = found
        else:
            valid[cid] = header
    return valid, invalid


_EPOCH = date(1970, 1, 1).toordinal()


def return_members(claims: pl.DataFrame, ids: list[str]) -> dict[str, list[str]]:
    """L6: the claims of each taxpayer with several claims-table rows, in table order: one return."""
    if "taxpayer_id" not in claims.columns:
        return {}
    known = set(ids)
    found: dict[str, list[str]] = {}
    for cid, tp in claims.select("claim_id", pl.col("taxpayer_id").str.strip_chars()).iter_rows():
        if cid in known and tp:
            found.setdefault(tp, []).append(cid)
    return {tp: cids for tp, cids in found.items() if len(cids) > 1}


def return_refused(bad_ones: list[str], tp: str) -> Problem:
    """L6: the problem of a claim whose return has claims ``bad_ones`` that cannot be decided."""
    return Problem("claim_id", f"{', '.join(bad_ones)} of the same return (taxpayer {tp!r}, L6) cannot be decided; "
                               "a return is decided with all its locations: correct it, and this claim is decided with it")


def disagreeing(members: dict[str, list[str]], valid: dict[str, ClaimHeader], invalid: dict[str, list[Problem]]) -> None:
    """L6: the claims of one return must agree on what is the return's (taxpayer, periods,
    options, as_of); when they do not, every claim of the return is refused naming the others."""
    for tp, cids in members.items():
        heads = [(cid, valid[cid]) for cid in cids if cid in valid]
        if not heads:
            continue
        first_id, first = heads[0]
        for what in ("taxpayer", "periods", "options", "as_of"):
            differ = [cid for cid, h in heads[1:] if getattr(h, what) != getattr(first, what)]
            if differ:
                message = (f"the claims {', '.join(cids)} of taxpayer {tp!r} are one return (L6), but {', '.join(differ)} "
                           f"disagree(s) with {first_id} on {what}: give every row of one taxpayer the same taxpayer fields, periods, "
                           "options and as_of (docs/batch.md, Returns)")
                for cid in cids:
                    invalid.setdefault(cid, []).append(Problem(what, message))
                    valid.pop(cid, None)
                break


#: L4: the ledger's year-one part (Form 313 Part V, the year of origin); year two's is the rest.
YEAR_ONE = ("allowed_year_one", "applied_year_one", "forfeited_year_one", "carried_forward_year_one")


def _year_one(line) -> tuple[int, int, int, int]:
    """A ledger line's year-one origin: allowed, applied, forfeited, closing (L4, L5; R1 refunds
    year one only). A line's origins are in ``ledger.ORIGINS`` order: year one's, when open, first."""
    if line.origins and (o := line.origins[0]).origin == "year_one":
        return o.allowed, o.applied, o.forfeited, o.closing
    return _NO_YEAR_ONE


_NO_YEAR_ONE = (0, 0, 0, 0)
_NO_RATIO = (None, None)  # C3 undecided


def key_figures(prepared: list[Prepared], figs: list) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The decided claims' rows and ledger rows: the figures of ``Determination.to_dict`` (same
    text), written column by column (``money_text``, ``exact_decimal_text``) from each claim's
    ``Figures``. The periods in which nothing moves (``ledger.QUIET``, most of them) share one
    written line."""
    big = pl.Int128
    claim_rows, ids, periods, dates, rooms = [], [], [], [], []
    moving = [_moved(QUIET)]  # the lines in which something moves or is pending, after the quiet one
    at = []  # each ledger row's line in ``moving``
    for p, f in zip(prepared, figs):
        totals, lines, cid = f.pending_from is None, f.lines, p.claim_id
        eligible = p.eligible
        claim_rows.append((
            cid, p.header.taxpayer.id, eligible, None if eligible else ",".join(k.rule for k in p.checks if not k.passed) or None,
            f.den, *f.averages, *f.new, *f.credit, *(f.ratio or _NO_RATIO), refunded(lines) if totals else None, carried_out(lines) if totals else None,
            p.cut is not None and p.cut < p.constants.windows.first_month + 36 or not totals,  # as_of, or V2
        ))
        ids += [cid] * len(lines)
        periods += range(len(lines))
        dates += p.period_dates
        rooms += f.rooms
        for line in lines:
            if line is QUIET:
                at.append(0)
            else:
                at.append(len(moving))
                moving.append(_moved(line))
    c = _columns(claim_rows, {
        "claim_id": pl.Utf8, "taxpayer_id": pl.Utf8, "eligible": pl.Boolean, "ineligible_because": pl.Utf8,
        **{k: big for k in ("den", "a0", "a1", "a2", "n1", "n2", "c1", "c2", "rn", "rd", "refund", "carried_forward")}, "pending": pl.Boolean,
    })
    nums = c.select("den", "a0", "a1", "a2", "n1", "n2", "rn", "rd")
    positions = {"average_base": "a0", "average_year_one": "a1", "average_year_two": "a2", "new_year_one": "n1", "new_year_two": "n2"}
    text = dict(zip(positions, exact_decimal_text(nums, list(positions.values()), "den")))
    text["sustained_effort_ratio"] = exact_decimal_text(nums, "rn", "rd")
    money_cols = {"credit_year_one": "c1", "credit_year_two": "c2", "refund": "refund", "carried_forward": "carried_forward"}
    claims = c.with_columns(
        pl.lit("decided").alias("status"), *(s.alias(name) for name, s in text.items()),
        *(money_text(pl.col(col)).alias(name) for name, col in money_cols.items()), pl.lit(None, dtype=pl.Utf8).alias("problems"),
    ).select(list(outputs.CLAIMS_SCHEMA))
    moved = _columns(moving, {"pending": pl.Boolean, **dict.fromkeys(MOVED, big)})
    written = moved.select(pl.when(~pl.col("pending")).then(money_text(pl.col(k))).alias(k) for k in MOVED)[pl.Series(at, dtype=pl.UInt32)]
    days = lambda j: pl.Series([d[j].toordinal() - _EPOCH for d in dates], dtype=pl.Int32).cast(pl.Date)  # noqa: E731 (as Date holds them: a date converts slowly)
    ledger = pl.DataFrame({
        "claim_id": pl.Series(ids, dtype=pl.Utf8), "period": pl.Series(periods, dtype=pl.Int32), "start": days(0), "end": days(1),
        "room": pl.DataFrame({"room": pl.Series([room.room for room in rooms], dtype=big)}).select(money_text(pl.col("room"))).to_series(),
    }).hstack(written).select(list(outputs.LEDGER_SCHEMA))
    return claims, ledger


def _columns(rows: list[tuple], schema: dict) -> pl.DataFrame:
    """``rows`` (tuples in ``schema``'s order) as a frame, built column by column: polars reads
    a Python list into a typed Series about twice as fast as it reads rows."""
    columns = zip(*rows) if rows else [()] * len(schema)
    return pl.DataFrame([pl.Series(name, column, dtype=dtype) for (name, dtype), column in zip(schema.items(), columns)])


#: The ``CLAIM_COLUMNS`` of a claim without a valid header: no base month, so none is read (``measure``).
_NO_COLUMNS = dict.fromkeys(CLAIM_COLUMNS)


#: L4, R1, L5: a ledger line's money, after whether it is pending (cash only when it is not)
MOVED = ("allowed", "applied", "refund", "forfeited", "carried_forward", *YEAR_ONE)


def _moved(line) -> tuple:
    """A ledger line as a row of ``MOVED``, after ``pending``."""
    return (line.pending, line.allowed, line.applied, line.refund, line.forfeited, line.carried_forward, *_year_one(line))


def invalid_row(cid: str, taxpayer_id: str | None, found: list[Problem]) -> dict:
    return {
        "claim_id": cid, "taxpayer_id": taxpayer_id, "status": "invalid", "eligible": None,
        "ineligible_because": None, "average_base": None, "average_year_one": None, "average_year_two": None,
        "new_year_one": None, "new_year_two": None, "credit_year_one": None, "credit_year_two": None,
        "sustained_effort_ratio": None, "refund": None, "carried_forward": None, "pending": None,
        "problems": json.dumps([p.to_dict() for p in found], ensure_ascii=False),
    }


def invalid_json(cid: str, found: list[Problem]) -> str:
    """The JSON Lines record of a claim that cannot be decided: ``ClaimError.to_dict`` as
    ``qmcredit compute`` reports it."""
    return json.dumps({"claim_id": cid, **ClaimError(found, cid).to_dict()}, ensure_ascii=False)


def _once(shared: dict | None, key: str, make):
    """``make()``, or what an earlier scenario of the partition made of it (``shared``)."""
    if shared is None:
        return make()
    if key not in shared:
        shared[key] = make()
    return shared[key]


def measure(looked: Lookup, constants: pl.DataFrame, row_name: tuple[str, str], shared: dict | None = None) -> tuple[pl.DataFrame, dict[int, tuple], pl.DataFrame]:
    """Type and check every payroll row (``payroll.check``, the work of ``normalize``, on the rows
    of ``read_rows``), then P1-P4 (``classify``, ``monthly``) over the claims none of whose rows has
    a problem. ``constants``: one row per claim, in claim-id order, its row number being the
    claim's code. Returns the monthly sums by claim code and month, P5's period sums of each
    claim (``core.measured_sums``: made here, on the polars thread, while the headers are
    prepared) and the bad rows. The rows' typing needs no parameter: ``shared`` keeps it for the
    partition's other scenarios, and the sums for any scenario whose ``constants`` (the hour
    tests, windows and options P1-P4 read) are those of an earlier one."""
    per_claim = lambda c: pl.lit(constants.get_column(c)).gather(pl.col("claim_id"))  # noqa: E731

    def typed_rows() -> tuple[pl.DataFrame, pl.DataFrame]:
        typed, found = check(looked, as_of_idx=per_claim("as_of_idx"), source=row_names(row_name[0], pl.col("_line"), row_name[1]))
        return typed, found.with_columns(typed.select(pl.col("claim_id", "_line").gather(found.get_column("_i")))).sort("claim_id", "_line").select(
            "claim_id", "source", "problem")

    typed, bad = _once(shared, "typed", typed_rows)
    counted = shared.setdefault("counts", []) if shared is not None else []
    for seen, sums, by_claim in counted:  # a scenario whose parameters leave every claim's constants as they were: its counts
        if seen.equals(constants):
            return sums, by_claim, bad
    given = constants
    # A claim with a bad row, like one without a valid header, is given no base month: ``classify``
    # then puts its rows in no period and ``monthly`` leaves them out (cheaper than filtering them).
    unmeasured = pl.int_range(pl.len()).is_in(bad.get_column("claim_id").unique().implode())
    constants = constants.with_columns(pl.when(unmeasured).then(None).otherwise(pl.col("base_idx")).alias("base_idx"))
    sums = monthly(classify(_per_row(constants, typed))).collect(engine="streaming")  # 0.032 processor-s a million rows, not 0.040
    by_claim = measured_sums(sums)
    counted.append((given, sums, by_claim))
    return sums, by_claim, bad


def _per_row(constants: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with the ``CLAIM_COLUMNS`` of each row's claim (``claim_id``: the claim's row in
    ``constants``). A claim without a base month has no row in a period, so its other constants
    are never read: a column with one value over the claims with a base month (the hour tests,
    mostly, and the options' defaults) is that value as a literal, which polars keeps as one value
    rather than a copy per row; the others are gathered row by row. One column a call, not side by
    side in one query: there, polars has taken two literal columns with the same values (all null)
    for one, with the first one's type."""
    measured = constants.filter(pl.col("base_idx").is_not_null())
    codes = rows.get_column("claim_id")
    for c, dtype in CLAIM_COLUMNS.items():
        values = measured.get_column(c)
        one = c != "base_idx" and values.n_unique() == 1
        rows = rows.with_columns(pl.lit(values[0], dtype=dtype).alias(c) if one else constants.get_column(c).gather(codes))
    return rows


def _windows(members: dict[str, list[str]], valid: dict[str, ClaimHeader], params: ParameterSet | None = None) -> dict[str, tuple[str, str]]:
    """E4 across locations: the taxpayer's window for each claim of a return, when the taxpayer
    gives no ``earlier_credit_period_start`` (the first claim's credit year one under ``params``,
    ``core.first_site_window``)."""
    out = {}
    for cids in members.values():
        if not all(cid in valid for cid in cids) or valid[cids[0]].taxpayer.earlier_credit_period_start is not None:
            continue
        window = first_site_window(valid[cids[0]], cids[0], params)
        for cid in cids:
            out[cid] = window
    return out


def _settled(chosen: list[Prepared], measured: list, members: dict[str, list[str]]) -> list:
    """L4-L6, R1-R3 of each decided claim: alone, or with the other claims of its return."""
    place = {p.claim_id: k for k, p in enumerate(chosen)}
    figs: list = [None] * len(chosen)
    for cids in members.values():
        ks = [place[cid] for cid in cids if cid in place]
        if len(ks) == len(cids):
            for k, f in zip(ks, settle([chosen[k] for k in ks], [measured[k] for k in ks])[1]):
                figs[k] = f
    for k, (p, m) in enumerate(zip(chosen, measured)):
        if figs[k] is None:
            figs[k] = settle([p], [m])[1][0]
    return figs


def _figures(chosen: list[Prepared], measured: list, members: dict[str, list[str]], shared: dict | None,
             again: bool = False) -> tuple[list, pl.DataFrame, pl.DataFrame]:
    """L4-L6, R1-R3 of each decided claim (``_settled``) and its rows (``key_figures``). Settling
    is a pure function of what ``_settles_alike`` compares: a later scenario of the partition
    (``shared``) takes the first one's figures and rows for every return whose claims it leaves
    alike (an amounts reform leaves every claim without new positions so), and settles the others.
    ``again``: its claims were prepared again from the first scenario's (``_prepared``)."""
    first = shared.get("figures") if shared is not None else None
    if first is None:
        figs = _settled(chosen, measured, members)
        claim_rows, ledger_rows = key_figures(chosen, figs)
        if shared is not None:
            shared["figures"] = ({p.claim_id: (p, m, f) for p, m, f in zip(chosen, measured, figs)}, claim_rows, ledger_rows)
        return figs, claim_rows, ledger_rows
    before, first_claims, first_ledger = first
    alike = [_settles_alike(p, m, before.get(p.claim_id), again) for p, m in zip(chosen, measured)]
    place = {p.claim_id: k for k, p in enumerate(chosen)}
    for cids in members.values():  # L6: a return's claims are settled together, so alike only all of them
        ks = [place[cid] for cid in cids if cid in place]
        if not all(alike[k] for k in ks):
            for k in ks:
                alike[k] = False
    redo = [k for k, same in enumerate(alike) if not same]
    redone = _settled([chosen[k] for k in redo], [measured[k] for k in redo], members)
    figs = [before[p.claim_id][2] if same else None for p, same in zip(chosen, alike)]
    for k, f in zip(redo, redone):
        figs[k] = f
    claim_rows, ledger_rows = key_figures([chosen[k] for k in redo], redone)
    kept = pl.Series([p.claim_id for p, same in zip(chosen, alike) if same], dtype=pl.Utf8).implode()
    # both in claim order (``chosen``'s), each claim's rows in one of them: merged, not sorted again
    return (figs, claim_rows.merge_sorted(first_claims.filter(pl.col("claim_id").is_in(kept)), "claim_id"),
            ledger_rows.merge_sorted(first_ledger.filter(pl.col("claim_id").is_in(kept)), ["claim_id", "period"]))


#: What ``settle`` and ``key_figures`` read of a ``Prepared`` besides its ``Constants``.
_SETTLED_FROM = tuple(k for k, name in enumerate(Prepared._fields) if name != "constants")


def _settles_alike(p: Prepared, m, before: tuple | None, again: bool = False) -> bool:
    """Whether claim ``p`` with its ``Measured`` ``m`` settles as it did in the partition's first
    scenario (``before``: its Prepared, Measured and Figures there): the same header, checks,
    rooms and periods (the very objects: so when ``again``, ``p`` being that Prepared made again,
    ``core.prepared_again``), the same P5 and C1-C3 figures, the same carryforward limit (L5)
    and first base month."""
    if before is None:
        return False
    p1, m1, _ = before
    k, k1 = p.constants, p1.constants
    return (m == m1 and k.carryforward == k1.carryforward and k.windows.first_month == k1.windows.first_month
            and (again or all(p[i] is p1[i] for i in _SETTLED_FROM)))


def _constants_of(shared: dict | None, of_claim: dict, cache: dict, params: ParameterSet | None):
    """``cached_constants`` of each claim (by id and header) under ``params``. Its key is the
    month credit year one starts and the options (W1), as the set reads them: when neither the
    partition's first scenario (``shared``) nor ``params`` changes an option, the claims that
    share one ``Constants`` under the first share one under ``params`` too, so a later scenario
    makes it once for them, not a key of the options' model a claim. A set that changes options
    may group them otherwise (``cached_constants``), and is keyed claim by claim."""
    plain = params is None or not params.options
    if shared is None:
        return lambda cid, header: cached_constants(header, cache, params)
    first, first_plain = shared.setdefault("constants", (of_claim, plain))  # the first scenario's, as it fills them
    if first is of_claim or not (plain and first_plain):
        return lambda cid, header: cached_constants(header, cache, params)
    again: dict[int, object] = {}  # id of the first scenario's Constants -> this scenario's (those are kept alive by ``first``)

    def constants_of(cid: str, header: ClaimHeader):
        k = first[cid]
        made = again.get(id(k))
        if made is None:
            made = again[id(k)] = cached_constants(header, cache, params)
        return made

    return constants_of


def _prepared(valid: dict[str, ClaimHeader], cache: dict, window_of: dict, params: ParameterSet | None,
              shared: dict | None, constants: dict) -> tuple[dict[str, Prepared], dict[str, list[Problem]], bool]:
    """Each valid header read by ``core.prepare`` under ``params`` (``constants``: each one's
    ``Constants``, already made), and the problems of those it refuses (reported only when the
    claim's rows are good, as ``decide`` does). With ``shared``:
    the first scenario's, made again from its own (``core.prepared_again``) for a scenario whose
    parameters differ from it only after ``prepare`` (``core.read_after_prepare``); and whether
    they were so made again."""
    under = params or baseline()
    first = shared.get("prepared") if shared is not None else None
    if first is not None and read_after_prepare(under, first[0]):
        return {cid: prepared_again(p, constants[cid]) for cid, p in first[1].items()}, first[2], True
    prepared: dict[str, Prepared] = {}
    unprepared: dict[str, list[Problem]] = {}
    for cid, header in valid.items():
        try:
            prepared[cid] = prepare(header, cid, cache, window_of.get(cid), params, constants.get(cid))
        except ClaimError as e:
            unprepared[cid] = e.problems
    if shared is not None and first is None:
        shared["prepared"] = (under, prepared, unprepared)
    return prepared, unprepared, False


def decide_partition(
    claims: pl.DataFrame, periods: pl.DataFrame | None, payroll: PayrollSource, jsonl: bool, ids: list[str], reading: Future,
    params: ParameterSet | None = None, shared: dict | None = None,
) -> PartitionResult:
    """Decide every claim of one partition: its claims-table rows, periods-table rows and all its
    payroll rows, whose reading (``engine.read_rows`` of ``payroll`` for the claims ``ids``,
    sorted) is under way on a polars thread; under ``params`` (default: the baseline).
    ``shared``: what the partition's scenarios share (its headers validated, its rows typed), kept
    by the first of them (``analysis.reform``)."""
    # polars works on a second thread while this one runs Python: the payroll rows are read while
    # the headers are validated, and measured while the headers are prepared.
    with ThreadPoolExecutor(max_workers=1) as polars_thread:
        valid, invalid = _once(shared, "headers", lambda: headers(claims, periods))
        members = return_members(claims, ids)
        disagreeing(members, valid, invalid)
        window_of = _windows(members, valid, params)
        cache: dict = {}
        of_claim: dict = {}  # each valid claim's Constants, for prepare
        constants_of = _constants_of(shared, of_claim, cache, params)
        columns = []  # each claim's CLAIM_COLUMNS
        for cid in ids:
            header = valid.get(cid)
            if header is not None:
                of_claim[cid] = made = constants_of(cid, header)
                columns.append(made.columns)
            else:
                columns.append(_NO_COLUMNS)
        as_of = _once(shared, "as_of", lambda: [first_unknown_month(valid[cid].as_of) if cid in valid else None for cid in ids])
        constants = pl.DataFrame({"claim_id": ids, "as_of_idx": as_of, **{k: [cols[k] for cols in columns] for k in CLAIM_COLUMNS}},
                                 schema={"claim_id": pl.Utf8, "as_of_idx": pl.Int32, **CLAIM_COLUMNS})
        looked, rows, orphans, with_rows = reading.result()
        if payroll.claims is not None:  # a row of another partition's claim (ids with spaces, say)
            strays = orphans.to_frame("claim_id").filter(~payroll.claims.holds()).height
            if strays:
                raise OutOfClaimOrder(f"{strays} payroll rows are not in claim order")
        measuring = polars_thread.submit(measure, looked, constants, payroll.row_name, shared)
        prepared, unprepared, again = _prepared(valid, cache, window_of, params, shared, of_claim)
        per_month, sums, bad = measuring.result()

    found: dict[int, list[Problem]] = {}
    for code, source, message in bad.iter_rows():
        found.setdefault(code, []).append(Problem(source, message))
    problems_of = {cid: invalid.get(cid, []) + found.get(code, []) or unprepared.get(cid, []) for code, cid in enumerate(ids)}
    for tp, cids in members.items():  # L6: a return is decided with all its locations or not at all
        bad_ones = [cid for cid in cids if problems_of[cid]]
        for cid in cids:
            if bad_ones and not problems_of[cid]:
                problems_of[cid] = [return_refused(bad_ones, tp)]
    invalid_rows, lines = [], []
    decided: list[int] = []
    for code, cid in enumerate(ids):
        problems = problems_of[cid]
        if problems:
            header = valid.get(cid)
            invalid_rows.append(invalid_row(cid, header.taxpayer.id if header else None, problems))
            if jsonl:
                lines.append((cid, invalid_json(cid, problems)))
        else:
            decided.append(code)
    chosen = [prepared[ids[code]] for code in decided]
    before = shared["figures"][0] if again else {}  # the first scenario's claims, when these were prepared again from them
    measured = [measured_again(p, b[1]) if (b := before.get(p.claim_id)) is not None and p.constants.columns == b[0].constants.columns
                else measure_claim(p, sums.get(code, NO_HOURS)) for p, code in zip(chosen, decided)]  # its positions kept where P1-P4 read alike
    figs, claim_rows, ledger_rows = _figures(chosen, measured, members, shared, again)
    if jsonl and decided:
        measured = measured_months(per_month)
        lines += [
            (p.claim_id, json.dumps(present(p, f, measured.get(code, {}), None, explain=False).to_dict(explain=False), ensure_ascii=False))
            for p, f, code in zip(chosen, figs, decided)
        ]
        lines.sort(key=lambda x: x[0])
    # the decided claims' rows and the others', each in claim order: merged (``in_order`` then only checks them)
    out = outputs.in_order(claim_rows.merge_sorted(pl.DataFrame(invalid_rows, schema=outputs.CLAIMS_SCHEMA), "claim_id"), "claim_id")
    return PartitionResult(
        out, outputs.in_order(ledger_rows, "claim_id", "period"), lines, rows, bad.height, orphans.len(), sorted(set(orphans.drop_nulls().to_list())),
        [ids[code] for code in sorted(set(range(len(ids))).difference(with_rows.to_list()))],
    )
