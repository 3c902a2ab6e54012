"""Issue 18: the batch reads its claims and periods tables column by column
(``batch.header_columns``) and builds the header of a claim whose cells are all plain without
pydantic; every header and every problem must be what the document path gives
(``tables.header_doc`` + ``claim.validate_header``), field by field, down to which fields were
given and each amount's digits. Tables of generated cells, plain and not (blanks, spaces, bad
dates and amounts, flags as words, JSON good and bad), go through ``partition.headers``, the
batch's door."""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Annotated

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, StringConstraints, TypeAdapter

from qmcredit.batch.header_columns import SPACES, plain_headers
from qmcredit.batch.partition import headers
from qmcredit.batch.tables import CLAIM_FIELDS, PERIOD_FIELDS, header_doc, periods_by_claim
from qmcredit.claim import PLAIN_MONEY, _money, validate_header


def deep(x):
    """A model as everything that tells two apart: class, fields given, each value with its type
    (an amount as its text: 1.5 and 1.50 print differently)."""
    if isinstance(x, BaseModel):
        return (type(x).__name__, sorted(x.__pydantic_fields_set__), x.__pydantic_extra__, x.__pydantic_private__,
                [(k, deep(v)) for k, v in x.__dict__.items()])
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [deep(v) for v in x])
    if isinstance(x, Decimal):
        return ("Decimal", str(x))
    return (type(x).__name__, x)


def by_documents(claims: pl.DataFrame, periods: pl.DataFrame | None):
    """``partition.headers`` as it was: every row through ``header_doc`` + ``validate_header``."""
    valid, invalid, seen = {}, {}, set()
    claim_periods = periods_by_claim(periods)
    for row in claims.iter_rows(named=True):
        cid = row["claim_id"]
        if cid is None or cid == "":
            continue
        if cid in seen:
            invalid[cid] = ["duplicate"]
            valid.pop(cid, None)
            continue
        seen.add(cid)
        doc, found = header_doc(row, claim_periods.get(cid))
        header, problems = validate_header(doc)
        found = problems + found
        if found:
            invalid[cid] = found
        else:
            valid[cid] = header
    return valid, invalid


def agree(claims: pl.DataFrame, periods: pl.DataFrame | None) -> list:
    valid, invalid = headers(claims, periods)
    want_valid, want_invalid = by_documents(claims, periods)
    assert {k: deep(v) for k, v in valid.items()} == {k: deep(v) for k, v in want_valid.items()}
    assert invalid.keys() == want_invalid.keys()
    for cid, found in invalid.items():
        if want_invalid[cid] != ["duplicate"]:
            assert found == want_invalid[cid], cid
    return plain_headers(claims, periods)


def plain(values):
    return st.sampled_from(values)


def cells(plain_values, odd_values):
    """Mostly a plain value, sometimes one the fast path must leave to validation."""
    return st.one_of(plain(plain_values), plain(plain_values), plain(plain_values), plain(odd_values))


CLAIM_CELLS = {
    "taxpayer_id": cells(["22-1", "T 2"], [None, "", "  ", " T", "T\x1c", "\u3000T", "T\u2028"]),
    "taxpayer_name": cells([None, "Firm", "Café Ω"], ["", " Firm", "Firm\x1f", "\xa0"]),
    "tax": cells(["cbt", "insurance_premiums", "CBT", "gross_income_tax"], [None, "", " cbt ", "c b t", "İ", "\x1ccbt"]),
    "uez_benefit": cells([None, "false", "true"], ["", "Yes", " n ", "maybe", "1", "T", "\x1ctrue"]),
    "earlier_credit_period_start": cells([None, "2005-08"], [" 2005-08", "2005-13", "2005-8", "２００５-08", ""]),
    "municipality": cells(["Camden", "camden", "Trenton"], [None, "", " Camden", "Camden\u3000"]),
    "address": cells([None, "1 Main St"], ["", "1 Main St ", "\t"]),
    "operations_began": cells(["2002-05-05", "2001-01-01", "2003-12-01"],
                              [None, "", "2002-02-30", " 2002-05-05", "1890-01-01", "2002-5-5", "9999-01-01", "٢٠٠٢-٠٥-٠٥", "x"]),
    "operations_source": cells([None, "certificate of occupancy"], [" c", ""]),
    "as_of": cells([None, "2012-02-29"], ["2012-02-30", " 2012-02-29", "x", ""]),
    "options": cells([None, '{"refund": false}', '{"whole_positions": true}', '{"carryforward_periods": null}'],
                     ["", "null", " ", '{"refund": "no"}', "{bad", "[]", '{"refund": true, "refund": false}', '{"whole_position": true}',
                      '{"s_corporation_group_minimum": "FULL"}', '{"year_one_start": " same_month_if_first_day"}']),
    "periods": cells([None], ["", "null", "[]", " ", '[{"start": "2001-01-01", "end": "2001-12-31", "liability": "1.00"}]']),
}

