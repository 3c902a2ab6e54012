"""The rule ids of RULES.md that an examiner's reasons may cite."""

from __future__ import annotations

from .errors import ApiError

RULE_IDS = (
    "E1", "E2", "E3", "E4", "E5", "W1", "W2", "W3", "P1", "P2", "P3", "P4", "P5", "C1", "C2", "C3",
    "L1", "L2", "L3", "L4", "L5", "R1", "R2", "R3", "B1", "B2",
)


def check_reasons(outcome: str, reasons: list[dict]) -> None:
    """An adjustment or a denial says why, citing at least one rule."""
    if outcome in ("adjusted", "denied") and not reasons:
        raise ApiError(422, f"a claim {outcome} needs its reasons",
                       [("reasons", f"give at least one reason citing a rule id ({', '.join(RULE_IDS[:3])}, ...)")])
