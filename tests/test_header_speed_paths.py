"""The batch reads millions of header fields; its shortcuts must read them exactly as the general
code does: ``claim._date`` (memoised on its text), ``claim._money`` (plain "1234.56" text), the
JSON (``jsontext.parse_json``: one decoder for all texts, ``json.loads``'s words for a problem) and
the cross-field checks of a header that validated (``claim.model_problems``, on the model)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qmcredit import jsontext
from qmcredit.batch.tables import header_doc
from qmcredit.claim import ClaimHeader, _date, _date_text, _money, header_problems, model_problems
from qmcredit.loaders import parse_json
from qmcredit.problems import ClaimError

from .strategies import claims


def test_date_memo_is_bounded_and_raises_each_time():
    assert _date_text.cache_info().maxsize is not None
    for bad, message in (("2002-02-30", "'2002-02-30' is not a calendar date"), ("2002-1-1", "expected a date YYYY-MM-DD, got '2002-1-1'")):
        for _ in range(3):
            with pytest.raises(ValueError, match=message):
                _date(bad)
    assert _date(" 2002-05-01 ") == _date("2002-05-01") == date(2002, 5, 1)
    assert _date(date(2002, 5, 1)) == date(2002, 5, 1)
    with pytest.raises(ValueError, match="expected a date YYYY-MM-DD, got 5"):
        _date(5)


digits = st.text(st.sampled_from("0123456789١٢٣٤٥٦٧٨٩٠０９"), min_size=0, max_size=17)


@given(digits, st.text(st.sampled_from("0123456789٣０"), min_size=2, max_size=2))
def test_money_plain_text_is_read_as_the_general_path_reads_it(whole, cents):
    text = f"{whole}.{cents}"
    try:
        general = repr(_money(" " + text))  # a leading space takes the general path
    except ValueError:
        with pytest.raises(ValueError):
            _money(text)
    else:
        assert repr(_money(text)) == general


@pytest.mark.parametrize("text", ["1234.56", ".12", "0.00", "999999999999999.99", "١٢٣.٤٥", "１２.３４"])
def test_money_plain_text_examples(text):
    assert repr(_money(text)) == repr(_money(" " + text)) == repr(Decimal(text).quantize(Decimal("0.01")))


JSON_TEXTS = [
    None, "", "  ", "[]", "{}", '[{"name": "a", "amount": 1.5, "order": "before"}]', '{"carryforward_periods": 3}',
    '[-0.0, 1E2, 007]', "\ufeff[]", "[1,", "[1] x", " [ 1.10 ] ", "nul", "{'a': 1}",
]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_parse_json_reads_as_json_loads_with_decimals(text):
    """The one decoder reads a text as ``json.loads`` does, and a bad text gets its words."""
    if text is None:
        return
    try:
        expected = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except json.JSONDecodeError as e:
        with pytest.raises(ClaimError) as got:
            parse_json(text)
        assert [(p.location, p.message) for p in got.value.problems] == [(f"line {e.lineno} column {e.colno}", f"not valid JSON: {e.msg}")]
        return
    assert repr(parse_json(text)) == repr(expected)


@pytest.mark.parametrize("text, place, message", [
    ('{"a": NaN}', "line 1 column 7", "NaN is not a number JSON allows"),
    ('{"a": 1, "a": 2}', "line 1 column 10", "the key 'a' is given twice"),
    ("[" + "9" * 4301 + "]", "line 1 column 2", "more than 100 digits"),
    ("[" * 65 + "]" * 65, "line 1 column 65", "nested more than 64 levels"),
])
def test_parse_json_refuses_what_json_loads_lets_through(text, place, message):
    """Issue 14: one strict parser; what ``json.loads`` accepts but no claim holds is refused."""
    with pytest.raises(ClaimError) as got:
        parse_json(text)
    (problem,) = got.value.problems
    assert problem.location == place and message in problem.message


_KEY = st.text(st.sampled_from('ab:"\\ é'), max_size=3)
_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(st.sampled_from('x: "\\'), max_size=4))


def _written(node) -> str:
    """A document of ``_DOCS`` as JSON text: an object is a list of (key, value, spaced) entries,
    which may give a key twice, each colon with spaces around it or not; strings with colons,
    quotes and backslashes, escaped as ``json.dumps`` does."""
    if isinstance(node, tuple):  # an object
        return "{" + ",".join(json.dumps(k) + (" : " if spaced else ":") + _written(v) for k, v, spaced in node[0]) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_written(v) for v in node) + "]"
    return json.dumps(node)


def _twice(node) -> bool:
    if isinstance(node, tuple):
        keys = [k for k, _, _ in node[0]]
        return len(set(keys)) < len(keys) or any(_twice(v) for _, v, _ in node[0])
    return isinstance(node, list) and any(_twice(v) for v in node)


_DOCS = st.recursive(_VALUE, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(st.lists(st.tuples(_KEY, inner, st.booleans()), max_size=4))), max_leaves=20)


@given(_DOCS)
def test_a_key_given_twice_is_refused_wherever_it_is_and_whatever_the_strings_hold(doc):
    """Issue 14: ``parse_json`` counts the objects' keys against the text's colons instead of
    checking each object's pairs (issue 18: nearly a third of a claim's decoding); colons, quotes and
    escapes inside strings, and spaces around the colons, never let a key given twice through,
    nor refuse a text without one. Refused, the words and place are those of the pairs' check."""
    text = _written(doc)
    if not _twice(doc):
        assert repr(parse_json(text)) == repr(json.loads(text, parse_float=Decimal, parse_int=Decimal))
        return
    with pytest.raises(ClaimError) as got:
        parse_json(text)
    (problem,) = got.value.problems
    assert "is given twice in one object" in problem.message
    with pytest.raises(jsontext._Refused) as checked:
        jsontext._DECODER.decode(text)  # each object's pairs checked as it closes
    assert got.value.problems == jsontext._problem(checked.value, text, None).problems


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_json_columns_read_as_parse_json(text):
    row = {"taxpayer_id": "T", "options": text, "periods": text}
    doc, problems = header_doc(row, None)
    if text is None or not text.strip():
        assert "options" not in doc and problems == []
        return
    try:
        expected = parse_json(text)
    except ClaimError as e:
        assert [(p.location, p.message) for p in problems] == [
            (column, f"{p.location}: {p.message}") for column in ("options", "periods") for p in e.problems]
        return
    assert repr(doc["options"]) == repr(doc["periods"]) == repr(expected) and problems == []


