"""Claims filed at the same moment, read and decided together: the one code path of
``qmcredit compute`` over many claims (``claims_from_docs``: one columnar normalisation of every
claim's payroll; ``decide_many``: one positions pass, then each claim's rules), instead of paying
polars' fixed costs once a filing. Each filing still gets exactly its own claim and
determination, or its own ``ClaimError``: what ``claim_from_dict`` and ``decide`` give it alone.

Group commit, no timer: a filing that finds no group being decided decides at once (alone, or
with the filings that queued meanwhile); those that arrive while a group is decided wait for it
to finish, and the first of them to wake decides them all. A lone filing never waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

#: the most filings decided in one group (their rows are in memory together: at most this many
#: times the office's per-claim limit)
MOST = 32


class _Slot:
    __slots__ = ("doc", "done", "value", "error")

    def __init__(self, doc: Any):
        self.doc, self.done, self.value, self.error = doc, False, None, None

    def outcome(self):
        if self.error is not None:
            raise self.error
        return self.value


class Together:
    """``together(doc)``: what ``one(doc)`` gives, computed by ``many(docs)`` for every document
    waiting. ``many`` returns one value or exception per document; if it raises, each document
    is given to ``one`` alone, so that no filing fails for another's sake."""

    def __init__(self, many: Callable[[Sequence[Any]], list], one: Callable[[Any], Any], most: int = MOST):
        self._many, self._one, self._most = many, one, most
        self._cond = threading.Condition()
        self._waiting: list[_Slot] = []
        self._busy = False

    def __call__(self, doc: Any):
        slot = _Slot(doc)
        with self._cond:
            self._waiting.append(slot)
        while True:
            with self._cond:
                while self._busy and not slot.done:
                    self._cond.wait()
                if slot.done:
                    return slot.outcome()
                group, self._waiting = self._waiting[:self._most], self._waiting[self._most:]
                self._busy = True
            try:  # this filing's group, or (``most`` ahead of it) the one before: then it waits again
                self._decide(group)
            finally:
                for s in group:  # interrupted (not an exception of a claim's): nobody waits for ever
                    if not s.done:
                        s.error, s.done = RuntimeError("the decision was interrupted"), True
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _decide(self, group: list[_Slot]) -> None:
        try:
            results = self._many([s.doc for s in group]) if len(group) > 1 else None
        except Exception:  # noqa: BLE001 - one document's failure: each decided alone below
            results = None
        if results is None or len(results) != len(group):
            results = [self._alone(s.doc) for s in group]
        for s, r in zip(group, results):
            if isinstance(r, Exception):
                s.error = r
            else:
                s.value = r
            s.done = True

    def _alone(self, doc: Any):
        """``one(doc)``, or the exception it raised (handed to the filing's own thread)."""
        try:
            return self._one(doc)
        except Exception as e:  # noqa: BLE001
            return e
