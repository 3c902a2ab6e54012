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
    credit_order: Literal["form_313", "regulation"] = Field(
        "form_313", description="L2a: without a given order, every other credit counts before this one (Form 313 line 16), or by its place in the Director's list"
    )
    location_order: Literal["proportional", "as_listed"] = Field(
        "proportional", description="L6: within a year of origin, the room shared in proportion to the locations' balances, or each in full in listed order"
    )
    refund: bool = Field(True, description="R3: take the refundable part of the year-one credit (false carries it all forward)")

    @field_validator("carryforward_periods", mode="before")
    @classmethod
    def _whole(cls, v):
        if v is None or v == "form_313":
            return v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"must be a whole number of periods (0 or more) or null for no limit, got {v!r}")
        return v