MONEY = ["1234.56", "0.00", "39809.97", "999999999999999.99"]
ODD_MONEY = [None, "", " 5.00", "1200.125", "1,234.50", "1,60", "12", "1.5", "-1.00", "-0.00", "1e3", "１２.３４", "$5.00",
             "1000000000000000.00", "NaN", "5.", ".50"]
CREDIT = '{"name": "%s", "amount": "%s", "order": "%s"}'
PERIOD_CELLS = {
    "liability": cells(MONEY, ODD_MONEY),
    "minimum_tax": cells([None, "500.00", "2000.00"], ["2000", "", "x", " 750.00"]),
    "alternative_minimum_assessment": cells([None, None, "1000.00", "0.00"], ["x", "1000", ""]),
    "nj_gross_receipts": cells([None, None, "213455.83", "9000000.00"], ["5", "", "1,000,000.00"]),
    "s_corporation": cells([None, "false", "true"], ["TRUE", " yes ", "maybe", "", "0"]),
    "group_payroll_5m": cells([None, None, "true", "false"], ["no", "x"]),
    "group_payroll": cells([None, None, "6000000.00", "10.00"], ["6,000,000", "x"]),
    "combined_group_member": cells([None, None, "false", "true"], ["Y", "?"]),
    "other_credits": cells([None, None, "[" + CREDIT % ("Research and development", "5684.12", "before") + "]", "[]",
                            "[" + CREDIT % ("R", "1.00", "after") + ", " + CREDIT % ("Urban transit hub", "9229.17", "before") + "]"],
                           ["", "null", " []", "[" + CREDIT % (" R", "1.00", "after") + "]", "[" + CREDIT % ("R", "1.5", "after") + "]",
                            "[" + CREDIT % ("R", "1.00", "later") + "]", '[{"name": "R", "amount": "5.00", "code": 3}]',
                            '[{"name": "R", "amount": 5.00, "order": "before"}]', '{"name": "R"}', "[1]", "[",
                            '[{"name": "R", "amount": "5.00", "order": "before", "name": "S"}]', '[{"name": "R\\u0020", "amount": "1.00", "order": "after"}]',
                            "[" + CREDIT % ("", "1.00", "after") + "]", '[{"amount": "1.00", "name": "R", "order": "after"}]']),
}


@st.composite
def period_rows(draw, cid: str, n: int) -> list[dict]:
    """``n`` periods of one claim: yearly and consecutive, now and then out of order, with a
    gap, too long, backwards, or with a bad date."""
    year = draw(st.integers(1999, 2010))
    rows = []
    for i in range(n):
        start, end = f"{year + i}-01-01", f"{year + i}-12-31"
        fault = draw(st.integers(0, 14))
        if fault == 1:
            end = f"{year + i + 1}-06-30"  # too long (V1)
        elif fault == 2:
            start = f"{year + i}-02-01"  # a gap (V1)
        elif fault == 3:
            start, end = end, start  # backwards
        elif fault == 4:
            start = draw(plain([None, "", "2001-02-30", " 2001-01-01", "2001-1-1"]))
        elif fault == 5:
            start, end = f"{year - 5}-01-01", f"{year - 5}-12-31"  # out of order (V1)
        rows.append({"claim_id": cid, "start": start, "end": end, **{c: draw(s) for c, s in PERIOD_CELLS.items()}})
    return rows


