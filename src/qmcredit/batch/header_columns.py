"""The claims and periods tables read column by column into ``ClaimHeader``s (issue 18): the
batch's fast path for the common claim, whose every cell is *plain*.

A cell is plain when it is blank (``header_doc`` leaves it out) or when validation would read it
without a problem and keep that reading as it is: a date, month, word or flag that its field's
own parser (``claim._date``, ``claim._year_month``, ...) reads, checked once per distinct text;
an amount written as ``claim.PLAIN_MONEY`` (which ``claim._money`` reads as ``Decimal(text)``);
a text without surrounding spaces; ``options`` that validate alone; ``other_credits`` written as
``json.dumps`` writes a list of name, amount and order. The cells are checked in polars, column by
column; a claim whose cells are all plain is built from their readings (``claim.built``), without
pydantic reading them again, then checked across its fields by ``model_problems``, as
``validate_header`` checks a header that validated, when those checks, decided column-wise once
per partition (``_to_check``), may find a problem in it. Every other claim (a bad or unusual cell, JSON
in the claims table's ``periods``) gets ``None`` here and goes through ``header_doc`` +
``validate_header``, so that its problems read exactly as there. Both give the same headers and
the same problems (tests/test_header_columns.py).
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Callable

import polars as pl

from ..claim import PLAIN_MONEY, ClaimHeader, Location, OtherCredit, Period, Taxpayer, _date, _year_month, built, constructor, model_problems
from ..claim import _period_problems, _Read, plausible_start
from ..jsontext import parse_json
from ..law.options import Options
from ..problems import ClaimError, Problem
from .tables import PERIOD_FIELDS, flag_of

Checked = tuple[ClaimHeader | None, list[Problem]]  # what validate_header gives

#: the characters ``str.strip`` removes (``str.isspace``): ``header_doc``'s blank cell is one of only these
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_SPACE = "".join(f"\\x{{{ord(c):x}}}" for c in SPACES)  # as a class of a polars (Rust) pattern
_NAME = rf'[^"\\\x00-\x1f{_SPACE}](?:[^"\\\x00-\x1f]*[^"\\\x00-\x1f{_SPACE}])?'  # a JSON string as it reads, without surrounding spaces
_MONEY_TEXT = PLAIN_MONEY.pattern.strip("^$")
_CREDIT = rf'\{{"name": "{_NAME}", "amount": "{_MONEY_TEXT}", "order": "(?:before|after)"\}}'
#: an ``other_credits`` cell as ``json.dumps`` writes a list of {"name", "amount", "order"}
PLAIN_CREDITS = rf"^\[(?:{_CREDIT}(?:, {_CREDIT})*)?\]$"
_CREDIT_PARTS = re.compile(r'\{"name": "([^"]*)", "amount": "([^"]*)", "order": "(before|after)"\}')
_MONEY_FIELDS = ("liability", "minimum_tax", "alternative_minimum_assessment", "nj_gross_receipts", "group_payroll")
_FLAGS = ("s_corporation", "group_payroll_5m", "combined_group_member")
_OPTIONAL = ("minimum_tax", "alternative_minimum_assessment", "nj_gross_receipts", "group_payroll", *_FLAGS, "other_credits")


class _NotPlain(Exception):
    """A text the fast path leaves to ``header_doc`` + ``validate_header``."""


@contextmanager
def _no_collection():
    """The cyclic collector paused: the hundreds of thousands of models built here hold no cycles,
    and its passes over the whole heap while they are made cost a third of the building."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _blank(c: pl.Expr) -> pl.Expr:
    return c.is_null() | (c.str.strip_chars(SPACES) == "")


def _bare(c: pl.Expr) -> pl.Expr:
    """A text pydantic keeps as it is (``str_strip_whitespace`` strips some of ``SPACES``)."""
    return ~c.str.contains(f"^[{_SPACE}]|[{_SPACE}]$")


def _word(text: str) -> str:
    """``claim._word`` (``tax``): the text stripped and in lower case, kept as it is by pydantic."""
    word = text.strip().lower()
    if not word or word.strip() != word:
        raise _NotPlain
    return word


def _flag(text: str) -> bool:
    """``tables.flag_of`` of a flag, when it reads as one (else validation names it)."""
    flag = flag_of(text)
    if flag is None:
        raise _NotPlain
    return flag


