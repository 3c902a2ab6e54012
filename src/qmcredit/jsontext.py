"""JSON text read exactly and strictly, the one parser of every claim, request and table cell:
every number a ``Decimal``, never a binary float; a key given twice in one object, ``NaN`` or
``Infinity``, a number of more than ``MAX_NUMBER_DIGITS`` digits, or nesting deeper than
``MAX_DEPTH`` is refused, as is a text that is not JSON, by a ``ClaimError`` naming the line and
column. Light (no models): the batch reads its tables' JSON columns with it before the rules are
imported."""

from __future__ import annotations

import json
import re
import threading
from decimal import Decimal
from itertools import accumulate
from typing import Any

from .problems import ClaimError, Problem

#: the most digits a number may have (amounts of the office go to 10^15 dollars, hours to 744 a month)
MAX_NUMBER_DIGITS = 100
#: the deepest nesting of objects and lists (a claim document needs five)
MAX_DEPTH = 64


class _Refused(Exception):
    """Raised inside the decoder's hooks; turned into a ``Problem`` with its place."""

    def __init__(self, pattern: str, message: str, nth: int = 0):
        self.pattern, self.message, self.nth = pattern, message, nth


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(re.escape(json.dumps(key)) + r"\s*:",
                       f"the key {key!r} is given twice in one object; give each key once", nth=1)
    return out


class _Keys(threading.local):
    """The keys of the objects decoded so far in this thread's current text (``_counted``)."""

    n = 0


_KEYS = _Keys()


def _counted(obj: dict) -> dict:
    _KEYS.n += len(obj)
    return obj


def _refuse_constant(name: str) -> Any:
    raise _Refused(r"(?<![\w\"])-?" + name, f"{name} is not a number JSON allows; give a finite number")


def _bounded(parse):
    def number(text: str) -> Decimal:
        if sum(c.isdigit() for c in text) > MAX_NUMBER_DIGITS:
            raise _Refused(r"(?<![\w\".])" + re.escape(text),
                           f"a number of more than {MAX_NUMBER_DIGITS} digits; no figure needs that many")
        return parse(text)
    return number


_HOOKS = dict(object_pairs_hook=_unique_keys, parse_constant=_refuse_constant)
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, **_HOOKS)  # one for every text: a batch reads hundreds of thousands
_COUNTING = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, object_hook=_counted, parse_constant=_refuse_constant)
_STORED = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_refuse_constant)
_CHECKING = json.JSONDecoder(parse_float=_bounded(Decimal), parse_int=_bounded(Decimal), **_HOOKS)
_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")
_LONG_RUN = "0" * (MAX_NUMBER_DIGITS + 1)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def _place(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _long_digits(text: str) -> bool:
    """Whether ``text`` has more than ``MAX_NUMBER_DIGITS`` digits in a row (in a number or a
    string: then the numbers are checked one by one). Every digit as 0, one substring search."""
    return _LONG_RUN in text.translate(_DIGITS_AS_ZERO)


def _deeper(doc: Any) -> bool:
    """Whether a decoded document nests more than ``MAX_DEPTH`` levels (its containers, level by
    level: a claim has a few hundred)."""
    level = [doc] if isinstance(doc, (dict, list)) else []
    for _ in range(MAX_DEPTH):
        if not level:
            return False
        level = [v for x in level for v in (x.values() if isinstance(x, dict) else x) if isinstance(v, (dict, list))]
    return bool(level)


_AS_PARENS = bytes.maketrans(b"[]{}", b"()()")
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"\\')


def _nested_within(data: bytes) -> bool | None:
    """Whether JSON ``data`` (already decoded without error) nests at most ``MAX_DEPTH`` levels,
    from its bytes alone (each step in C): its brackets and quotes (every bracket as a paren),
    each string without brackets is then an adjacent pair of quotes, removed; innermost pairs of
    parens removed once a level. None when it cannot tell (an escape, a bracket in a string):
    ``_deeper`` then walks the decoded document."""
    skeleton = data.translate(_AS_PARENS, _NOT_STRUCTURE)
    if b"\\" in skeleton:
        return None
    parens = skeleton.replace(b'""', b"")
    if b'"' in parens:
        return None
    for _ in range(MAX_DEPTH):
        if not parens:
            return True
        parens = parens.replace(b"()", b"")
    return not parens


def _too_deep(text: str) -> int | None:
    """The position where nesting first goes deeper than ``MAX_DEPTH``, if it does. Fast: the
    brackets outside strings, innermost pairs removed ``MAX_DEPTH`` times (each pass in C)."""
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return None
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_DEPTH):
        brackets = _PAIR.sub("", brackets)
        if not brackets:
            return None
    bare = _STRING.sub(lambda m: " " * len(m.group()), text)
    found = list(re.finditer(r"[\[\]{}]", bare))  # rare: deep, or unbalanced (the decoder then says why)
    depth = list(accumulate(1 if m.group() in "[{" else -1 for m in found))
    if max(depth, default=0) <= MAX_DEPTH:
        return None
    return found[depth.index(MAX_DEPTH + 1)].start()


