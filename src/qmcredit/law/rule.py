"""Each step of the law carries its rule id, citation and reading, written once beside the
function and read from there by the trace (``core.present``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def rule(rid: str, cite: str, reading: str) -> Callable[[F], F]:
    """Mark a step function with its ``RULE``, ``CITE`` and ``READING``."""
    def mark(fn: F) -> F:
        fn.RULE, fn.CITE, fn.READING = rid, cite, reading
        return fn
    return mark