def _edited(doc: dict, edit: int, k: int) -> dict:
    """A generated header with one cross-field fault: a period moved out of order (V1), a gap
    (V1), a year-long period (V1), the location left out, a group payroll given with a flag
    (L2c), a minimum tax to derive in a year without a schedule (L2)."""
    periods = [dict(p) for p in doc["periods"]]
    p = periods[k % len(periods)]
    if edit == 1 and len(periods) > 1:
        periods.insert(0, periods.pop())
    elif edit == 2 and len(periods) > 1:
        del periods[len(periods) // 2 if len(periods) > 2 else 1]
    elif edit == 3:
        p["end"] = f"{int(p['end'][:4]) + 1}{p['end'][4:]}"
    elif edit == 4:
        doc = {k: v for k, v in doc.items() if k != "location"}
    elif edit == 5:
        p.update(minimum_tax=None, nj_gross_receipts="1", group_payroll=("10.00", "9000000")[k % 2], group_payroll_5m=bool(k % 3))
    elif edit == 6:
        p.update(minimum_tax=None, nj_gross_receipts="1", start="1990-01-01", end="1990-12-31")
    return {**{k: v for k, v in doc.items() if k != "employees"}, "periods": periods}


@given(claims(), st.integers(0, 6), st.integers(0, 8))
def test_cross_field_checks_of_a_valid_header_read_as_the_documents(doc, edit, k):
    """V1, L2, L2b, L2c across fields: a header that validated is checked on its model
    (``model_problems``, the batch's path); it must find exactly what the lenient reading of its
    document (``header_problems``, the path of a header with a bad field) finds."""
    doc = _edited(doc, edit, k)
    try:
        header = ClaimHeader.model_validate(doc)
    except ValueError:
        return
    assert model_problems(header) == header_problems(doc)


def _nest(depth: int, leaf: str, kinds: str) -> str:
    """``depth`` containers (``kinds``: "[" or "{" at each level), ``leaf`` innermost."""
    text = leaf
    for k in reversed(kinds[:depth]):
        text = f"[{text}, \"x\"]" if k == "[" else f'{{"k": {text}, "s": "]"}}' if k == "{" else f'[{text}]'
    return text


@given(st.integers(60, 68), st.text(st.sampled_from("[{("), min_size=68, max_size=68),
       st.sampled_from(['"a"', '"[[[["', '"]]}}"', '"\\"]"', '"\\u005b"', "1", "[]", "{}", '"é"']),
       st.booleans())
def test_nesting_is_refused_past_64_levels_however_the_text_is_read(depth, kinds, leaf, as_bytes):
    """Issue 14 and 18: ``parse_json`` refuses nesting past ``MAX_DEPTH`` whether its depth is read from the
    bytes (brackets and quotes, every step in C) or by walking the decoded document (a bracket in a
    string, an escape), for text and for bytes."""
    text = _nest(depth, leaf, kinds)
    real = depth + (leaf in ("[]", "{}"))
    doc = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    given_text = text.encode() if as_bytes else text
    if real <= 64:
        assert repr(parse_json(given_text)) == repr(doc)
    else:
        with pytest.raises(ClaimError, match="nested more than 64 levels deep"):
            parse_json(given_text)
