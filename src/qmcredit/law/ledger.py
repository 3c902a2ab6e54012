"""L1, L4-L6 and R1-R3, N.J.S.A. 52:27BBB-55(b) and (c): when the credit is allowed, how it is
used under the return's room, carried forward, forfeited and refunded across the taxpayer's periods.

> b.(1) The credit ... for credit year one shall be allowed for the privilege period or reporting
> period in which or with which credit year one ends; ... for credit year two ... in which or with
> which credit year two ends.
> (2) An unused credit may be carried forward, if necessary, for use in the privilege periods or
> reporting periods following the privilege period or reporting period for which the credit is allowed.
> (3) The amount of the credit applied under this section ... for a privilege period ... shall not
> exceed 50% of the tax liability otherwise due ...
> c.(2) That amount of the credit received for credit year one remaining, if any, after the
> liabilities for the privilege period or reporting period in which or with which credit year two
> ends and for any prior period have been satisfied, multiplied by the sustained effort ratio,
> shall be an overpayment ...; that amount ... that is not an overpayment ... may be carried forward.

One named step per calculation (``allowed_in``, ``apply``, ``refund``, ``forfeit``, ``carried``),
each with its reading (``law.rule``); ``run`` takes them through the periods for every location
of one return (L6: one room per period, whatever the number of locations). All in whole cents.
"""

from __future__ import annotations

from datetime import date
from typing import NamedTuple

from ..money import cents_text
from .limits import Room
from .rule import rule

ORIGINS = ("year_one", "year_two")
CITE_B2 = "N.J.S.A. 52:27BBB-55(b)(2)"


@rule("L1", "N.J.S.A. 52:27BBB-55(b)(1)", "a credit year's credit is allowed for the period in which or with which it ends")
def allowed_in(ends: date, periods: list[tuple[date, date]]) -> int | None:
    """L1 (b)(1): the period whose dates contain the last day of the credit year; None when that
    period is not among those given."""
    for i, (start, end) in enumerate(periods):
        if start <= ends <= end:
            return i
    return None


def year_one_period_missing(allowed_in: tuple[int | None, int | None], credits: tuple[int | None, int | None]) -> bool:
    """V2: credit year one's period of allowance is not among the periods given while year two's
    is (so it came before the first one given), and year one has a credit (or one not known yet):
    the year-one balance entering the periods given is unknown, and with it every application,
    the refund (R1) and what is carried; never silently zero."""
    return allowed_in[0] is None and allowed_in[1] is not None and credits[0] != 0


@rule("L4", CITE_B2, "balances are used up to the return's room, year one's (the older) first; among locations "
      "with balances of the same year of origin the room is shared in proportion to them, cents by largest remainder, "
      "ties to the location listed first (L6)")
