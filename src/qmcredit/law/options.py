"""The readings RULES.md leaves to the claim: each option names the rule it changes.

A claim's ``options`` object may set any of these; an unknown name is an error, so a misspelt
option never silently falls back to the default reading. Values are read as a user writes them in
JSON (docs/format.md, "How values are read"): a whole number as a JSON integer (``3``), an
integral number (``3.0``) or its text (``"3"``); a flag as ``true`` / ``false`` only; ``null``
for an option whose default is not null means "not given" (the default), except where null is a
reading of its own (``carryforward_periods``: no limit).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

_NULL_IS_A_VALUE = ("carryforward_periods", "equivalent_hours_cap")


def whole_number(v: Any, what: str, minimum: int = 0) -> int:
    """A whole number however JSON gives it: 3, 3.0 (Decimal), "3"; never a flag, a fraction,
    or a number below ``minimum``."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"must be {what}, got {'null' if v is None else str(v).lower()}")
    if isinstance(v, float):
        raise ValueError(f"must be {what}; got the binary float {v!r}")
    try:
        d = Decimal(v.strip()) if isinstance(v, str) else Decimal(v) if isinstance(v, (int, Decimal)) else None
    except InvalidOperation:
        d = None
    if d is None or not d.is_finite() or d != d.to_integral_value():
        raise ValueError(f"must be {what}, got {v!r}")
    if d < minimum:
        raise ValueError(f"must be {what}, got {v!r}")
    if d.adjusted() > 6:
        raise ValueError(f"must be {what}, got {v!r}, which is too large")
    return int(d)


def strict_flag(v: Any) -> bool:
    """true or false, as JSON writes them (not 1, "yes" or "true")."""
    if isinstance(v, bool):
        return v
    raise ValueError(f"expected true or false, got {v!r}")


def _word(v: Any) -> Any:
    return v.strip().lower() if isinstance(v, str) else v


def _carryforward(v: Any) -> int | None | str:
    if v is None or (isinstance(v, str) and v.strip().lower() == "form_313"):
        return None if v is None else "form_313"
    return whole_number(v, "a whole number of periods (0 or more), null for no limit, or \"form_313\"")


def _cap(v: Any) -> int | None:
    return None if v is None else whole_number(v, "a whole number of hours (1 or more) or null for no cap", minimum=1)


OptionFlag = Annotated[bool, BeforeValidator(strict_flag)]


class Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    year_one_start: Annotated[Literal["next_month", "same_month_if_first_day"], BeforeValidator(_word)] = Field(
        "next_month", description="W1: credit year one starts the month after operations began, or that month when they began on its first day"
    )
    part_time_excludes_temporary: OptionFlag = Field(False, description="P3: temporary and seasonal work does not make a part-time position")
    equivalent_hours_cap: Annotated[int | None, BeforeValidator(_cap)] = Field(
        None, description="P4a: hours of one employee-month counted toward equivalents at most (140: the full-time hours); null: not capped (the text)"
    )
    whole_positions: OptionFlag = Field(False, description="C1: new positions are rounded down to whole numbers")
    insurer_limits: Annotated[Literal["none", "cbt"], BeforeValidator(_word)] = Field("none", description="L3: apply the CBT 50% limit and floor to insurers too")
    s_corporation_group_minimum: Annotated[Literal["reduced", "full"], BeforeValidator(_word)] = Field(
        "reduced", description="L2c: a New Jersey S corporation's group or combined-group minimum tax at 75% ($1,500, reduced) or $2,000 (full)"
    )
    carryforward_periods: Annotated[int | None | Literal["form_313"], BeforeValidator(_carryforward)] = Field(
        "form_313", description="L5: periods after the period of allowance in which a credit may be used; null = no limit (the statute's text); default: the Form 313 instructions' five"
    )
    credit_order: Annotated[Literal["form_313", "regulation"], BeforeValidator(_word)] = Field(
        "form_313", description="L2a: without a given order, every other credit counts before this one (Form 313 line 16), or by its place in the Director's list"
    )
    location_order: Annotated[Literal["proportional", "as_listed"], BeforeValidator(_word)] = Field(
        "proportional", description="L6: within a year of origin, the room shared in proportion to the locations' balances, or each in full in listed order"
    )
    refund: OptionFlag = Field(True, description="R3: take the refundable part of the year-one credit (false carries it all forward)")
    pay_period_allocation: Annotated[Literal["weekdays", "calendar_days", "end_month"], BeforeValidator(_word)] = Field(
        "weekdays", description="P6: a pay period's hours go to its months by weekdays, by calendar days, or all to the month of its last day"
    )

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        """An option written as null takes its default, unless null is a reading of its own."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k in _NULL_IS_A_VALUE}
        return data
