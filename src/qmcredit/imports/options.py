"""The command line's options for reading a payroll export, shared by ``compute``, ``validate``,
``explain``, ``form313``, ``columns`` and ``batch``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import Settings
from .dates import parse_choice
from .mapping import Mapping, from_dict, load, parse_columns

Columns = Annotated[str | None, typer.Option(
    "--columns", help='Which column is which field, e.g. employee_id="Employee ID",hours="Regular Hours"+"Overtime" (docs/payroll.md).',
    show_default=False)]
MappingFile = Annotated[Path | None, typer.Option("--mapping", help="A mapping file (TOML or JSON) saved by `qmcredit columns --save-mapping`.", show_default=False)]
Sheet = Annotated[str | None, typer.Option("--sheet", help="The Excel sheet: its name or number (1 is the first).", show_default=False)]
Roster = Annotated[Path | None, typer.Option("--roster", help="A table of the employees (id, name, SSN, hire and separation dates, status, relation) joined by employee id.", show_default=False)]
DateFormat = Annotated[str | None, typer.Option("--date-format", help="Formats of date columns, e.g. month=MM/YYYY or period_start=DD/MM/YYYY (or one for all).", show_default=False)]


def mapping_from(columns: str | None, mapping: Path | None, sheet: str | None, date_format: str | None) -> Mapping:
    """The file's mapping with the command line's choices over it."""
    m = load(mapping) if mapping is not None else Mapping()
    given = parse_columns(columns) if columns else Mapping()
    if date_format:
        choice = parse_choice(date_format)
        given.date_format = from_dict({"date_format": choice.get("*", choice)}, "--date-format").date_format
    given.sheet = sheet
    return m.merged(given)


def settings_from(columns: str | None, mapping: Path | None, sheet: str | None, roster: Path | None, date_format: str | None) -> Settings:
    return Settings(mapping_from(columns, mapping, sheet, date_format), roster)