def _options(text: str) -> Options | None:
    """An ``options`` cell: None for JSON ``null`` (not given)."""
    try:
        doc = parse_json(text)
        return None if doc is None else Options.model_validate(doc)
    except (ClaimError, ValueError):
        raise _NotPlain from None


def _readings(column: pl.Series, parse: Callable[[str], Any]) -> dict[str, Any]:
    """``parse`` of each distinct text of ``column`` that is not blank and is plain."""
    found = {}
    for text in column.drop_nulls().unique().to_list():
        if text.strip():
            try:
                found[text] = parse(text)
            except (ValueError, TypeError, _NotPlain):
                pass
    return found


def _read(frame: pl.DataFrame, column: str, parse: Callable[[str], Any] | None = None, required: bool = False) -> tuple[pl.Expr, dict | None]:
    """A column's plain test (``parse`` per distinct text, or bare text without it) and its
    readings; ``frame``'s blank cells are null (``_given``)."""
    c = pl.col(column)
    readings = _readings(frame.get_column(column), parse) if parse else None
    plain = c.is_in(pl.Series(list(readings), dtype=pl.Utf8).implode()) if parse else _bare(c)
    return (plain if required else c.is_null() | plain), readings


def _given(frame: pl.DataFrame, columns) -> pl.DataFrame:
    """``frame`` with every column of ``columns`` (a missing one empty) and blank cells as null."""
    return frame.select(
        pl.when(~_blank(pl.col(c))).then(pl.col(c)).alias(c) if c in frame.columns else pl.lit(None, dtype=pl.Utf8).alias(c)
        for c in columns)


_CREDIT_GIVEN = frozenset(("name", "amount", "order"))
_period, _credit = constructor(Period), constructor(OtherCredit)


def _credits(text: str) -> tuple[OtherCredit, ...]:
    """A ``PLAIN_CREDITS`` cell."""
    return tuple(_credit({"name": name, "amount": Decimal(amount), "code": None, "order": order}, set(_CREDIT_GIVEN))
                 for name, amount, order in _CREDIT_PARTS.findall(text))


@dataclass
class _PeriodCells:
    """The plain periods-table rows of the claims read column by column: ``table`` (text, blank
    cells null, ``_shape`` the fields given), the readings of its dates and flags."""

    table: pl.DataFrame
    day: dict[str, date]
    flag: dict[str, dict[str, bool]]

    def read(self, start, end, s_corp, ama, g5, gp, mt, ngr, member) -> tuple[_Read, bool | None]:
        """A period's cells as ``claim._period_problems`` reads its ``Period`` (the values
        ``_periods`` builds it of), and its ``group_payroll_5m`` as given (None when not)."""
        flag, given = self.flag, None if g5 is None else self.flag["group_payroll_5m"][g5]
        return _Read(self.day[start], self.day[end], False if s_corp is None else flag["s_corporation"][s_corp], _amount(ama), bool(given),
                     _amount(gp), _amount(mt), _amount(ngr), False if member is None else flag["combined_group_member"][member]), given


def _amount(text: str | None) -> Decimal | None:
    return None if text is None else Decimal(text)  # PLAIN_MONEY: _money's reading


def _period_cells(periods: pl.DataFrame | None, wanted: pl.Series) -> tuple[_PeriodCells | None, set[str]]:
    """The periods-table rows of the claims ``wanted`` whose every period is plain, and the
    claims with a period that is not."""
    if periods is None or periods.height == 0:
        return None, set()
    table = _given(periods, ("claim_id", *PERIOD_FIELDS, "other_credits")).filter(pl.col("claim_id").is_in(wanted.implode()))
    days, days_end = _read(table, "start", _date, required=True), _read(table, "end", _date, required=True)
    flags = {f: _read(table, f, _flag) for f in _FLAGS}
    plain = pl.all_horizontal(
        days[0], days_end[0], pl.col("liability").str.contains(PLAIN_MONEY.pattern).fill_null(False),
        *(pl.col(f).is_null() | pl.col(f).str.contains(PLAIN_MONEY.pattern) for f in _MONEY_FIELDS[1:]),
        *(test for test, _ in flags.values()), pl.col("other_credits").is_null() | pl.col("other_credits").str.contains(PLAIN_CREDITS),
    ).fill_null(False)
    shape = pl.sum_horizontal(pl.col(f).is_not_null().cast(pl.Int32) * (1 << k) for k, f in enumerate(_OPTIONAL))
    table = table.with_columns(plain.alias("_plain"), shape.alias("_shape"))
    bad = set(table.filter(~pl.col("_plain")).get_column("claim_id").unique().to_list())
    table = table.filter(~pl.col("claim_id").is_in(pl.Series(list(bad), dtype=pl.Utf8).implode()))
    return _PeriodCells(table, {**days[1], **days_end[1]}, {f: readings for f, (_, readings) in flags.items()}), bad