def apply(room: int, balances: list[int], as_listed: bool) -> list[int]:
    """L4, L6 (b)(2)-(3): what each balance of one year of origin takes of ``room``: all of them
    when they fit; else ``room`` shared in proportion to the balances (cents by largest remainder,
    ties to the earlier), or with option ``location_order = "as_listed"`` each in full in turn."""
    total = sum(balances)
    if total <= room:
        return balances
    if as_listed:
        out, left = [], room
        for b in balances:
            out.append(min(b, left))
            left -= out[-1]
        return out
    shares = [room * b // total for b in balances]
    rest = room - sum(shares)
    for k in sorted(range(len(balances)), key=lambda k: (-(room * balances[k] % total), k))[:rest]:
        shares[k] += 1
    return shares


APPLY_AS_LISTED = "; option location_order = \"as_listed\": within a year of origin, each location's balance in full before the next one's"


@rule("R1", "N.J.S.A. 52:27BBB-55(c)(2)", "year one's balance left after this period's and earlier liabilities, times "
      "the sustained effort ratio, rounded half-up to cents, is an overpayment (R1a: each location's own balance and ratio)")
def refund(balance: int, ratio: tuple[int, int] | None) -> int:
    """R1, R1a (c)(2): a location's year-one balance after application times its sustained effort
    ratio, rounded half-up to cents."""
    num, den = ratio if ratio is not None else (0, 1)
    return min((2 * balance * num + den) // (2 * den), balance)


REFUND_NOT_TAKEN = "; option refund = false carries it forward instead (R3)"


@rule("L5", "Form 313 instructions; N.J.S.A. 52:27BBB-55(b)(2)", "what is left of a credit after the last period it may be used in is forfeited")
def forfeit(period: int, allowed_in: int, carryforward_periods: int | None) -> bool:
    """L5: whether a balance allowed in period ``allowed_in`` expires at the close of ``period``."""
    return carryforward_periods is not None and period >= allowed_in + carryforward_periods


@rule("L4", "N.J.S.A. 52:27BBB-55(b)(2), (c)(2)", "the balances left after application, refund and forfeiture carry to the next period")
def carried(balances: list[int]) -> int:
    """L4, R2: the balance carried out of a period."""
    return balances[0] + balances[1]


class Origin(NamedTuple):
    """Part V of Form 313: one year of origin's movement in one period, in cents."""

    origin: str
    opening: int
    allowed: int
    applied: int
    refund: int
    forfeited: int
    closing: int

    def to_dict(self) -> dict:
        return {k: cents_text(getattr(self, k)) for k in ("opening", "allowed", "applied", "refund", "forfeited", "closing")}


class Line(NamedTuple):
    """One period of a ledger (a location's, or the return's: its locations' summed), in cents."""

    allows: tuple[str, ...]
    pending: bool
    allowed: int
    applied: int
    refund: int
    forfeited: int
    carried_forward: int
    origins: tuple[Origin, ...]


QUIET = Line((), False, 0, 0, 0, 0, 0, ())  # a period in which nothing is allowed or open


class Account(NamedTuple):
    """One location's credit as the ledger takes it: the period of allowance of each credit year
    (L1), each year's credit (C2; None while not known), the sustained effort ratio (C3)."""

    allowed_in: tuple[int | None, int | None]
    credits: tuple[int | None, int | None]
    ratio: tuple[int, int] | None


class Ledger(NamedTuple):
    """Form 313 Parts IV and V of a return or of one of its locations, in cents."""

    dates: tuple[tuple[date, date], ...]
    rooms: tuple[Room, ...]
    lines: tuple[Line, ...]
    pending_from: int | None
    not_yet_applied: dict  # origin -> {"amount", "allowed_for_period_containing"}

    @property
    def refund(self) -> int:
        return refunded(self.lines)

    @property
    def carried_forward(self) -> int:
        return carried_out(self.lines)


def refunded(lines: tuple[Line, ...]) -> int:
    """R1: the total refunded over the periods decided."""
    return sum([ln.refund for ln in lines if not ln.pending])


def carried_out(lines: tuple[Line, ...]) -> int:
    """L4: the balance carried out of the last period decided."""
    for ln in reversed(lines):
        if not ln.pending:
            return ln.carried_forward
    return 0


def _sum_lines(lines: list[Line]) -> Line:
    origins = []
    for o in ORIGINS:
        mine = [x for ln in lines for x in ln.origins if x.origin == o]
        if mine:
            origins.append(Origin(o, *(sum(x[k] for x in mine) for k in range(1, 7))))
    allows = tuple(o for o in ORIGINS if any(o in ln.allows for ln in lines))
    return Line(allows, any(ln.pending for ln in lines), *(sum(ln[k] for ln in lines) for k in range(2, 7)), tuple(origins))


def run(
    rooms: list[int],
    accounts: list[Account],
    carryforward_periods: int | None,
    take_refund: bool,
    as_listed: bool = False,
) -> tuple[tuple[Line, ...], tuple[tuple[Line, ...], ...], int | None]:
    """Apply the credits of every location of one return period by period under the return's
    room (L6; L4: year one's balances before year two's), refund each location's part at the close
    of its year two's period (R1, R1a, R3), forfeit what outlives the carryforward limit (L5).

    ``rooms``: each period's room (L2-L3), in date order. A credit still None (months after
    ``as_of``) leaves undecided the periods from the first one it would enter. Returns the
    return's lines, each location's lines, and that first undecided period."""
    if len(accounts) == 1:
        pending_from = _pending_from(accounts[0])
        lines = _run_alone(rooms, accounts[0], carryforward_periods, take_refund, pending_from)
        return lines, (lines,), pending_from
    pending_from = min([p for p in map(_pending_from, accounts) if p is not None], default=None)  # the return's, the first of its locations'
    n = len(accounts)
    balance = [[0, 0] for _ in range(n)]
    open_ = [[False, False] for _ in range(n)]
    allows_of: list[dict[int, tuple[str, ...]]] = [{} for _ in accounts]  # period -> the credit years allowed in it (L1)
    for a, al in zip(accounts, allows_of):
        for o in (0, 1):
            if a.allowed_in[o] is not None:
                al[a.allowed_in[o]] = al.get(a.allowed_in[o], ()) + (ORIGINS[o],)
    per_loc: list[list[Line]] = [[] for _ in range(n)]
    total: list[Line] = []
    for i, rm in enumerate(rooms):
        allows = [al.get(i, ()) for al in allows_of]
        if pending_from is not None and i >= pending_from:
            lines = [_new(Line, (allows[k], True, 0, 0, 0, 0, 0, ())) for k in range(n)]
        elif not any(allows) and not any(map(any, open_)):  # nothing allowed or open: nothing moves
            lines = [QUIET] * n
        else:
            lines = _period(i, rm, accounts, balance, open_, allows, carryforward_periods, take_refund, as_listed)
        for k in range(n):
            per_loc[k].append(lines[k])
        total.append(_sum_lines(lines))
    return tuple(total), tuple(tuple(x) for x in per_loc), pending_from


def _pending_from(a: Account) -> int | None:
    """The first period of one location's ledger left undecided: the first one a credit still
    None (months after ``as_of``) would enter; under V2, the first period given."""
    if year_one_period_missing(a.allowed_in, a.credits):
        return 0
    (p1, p2), (c1, c2) = a.allowed_in, a.credits
    first = p1 if c1 is None else None
    return p2 if c2 is None and p2 is not None and (first is None or p2 < first) else first


def _run_alone(rooms: list[int], a: Account, cf: int | None, take_refund: bool, pending_from: int | None) -> tuple[Line, ...]:
    """``run`` of a return of one location, its lines being the return's: the same steps without
    sharing a room (the batch's usual case, kept fast)."""
    y1, y2 = a.allowed_in
    bal, op = [0, 0], [False, False]
    lines = []
    for i, rm in enumerate(rooms):
        allows = _ALLOWS[y1 == i, y2 == i]  # L1
        if pending_from is not None and i >= pending_from:
            lines.append(_new(Line, (allows, True, 0, 0, 0, 0, 0, ())))
        elif not allows and not (op[0] or op[1]):  # nothing allowed or open: nothing moves
            lines.append(QUIET)
        else:
            opn = (bal[0] if op[0] else 0, bal[1] if op[1] else 0)
            al = [0, 0]
            for o in (0, 1):
                if a.allowed_in[o] == i:
                    al[o] = bal[o] = a.credits[o] or 0
                    op[o] = True
            ap = [0, 0]
            for o in (0, 1):  # L4: the older balance first, up to the room
                if op[o]:
                    ap[o] = took = min(bal[o], rm)
                    bal[o] -= took
                    rm -= took
            lines.append(_close(i, a, allows, opn, al, ap, bal, op, cf, take_refund))
    return tuple(lines)


#: L1: the credit years allowed in a period, by (year one's period of allowance, year two's)
_ALLOWS = {(False, False): (), (True, False): ("year_one",), (False, True): ("year_two",), (True, True): ORIGINS}


def _close(i: int, a: Account, allows: tuple[str, ...], opn, al: list[int], ap: list[int], bal: list[int], op: list[bool],
           cf: int | None, take_refund: bool) -> Line:
    """R1, L5 of one location at the close of period ``i``, after application (``ap``): its
    refund in year two's period of allowance, what outlives the carryforward limit, and its
    line (Form 313 Part V by year of origin); a balance used up leaves the ledger."""
    back = 0
    if a.allowed_in[1] == i and take_refund and op[0]:  # R1, R1a
        back = refund(bal[0], a.ratio)
        bal[0] -= back
    lost = [0, 0]
    for o in (0, 1):  # L5
        if op[o] and forfeit(i, a.allowed_in[o], cf):
            lost[o], bal[o] = bal[o], 0
    one = _new(Origin, ("year_one", opn[0], al[0], ap[0], back, lost[0], bal[0])) if op[0] else None
    two = _new(Origin, ("year_two", opn[1], al[1], ap[1], 0, lost[1], bal[1])) if op[1] else None
    origins = (one, two) if one and two else (one,) if one else (two,) if two else ()
    op[0] = op[0] and bal[0] > 0  # a balance used up leaves the ledger
    op[1] = op[1] and bal[1] > 0
    return _new(Line, (allows, False, al[0] + al[1], ap[0] + ap[1], back, lost[0] + lost[1], carried(bal), origins))


_new = tuple.__new__  # a NamedTuple made without the Python frame of its __new__ (the batch makes millions)


def _period(i, room, accounts, balance, open_, allows, cf, take_refund, as_listed) -> list[Line]:
    """One period of ``run`` for several locations: every location's line, updating its ``balance`` and ``open_``."""
    n = len(accounts)
    opening = [(b[0] if op[0] else 0, b[1] if op[1] else 0) for b, op in zip(balance, open_)]
    allowed = [[0, 0] for _ in range(n)]
    for k, a in enumerate(accounts):
        for o in (0, 1):
            if a.allowed_in[o] == i:
                allowed[k][o] = balance[k][o] = a.credits[o] or 0
                open_[k][o] = True
    applied = [[0, 0] for _ in range(n)]
    left = room
    for o in (0, 1):  # L4, L6: the older year of origin first, under one room
        who = [k for k in range(n) if open_[k][o]]
        if not who:
            continue
        for k, took in zip(who, apply(left, [balance[k][o] for k in who], as_listed)):
            applied[k][o] = took
            balance[k][o] -= took
            left -= took
    return [_close(i, a, allows[k], opening[k], allowed[k], applied[k], balance[k], open_[k], cf, take_refund) for k, a in enumerate(accounts)]
