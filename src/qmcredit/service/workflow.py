"""The life of a claim, as pure rules: which role may move it from which state to which.

draft → submitted → under_review → approved | adjusted | denied → refund_certified

A preparer may amend a claim (a new revision) while it is a draft or submitted; amending a decided
claim files it again (next year's return, or an amended past period) and sends it back to
``submitted``. An examiner amends only while reviewing: that is an adjustment.
"""

from __future__ import annotations

from .errors import ApiError

#: action -> (states it may start from, state it leads to, the role that may take it)
ACTIONS: dict[str, tuple[frozenset[str], str, str]] = {
    "submit": (frozenset({"draft"}), "submitted", "preparer"),
    "start_review": (frozenset({"submitted"}), "under_review", "examiner"),
    "approve": (frozenset({"under_review"}), "approved", "examiner"),
    "adjust": (frozenset({"under_review"}), "adjusted", "examiner"),
    "deny": (frozenset({"under_review"}), "denied", "examiner"),
    "certify_refund": (frozenset({"approved", "adjusted"}), "refund_certified", "examiner"),
}

DECIDED = frozenset({"approved", "adjusted", "denied", "refund_certified"})
#: the states in which an examiner's approval of a revision stands
APPROVED = frozenset({"approved", "adjusted", "refund_certified"})


def next_state(state: str, action: str, role: str) -> str:
    """The state after ``action``, or a 403/409 naming why it may not be taken now."""
    starts, target, who = ACTIONS[action]
    verb = action.replace("_", " ")
    if role != who:
        raise ApiError(403, f"{verb}: for {who}s only", [("role", f"{role} may not {verb}")])
    if state not in starts:
        raise ApiError(409, f"a claim that is {state} cannot {verb}",
                       [("state", f"is {state}; {verb} needs one of {', '.join(sorted(starts))}")])
    return target


def state_after_amendment(state: str, role: str) -> str:
    """The state a claim is in after a new revision by ``role``."""
    if role == "preparer":
        if state in ("draft", "submitted"):
            return state
        if state in DECIDED:
            return "submitted"
        raise ApiError(409, "the claim is under review: the examiner adjusts it, or decides it first",
                       [("state", f"is {state}")])
    if role == "examiner":
        if state == "under_review":
            return state
        raise ApiError(409, "an examiner amends a claim only while reviewing it (start the review first)",
                       [("state", f"is {state}")])
    raise ApiError(403, "auditors read and change nothing", [("role", f"{role} may not amend")])


def state_after_recompute(state: str) -> str:
    """The state of a claim whose share of its taxpayer's return was recomputed (L6) because
    another location claim changed: an approval named the revision it approved, so an approved
    claim with new figures goes back to the examiner (``submitted``); any other state stays."""
    return "submitted" if state in APPROVED else state