@st.composite
def tables(draw):
    n = draw(st.integers(1, 6))
    ids = [f"C{k}" for k in range(n)]
    if draw(st.integers(0, 5)) == 0:
        ids.append(draw(plain(["C0", "", None])))  # a claim given twice, or a row without an id
    rows = [{"claim_id": cid, **{c: draw(s) for c, s in CLAIM_CELLS.items()}} for cid in ids]
    periods = [p for cid in ids if cid for p in draw(period_rows(cid, draw(st.integers(0, 4))))]
    schema = {c: pl.Utf8 for c in ("claim_id", *CLAIM_FIELDS, "options", "periods")}
    claims = pl.DataFrame(rows, schema=schema)
    ptable = pl.DataFrame(periods, schema={c: pl.Utf8 for c in ("claim_id", *PERIOD_FIELDS, "other_credits")})
    dropped = draw(st.sampled_from([None, "taxpayer_name", "group_payroll", "other_credits"]))  # a column the table lacks
    if dropped in claims.columns:
        claims = claims.drop(dropped)
    if dropped in ptable.columns:
        ptable = ptable.drop(dropped)
    return claims, (ptable if draw(st.integers(0, 7)) else None)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_columnar_headers_are_the_documents(t):
    agree(*t)


def test_plain_claims_take_the_columnar_path_and_agree():
    """A table of plain cells: every claim is read column by column (so the property above is
    not vacuous), valid ones and ones with cross-field problems (V1 gap, L2c) alike."""
    claims = pl.DataFrame([
        {"claim_id": f"C{k}", "taxpayer_id": f"22-{k}", "taxpayer_name": "Firm", "tax": ("cbt", "CBT", "insurance_premiums")[k % 3],
         "uez_benefit": ("false", None, "TRUE")[k % 3], "municipality": "Camden", "operations_began": "2002-05-05",
         "as_of": (None, "2012-02-29")[k % 2], "options": (None, '{"refund": false}')[k % 2]} for k in range(6)])
    periods = pl.DataFrame([
        {"claim_id": f"C{k}", "start": f"{y}-01-01", "end": f"{y}-12-31", "liability": "1234.56",
         "minimum_tax": (None, "500.00")[k % 2], "nj_gross_receipts": "213455.83", "s_corporation": "false",
         "group_payroll_5m": ("true" if k == 4 else None), "group_payroll": ("10.00" if k == 4 else None),
         "other_credits": "[" + CREDIT % ("R", "5.00", "before") + "]" if y % 2 else None}
        for k in range(6) for y in range(2001, 2008) if not (k == 5 and y == 2004)])
    fast = agree(claims, periods)
    assert all(f is not None for f in fast)
    problems = [[p.location for p in f[1]] for f in fast]
    assert problems[1] == problems[3] == [] and "periods[0].group_payroll_5m" in problems[4] and "periods[3].start" in problems[5]  # L2c; a gap (V1)


def test_spaces_are_what_strip_removes_and_cover_pydantics():
    """``SPACES`` is ``str.isspace``; pydantic's ``str_strip_whitespace`` removes none other
    (so a text Python would not strip is kept as it is)."""
    assert set(SPACES) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    strip = TypeAdapter(Annotated[str, StringConstraints(strip_whitespace=True)])
    for c in range(0x3001):  # every Unicode White_Space character is below U+3001
        if not 0xD800 <= c <= 0xDFFF:
            assert strip.validate_python(chr(c) + "x" + chr(c)) == chr(c) + "x" + chr(c) or chr(c) in SPACES


@given(st.from_regex(PLAIN_MONEY, fullmatch=True))
def test_plain_money_is_read_as_decimal_text(text):
    assert repr(_money(text)) == repr(Decimal(text))


