"""``qmcredit form313 CLAIM --period YYYY --out file.pdf``: Form 313 for one privilege period.

A typer command function; the main CLI registers it with ``app.command()(form313)``. Exit codes
follow the main CLI: 1 the claim is invalid, 2 the command line is wrong (an unknown period: the
periods available are listed). The PDF is written atomically (a temporary file in the same folder,
then renamed), so a reader never sees half a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import typer

from ..problems import ClaimError
from .figures import PeriodNotFound


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def worksheet_path(out: Path) -> Path:
    """Where ``--worksheet`` puts the worksheet: beside OUT, ``NAME.worksheet.pdf``."""
    return out.with_name(f"{out.stem}.worksheet.pdf")


def form313(
    claim: Path = typer.Argument(..., help="The claim: JSON with employees, or a JSON header naming its payroll table (FORMAT.md).",
                                 show_default=False),
    period: str = typer.Option(..., "--period", help="The privilege period: YYYY, the year it ends in, or its index (0 is the first).",
                               show_default=False),
    out: Path = typer.Option(..., "--out", help="The PDF to write.", show_default=False),
    worksheet: bool = typer.Option(False, "--worksheet", help="Also write the worksheet (monthly table, chart, ledger) as OUT's NAME.worksheet.pdf."),
) -> None:
    """Write Form 313 (Economic Recovery Tax Credit, Parts I-V) for one privilege period as a PDF."""
    from .. import decide, load_claim  # the rules: loaded by the commands that use them (qmcredit/cli.py)

    try:
        c = load_claim(claim)
    except ClaimError as e:
        for p in e.problems:
            typer.echo(f"{claim}: {p.message}" if p.location == str(claim) else f"{claim}: {p}", err=True)
        raise typer.Exit(1)
    if c.parts:  # L6: the form is one location's under the return's room; the PDF lays out one location only
        typer.echo(f"{claim}: gives several locations (L6); the PDF of Form 313 is one location's: "
                   "see each location's Form 313 lines in `qmcredit compute` (the worksheet)", err=True)
        raise typer.Exit(2)
    from .pdf import form313_pdf, worksheet_pdf  # reportlab: loaded by this command only

    det = decide(c)
    try:
        pdf = form313_pdf(c, det, period)
    except PeriodNotFound as e:
        typer.echo(f"{claim}: {e}", err=True)
        raise typer.Exit(2)
    if not out.parent.is_dir():
        typer.echo(f"{out}: the folder {out.parent} does not exist", err=True)
        raise typer.Exit(2)
    write_atomically(out, pdf)
    typer.echo(f"wrote {out}")
    if worksheet:
        ws = worksheet_path(out)
        write_atomically(ws, worksheet_pdf(c, det))
        typer.echo(f"wrote {ws}")
