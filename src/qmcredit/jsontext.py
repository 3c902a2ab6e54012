"""JSON text read exactly: every number a ``Decimal``, never a binary float; a text that is not
JSON a ``ClaimError`` naming the line and column. Light (no models): the batch reads its tables'
JSON columns with it before the rules are imported."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from .problems import ClaimError, Problem

_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal)  # one for every text: a batch reads hundreds of thousands


def parse_json(text: str | bytes, source: str | None = None) -> Any:
    """JSON with every number as ``Decimal`` (never a binary float)."""
    if isinstance(text, str):
        try:
            return _DECODER.decode(text)
        except json.JSONDecodeError:
            pass  # json.loads says why, in its words (and refuses a byte-order mark first)
    try:
        return json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except UnicodeDecodeError as e:
        raise ClaimError([Problem("claim", f"is not UTF-8 text ({e.reason} at byte {e.start})")], source) from None
    except json.JSONDecodeError as e:
        raise ClaimError([Problem(f"line {e.lineno} column {e.colno}", f"not valid JSON: {e.msg}")], source) from None