def _periods(cells: _PeriodCells | None, bad: set[str]) -> dict[str, list[Period]]:
    """The periods of each claim, in table order; a claim with a period ending before its start
    (``Period._ordered`` refuses it: validation names it) is added to ``bad``."""
    found: dict[str, list[Period]] = {}
    if cells is None:
        return found
    table, day, flag = cells.table, cells.day, cells.flag
    shapes = [frozenset(("start", "end", "liability", *(f for k, f in enumerate(_OPTIONAL) if n >> k & 1))) for n in range(1 << len(_OPTIONAL))]
    def read(c: str, reading) -> list:
        """The column's cells as ``reading`` reads them (blank: None), a column at a time."""
        column = table.get_column(c)
        if column.null_count() == column.len():  # a column given for few periods, or none
            return [None] * column.len()
        return [None if t is None else reading(t) for t in column.to_list()]
    # PLAIN_MONEY: _money's reading is Decimal(text); a minimum tax repeats a few amounts
    mt_text = {t: Decimal(t) for t in table.get_column("minimum_tax").drop_nulls().unique().to_list()}
    flag_cols = [[False if t is None else flag[f][t] for t in table.get_column(f).to_list()] for f in _FLAGS]
    last, of_claim = None, []
    for cid, start, end, liability, mt, ama, ngr, gp, s_corp, g5, member, credits, shape in zip(
        table.get_column("claim_id").to_list(), read("start", day.__getitem__), read("end", day.__getitem__),
        read("liability", Decimal), read("minimum_tax", mt_text.__getitem__), read("alternative_minimum_assessment", Decimal),
        read("nj_gross_receipts", Decimal), read("group_payroll", Decimal), *flag_cols, read("other_credits", _credits),
        table.get_column("_shape").to_list(),
    ):
        if end < start:
            bad.add(cid)
            continue
        if cid != last:  # a claim's rows are usually together
            last, of_claim = cid, found.setdefault(cid, [])
        of_claim.append(_period({
            "start": start, "end": end, "liability": liability, "minimum_tax": mt,
            "alternative_minimum_assessment": ama, "nj_gross_receipts": ngr, "s_corporation": s_corp, "group_payroll_5m": g5,
            "group_payroll": gp, "combined_group_member": member, "other_credits": () if credits is None else credits,
        }, set(shapes[shape])))
    return found


_READ = ("start", "end", "s_corporation", "alternative_minimum_assessment", "group_payroll_5m", "group_payroll", "minimum_tax",
         "nj_gross_receipts", "combined_group_member")  # the cells of claim._Read's fields, in its order


def _to_check(cells: _PeriodCells | None, heads: pl.DataFrame) -> set[str]:
    """The claims of ``heads`` (claim_id; tax and s_group: their built headers' ``taxpayer.tax``
    and ``options.s_corporation_group_minimum``) in which ``model_problems`` may find a problem;
    it finds none in the others. ``model_problems`` is ``claim._checks``: the location (which
    every plain header has), each period's start the day after the previous period's end (V1),
    and ``_period_problems`` of each period, a function of its values and its claim's tax and
    s_group, here called once per distinct values and claims' tax and s_group (a batch's periods
    repeat their dates, flags and blank amounts). A claim whose rows are apart in the table is
    checked whole."""
    if cells is None or cells.table.height == 0 or heads.height == 0:
        return set()
    dates = list(cells.day), list(cells.day.values())
    table = cells.table.with_columns(*(pl.col(c).replace_strict(*dates, return_dtype=pl.Date).alias(f"_{c}") for c in ("start", "end")))
    # a claim's rows are usually together: a period is checked against the row before it, of the same claim
    run = pl.col("claim_id") != pl.col("claim_id").shift(1)
    apart = table.filter(run.fill_null(True)).get_column("claim_id")
    follows = pl.col("_end").shift(1) + pl.duration(days=1)
    found = set(table.filter(~run & (follows != pl.col("_start"))).get_column("claim_id").unique().to_list())
    found.update(apart.filter(apart.is_duplicated()).unique().to_list())
    keys = ("tax", "s_group", *_READ)
    table = table.join(heads, on="claim_id")
    distinct = table.select(keys).unique()
    faulty = [k for k, (tax, s_group, *texts) in enumerate(zip(*(distinct.get_column(c).to_list() for c in keys)))
              if _period_problems(0, tax, s_group, *cells.read(*texts))]
    if faulty:
        found.update(table.join(distinct[faulty], on=keys, how="semi", nulls_equal=True).get_column("claim_id").to_list())
    return found


