"""``qmcredit form313 CLAIM (--period YYYY | --all) [--location ID] [--format pdf|json|csv] [--out FILE]``:
Form 313 for one privilege period or every one, as a PDF or as rows for preparers' software. A claim
with several locations (L6) gives each location's form under the return's one room, location after
location (``--location ID``: that location's only).

A typer command function; the main CLI registers it with ``app.command()(form313)``. Exit codes
follow the main CLI: 1 the claim is invalid, 2 the command line is wrong (an unknown period or
location: the periods or locations available are listed). The PDF is written atomically (a temporary file in the same folder,
then renamed), so a reader never sees half a file.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ..files import unwritable, written_whole
from ..imports.options import Columns, DateFormat, MappingFile, Roster, Sheet, settings_from
from ..problems import ClaimError
from .figures import PeriodNotFound, select_period


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole (``files.written_whole``), on disk before it is named."""
    with written_whole(path) as tmp, tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def worksheet_path(out: Path) -> Path:
    """Where ``--worksheet`` puts the worksheet: beside OUT, ``NAME.worksheet.pdf``."""
    return out.with_name(f"{out.stem}.worksheet.pdf")


def form313(
    claim: Path = typer.Argument(..., help="The claim: JSON with employees, or a JSON header naming its payroll table (docs/format.md).",
                                 show_default=False),
    period: str = typer.Option(None, "--period", help="The privilege period: YYYY, the year it ends in, or its index (0 is the first).",
                               show_default=False),
    all_periods: bool = typer.Option(False, "--all", help="Every privilege period's form, in one file."),
    location: str = typer.Option(None, "--location", help="A claim with several locations: the form of the location with this id only "
                                 "(without it, every location's form, in one file).", show_default=False),
    out: Path = typer.Option(None, "--out", help="The file to write (required for the PDF; JSON and CSV go to standard output without it).",
                             show_default=False),
    fmt: str = typer.Option("pdf", "--format", help="pdf (the form), or json / csv: one row per line and period for preparers' software."),
    worksheet: bool = typer.Option(False, "--worksheet", help="Also write the worksheet (monthly table, chart, ledger) as OUT's NAME.worksheet.pdf."),
    columns: Columns = None, mapping: MappingFile = None, sheet: Sheet = None, roster: Roster = None, date_format: DateFormat = None,
    preparer: str = typer.Option("", "--preparer", help="The preparer's name for the form's preparer block (blank to sign by hand)."),
    firm: str = typer.Option("", "--firm", help="The preparer's firm."),
    ptin: str = typer.Option("", "--ptin", help="The preparer's PTIN."),
) -> None:
    """Write Form 313 (Economic Recovery Tax Credit, Parts I-V) for one privilege period, or all, as a PDF, JSON or CSV."""
    from .. import decide, load_claim  # the rules: loaded by the commands that use them (qmcredit/cli.py)

    fmt = fmt.strip().lower()
    if fmt not in ("pdf", "json", "csv"):
        typer.echo(f"--format {fmt!r}: give pdf, json or csv", err=True)
        raise typer.Exit(2)
    if (period is None) == (not all_periods):
        typer.echo("give --period YYYY (one privilege period) or --all (every period), not both or neither", err=True)
        raise typer.Exit(2)
    if out is None and (fmt == "pdf" or worksheet):
        typer.echo("--out: give the PDF file to write", err=True)
        raise typer.Exit(2)
    why = unwritable(out) if out is not None else None
    if why is not None:
        typer.echo(f"--out: {why}" + (f", e.g. --out {out / f'form313.{fmt}'}" if out.is_dir() else ""), err=True)
        raise typer.Exit(2)
    try:
        c = load_claim(claim, settings_from(columns, mapping, sheet, roster, date_format))
    except ClaimError as e:
        for p in e.problems:
            typer.echo(f"{claim}: {p.message}" if p.location == str(claim) else f"{claim}: {p}", err=True)
        raise typer.Exit(1)
    from .form import LocationNotFound, Preparer, return_forms
    from .pdf import forms_pdf, worksheet_pdf  # reportlab: loaded by this command only

    det = decide(c)
    who = Preparer(preparer.strip(), firm.strip(), ptin.strip())
    try:
        indices = list(range(len(det.ledger.dates))) if all_periods else [select_period(det, period)]
        forms = return_forms(c, det, indices, who, None if location is None else location.strip())
    except (PeriodNotFound, LocationNotFound) as e:
        typer.echo(f"{claim}: {e}", err=True)
        raise typer.Exit(2)
    if fmt == "pdf":
        data = forms_pdf(forms)
    else:
        from . import efile

        text = efile.to_json(forms) if fmt == "json" else efile.to_csv(forms)
        if out is None:
            typer.echo(text, nl=False)
            return
        data = text.encode("utf-8")
    write_atomically(out, data)
    typer.echo(f"wrote {out}")
    if worksheet:
        ws = worksheet_path(out)
        write_atomically(ws, worksheet_pdf(c, det))
        typer.echo(f"wrote {ws}")
