"""V1: the returns themselves. A privilege period (CBT) or reporting period (insurers) is at least
one day and at most 53 weeks (371 days: a 52-53 week year is accepted, I.R.C. 441(f)); the periods
of a claim are consecutive (a gap is refused asking for the missing period; see ``claim``)."""

from __future__ import annotations

from datetime import date

MAX_PERIOD_DAYS = 371  # V1: 53 weeks


def period_length_problem(start: date, end: date) -> str | None:
    """V1: why a period's dates (``end`` not before ``start``) cannot be one return's, or None."""
    days = (end - start).days + 1
    if days > MAX_PERIOD_DAYS:
        return (f"the period {start}..{end} is {days} days; a privilege or reporting period is at most 53 weeks "
                f"({MAX_PERIOD_DAYS} days, V1): give each return's period separately")
    return None