#: claims-table column -> (object, field, parser of a plain text; None: a text kept as it is)
_CLAIM_CELLS = (
    ("taxpayer_id", "taxpayer", "id", None),
    ("taxpayer_name", "taxpayer", "name", None),
    ("tax", "taxpayer", "tax", _word),
    ("uez_benefit", "taxpayer", "uez_benefit", _flag),
    ("earlier_credit_period_start", "taxpayer", "earlier_credit_period_start", _year_month),
    ("municipality", "location", "municipality", None),
    ("address", "location", "address", None),
    ("operations_began", "location", "operations_began", lambda t: plausible_start(_date(t))),
    ("operations_source", "location", "operations_source", None),
    ("as_of", None, "as_of", _date),
)
_REQUIRED = ("taxpayer_id", "tax", "municipality", "operations_began")


def plain_headers(claims: pl.DataFrame, periods: pl.DataFrame | None) -> list[Checked | None]:
    """For each claims-table row, in order: ``validate_header``'s header and problems when every
    cell of the row and of its periods-table rows is plain, else None (``header_doc`` +
    ``validate_header`` decide it)."""
    table = _given(claims, ("claim_id", *(c for c, *_ in _CLAIM_CELLS), "options", "periods"))
    reads = {c: _read(table, c, parse, required=c in _REQUIRED) for c, _, _, parse in _CLAIM_CELLS}
    options, read_options = _read(table, "options", _options)
    plain = pl.all_horizontal(*(test for test, _ in reads.values()), options, pl.col("periods").is_null()).fill_null(False)
    ok = table.select(plain).to_series().to_list()
    columns = [(obj, field, reads[c][1], table.get_column(c).to_list()) for c, obj, field, _ in _CLAIM_CELLS]
    option_texts = table.get_column("options").to_list()
    with _no_collection():
        cells, bad = _period_cells(periods, table.filter(plain).get_column("claim_id"))
        claim_periods = _periods(cells, bad)
        built_heads: list[tuple[str, ClaimHeader] | None] = []
        for k, cid in enumerate(table.get_column("claim_id").to_list()):
            if not ok[k] or cid in bad:
                built_heads.append(None)
                continue
            parts: dict = {"taxpayer": {}, "location": {}, None: {}}  # None: the header's own fields (as_of)
            for obj, field, readings, texts in columns:
                text = texts[k]
                if text is not None:
                    parts[obj][field] = text if readings is None else readings[text]
            head = {"taxpayer": built(Taxpayer, parts["taxpayer"]), "location": built(Location, parts["location"]), **parts[None]}
            if option_texts[k] is not None and (given := read_options[option_texts[k]]) is not None:
                head["options"] = given
            if cid in claim_periods:
                head["periods"] = tuple(claim_periods[cid])
            built_heads.append((cid, built(ClaimHeader, head)))
        heads = [h for h in built_heads if h is not None]
        to_check = _to_check(cells, pl.DataFrame(
            {"claim_id": [cid for cid, _ in heads], "tax": [h.taxpayer.tax for _, h in heads],
             "s_group": [h.options.s_corporation_group_minimum for _, h in heads]}, schema=dict.fromkeys(("claim_id", "tax", "s_group"), pl.Utf8)))
        out: list[Checked | None] = []
        for one in built_heads:
            if one is None:
                out.append(None)
            elif one[0] not in to_check:
                out.append((one[1], []))
            else:
                found = model_problems(one[1])
                out.append((one[1] if not found else None, found))
    return out
