"""Reading payroll exports as payroll systems write them (docs/payroll.md): column mapping
(``mapping``), months and dates (``dates``), the table itself (``table``), pay periods
(``periods``, rule P6) and who the employees are (``people``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .mapping import Mapping


@dataclass(frozen=True)
class Settings:
    """How to read a claim's payroll: the user's ``mapping`` and a ``roster`` table (employee
    id, name, SSN, hire and separation dates, status, relation) joined by employee id."""

    mapping: Mapping = field(default_factory=Mapping)
    roster: Path | None = None