def test_cross_field_problems_of_plain_claims_are_found_column_wise_as_model_problems_finds_them():
    """V1, L2, L2b, L2c on the columnar path: ``header_columns`` decides column-wise which plain
    claims ``model_problems`` may find a problem in (a period not the day after the one before,
    rows of a claim apart in the table, a period whose values ``_period_problems`` refuses, once
    per distinct values); each claim's problems are still ``model_problems``' own, and the
    others' none, as the documents' path gives (``agree``)."""
    year = lambda y, **cells: {"start": f"{y}-01-01", "end": f"{y}-12-31", "liability": "1234.56", "minimum_tax": "500.00", **cells}  # noqa: E731
    claims_periods = {
        "clean": [year(y) for y in range(2001, 2008)],
        "overlap": [year(2001), year(2002), {**year(2003), "start": "2002-12-31", "end": "2003-12-30"}],  # V1: not after the end before
        "gap": [year(2001), year(2003)],  # V1: a gap
        "long": [year(2001), {**year(2002), "end": "2003-06-30"}],  # V1: longer than 53 weeks
        "ama_late": [year(2008, alternative_minimum_assessment="1000.00")],  # L2b: AMA outside 2002-2006
        "ama_zero": [year(2008, alternative_minimum_assessment="0.00")],  # L2b: zero is accepted
        "ama_s_corp": [year(2004, alternative_minimum_assessment="1000.00", s_corporation="true")],  # L2b: S corporation
        "l2c": [year(2004, group_payroll_5m="true", group_payroll="10.00")],  # L2c: the flag against the payroll
        "l2c_agrees": [year(2004, group_payroll_5m="false", group_payroll="10.00")],
        "no_minimum": [year(2004, minimum_tax=None)],  # L2: nothing to derive it from
        "derived": [year(2004, minimum_tax=None, nj_gross_receipts="213455.83")],
        "no_schedule": [year(1990, minimum_tax=None, nj_gross_receipts="213455.83")],  # L2: no schedule that year
        "insurer": [year(2004, minimum_tax=None)],  # an insurer has no CBT minimum tax to derive
        "apart": [year(2001), year(2002)],  # its rows apart in the table, in order
        "apart_gap": [year(2001), year(2003)],  # apart, with a gap across them
    }
    rows = [{"claim_id": cid, **p} for cid, ps in claims_periods.items() for p in ps]
    first, second = [r for r in rows if r["claim_id"].startswith("apart")][::2], [r for r in rows if r["claim_id"].startswith("apart")][1::2]
    rows = [r for r in rows if not r["claim_id"].startswith("apart")]
    rows = first + rows + second
    periods = pl.DataFrame(rows, schema={c: pl.Utf8 for c in ("claim_id", "start", "end", "liability", "minimum_tax", "alternative_minimum_assessment",
                                                              "nj_gross_receipts", "s_corporation", "group_payroll_5m", "group_payroll")})
    claims = pl.DataFrame([{"claim_id": cid, "taxpayer_id": f"22-{k}", "tax": "insurance_premiums" if cid == "insurer" else "cbt",
                            "municipality": "Camden", "operations_began": "2002-05-05"} for k, cid in enumerate(claims_periods)])
    fast = agree(claims, periods)
    assert all(f is not None for f in fast)
    found = {cid: [p.location for p in f[1]] for cid, f in zip(claims_periods, fast)}
    assert found == {
        "clean": [], "overlap": ["periods[2].start"], "gap": ["periods[1].start"], "long": ["periods[1].end"],
        "ama_late": ["periods[0].alternative_minimum_assessment"], "ama_zero": [], "ama_s_corp": ["periods[0].alternative_minimum_assessment"],
        "l2c": ["periods[0].group_payroll_5m"], "l2c_agrees": [], "no_minimum": ["periods[0].minimum_tax"], "derived": [],
        "no_schedule": ["periods[0].minimum_tax"], "insurer": [], "apart": [], "apart_gap": ["periods[1].start"],
    }
