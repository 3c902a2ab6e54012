"""The readings RULES.md leaves to the claim: each option names the rule it changes.

A claim's ``options`` object may set any of these; an unknown name is an error, so a misspelt
option never silently falls back to the default reading.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    year_one_start: Literal["next_month", "same_month_if_first_day"] = Field(
        "next_month", description="W1: credit year one starts the month after operations began, or that month when they began on its first day"
    )
    part_time_excludes_temporary: bool = Field(False, description="P3: temporary and seasonal work does not make a part-time position")
    whole_positions: bool = Field(False, description="C1: new positions are rounded down to whole numbers")
    insurer_limits: Literal["none", "cbt"] = Field("none", description="L3: apply the CBT 50% limit and floor to insurers too")
    carryforward_periods: int | None | Literal["form_313"] = Field(
        "form_313", description="L5: periods after the period of allowance in which a credit may be used; null = no limit (the statute's text); default: the Form 313 instructions' five"
    )
    refund: bool = Field(True, description="R3: take the refundable part of the year-one credit (false carries it all forward)")
    pay_period_allocation: Literal["weekdays", "calendar_days", "end_month"] = Field(
        "weekdays", description="P6: a pay period's hours go to its months by weekdays, by calendar days, or all to the month of its last day"
    )

    @field_validator("carryforward_periods", mode="before")
    @classmethod
    def _whole(cls, v):
        if v is None or v == "form_313":
            return v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"must be a whole number of periods (0 or more) or null for no limit, got {v!r}")
        return v
