"""JSON that keeps money and hours exact: parsed into ``Decimal`` by the engine's one parser
(``qmcredit.jsontext``: duplicate keys, NaN, huge numbers and deep nesting refused), written back
digit for digit."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ..jsontext import parse_json, parse_stored


def loads(text: str | bytes, source: str | None = None) -> Any:
    """Parse JSON with every number as ``Decimal``; a refusal is a ``ClaimError`` naming the place."""
    return parse_json(text, source)


def loads_stored(text: str) -> Any:
    """JSON the office stored itself (determinations, documents read by ``loads`` as they came in,
    audit records): read fast, without the checks a client's text needs."""
    return parse_stored(text)


_STRING = json.encoder.encode_basestring  # json.dumps(s, ensure_ascii=False) of a str, without building an encoder


def dumps(value: Any) -> str:
    """Write JSON; a ``Decimal`` is written as the number it holds, digit for digit."""
    kind = type(value)
    if kind is str:
        return _STRING(value)
    if kind is dict:  # lists joined, not generators: a third quicker on a determination
        return "{" + ",".join([f"{_STRING(str(k))}:{dumps(v)}" for k, v in value.items()]) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join([dumps(v) for v in value]) + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is not a finite number")
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise TypeError("binary floats are never written: use Decimal")
    if isinstance(value, str):
        return _STRING(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_STRING(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(dumps, value)) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