def parse_stored(text: str) -> Any:
    """JSON this program wrote itself (a stored determination, a document ``parse_json`` read
    when it came in): every number a ``Decimal``, without the checks a client's text needs."""
    try:
        return _STORED.decode(text)
    except _Refused as e:  # kept before the office refused non-finite numbers
        raise ClaimError([Problem("stored document", e.message)]) from None


def parse_json(text: str | bytes, source: str | None = None) -> Any:
    """JSON with every number as ``Decimal`` (never a binary float), refusing what FORMAT.md's
    JSON never holds: duplicate keys, non-finite numbers, huge numbers, deep nesting."""
    if isinstance(text, (bytes, bytearray)):
        data = bytes(text)
        try:
            text = data.decode("utf-8")  # JSON exchanged is UTF-8 (RFC 8259, 8.1)
        except UnicodeDecodeError as e:
            raise ClaimError([Problem("claim", f"is not UTF-8 text ({e.reason} at byte {e.start})")], source) from None
        if text.startswith("\ufeff"):
            text = text[1:]  # a byte-order mark before JSON bytes is allowed (RFC 8259, 8.1)
    elif text.startswith("\ufeff"):  # as json.loads: a text (not bytes) with a byte-order mark is refused
        raise ClaimError([Problem("line 1 column 1", "not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)")], source)
    else:
        data = None
    try:
        doc = _CHECKING.decode(text) if _long_digits(text) else _decoded(text)
        within = _nested_within(data if data is not None else text.encode("utf-8", "surrogatepass"))
        if within or (within is None and not _deeper(doc)):
            return doc
    except (_Refused, json.JSONDecodeError, RecursionError) as e:
        _refuse_deep(text, source)
        raise _problem(e, text, source) from None
    _refuse_deep(text, source)
    raise ClaimError([Problem("claim", f"nested more than {MAX_DEPTH} levels deep; a claim needs a few")], source)


def _decoded(text: str) -> Any:
    """``text`` decoded, each key given once in its object. Each object is built by the decoder
    itself, its keys counted (``_counted``), not handed over as a list of pairs to be checked
    (``_unique_keys``: nearly a third of a claim's decoding, benchmarks/compute.md). Outside strings, a
    colon follows each key given, and only a key; a colon inside a string counts as well. So the
    objects' keys, each kept once, are as many as the text's colons only if every key was given
    once; else the text is decoded again with the pairs checked, to find the key given twice (or
    to find none: the colons were in strings)."""
    _KEYS.n = 0
    try:
        doc = _COUNTING.decode(text)
    except (json.JSONDecodeError, _Refused):  # the problem the checked decoding meets first (a key given twice may come before it)
        return _DECODER.decode(text)
    return doc if _KEYS.n == text.count(":") else _DECODER.decode(text)


def _refuse_deep(text: str, source: str | None) -> None:
    """Nesting deeper than ``MAX_DEPTH`` is refused first, at its place (before any other problem)."""
    deep = _too_deep(text)
    if deep is not None:
        raise ClaimError([Problem(_place(text, deep), f"nested more than {MAX_DEPTH} levels deep; a claim needs a few")], source)


def _problem(e: Exception, text: str, source: str | None) -> ClaimError:
    """The ``ClaimError`` of a text the decoder refused, at its place."""
    if isinstance(e, _Refused):
        found = [m.start() for _, m in zip(range(e.nth + 1), re.finditer(e.pattern, text))]
        place = _place(text, found[-1]) if len(found) > e.nth else "claim"
        return ClaimError([Problem(place, e.message)], source)
    if isinstance(e, json.JSONDecodeError):
        return ClaimError([Problem(f"line {e.lineno} column {e.colno}", f"not valid JSON: {e.msg}")], source)
    return ClaimError([Problem("claim", f"nested more than {MAX_DEPTH} levels deep")], source)
