"""The command line: a thin shell that loads claims, calls ``decide`` and presents.

Exit codes: 0 done; 1 a claim is invalid or a figure unknown (the reason on stderr, one line per
problem); 2 the command line itself is wrong; 3 an unexpected internal error (reported on one line).
"""

from __future__ import annotations

import functools
import gc
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .problems import ClaimError

if TYPE_CHECKING:
    from rich.console import Console

# Each command imports the modules it runs (the rules, the loaders, the worksheet) in its body: a
# command pays only for its own, and ``qmcredit batch`` starts reading its tables before the
# rules are imported (qmcredit/__init__.py).

app = typer.Typer(
    name="qmcredit",
    help="The New Jersey credit for new jobs in a qualified municipality (N.J.S.A. 52:27BBB-55, Form 313).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@functools.cache
def _err() -> Console:
    """Problems go to stderr through rich, loaded when there is one to report."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


EXIT_INVALID = 1
EXIT_INTERNAL = 3

ClaimPaths = Annotated[list[Path], typer.Argument(help="Claim files: JSON with employees, or a JSON header naming its payroll table (FORMAT.md).", show_default=False)]


def _report(e: ClaimError, path: Path) -> None:
    for p in e.problems:
        _err().print(f"{path}: {p.location}: {p.message}", markup=False)


@app.command()
def compute(
    claims: ClaimPaths,
    json_out: Annotated[bool, typer.Option("--json", help="One determination per claim, one JSON object per line, in the order given.")] = False,
    explain: Annotated[bool, typer.Option("--explain/--no-explain", help="With --json: include the explanation trace (B1), down to each employee-month.")] = True,
) -> None:
    """Decide claims. Without --json, print the preparer's worksheet (Form 313 Parts III-V)."""
    from rich.console import Console

    from .core import decide_many
    from .loaders import load_claims
    from .worksheet import print_worksheet

    loaded = load_claims(claims)
    failed = False
    for path, item in zip(claims, loaded):
        if isinstance(item, ClaimError):
            _report(item, path)
            failed = True
    good = [c for c in loaded if not isinstance(c, ClaimError)]
    decided = iter(decide_many(good))
    out = sys.stdout
    console = Console()
    for path, item in zip(claims, loaded):
        if isinstance(item, ClaimError):
            if json_out:
                out.write(json.dumps({"claim": str(path), **item.to_dict()}) + "\n")
            continue
        det = next(decided)
        if json_out:
            out.write(det.to_json(explain=explain) + "\n")
        else:
            print_worksheet(item, det, console)
    out.flush()
    if failed:
        raise typer.Exit(EXIT_INVALID)


@app.command()
def validate(claims: ClaimPaths) -> None:
    """Check claims and report every problem at once (exit 1 if any claim is invalid)."""
    from .loaders import load_claims

    failed = False
    for path, c in zip(claims, load_claims(claims)):
        if isinstance(c, ClaimError):
            _report(c, path)
            _err().print(f"{path}: invalid: {len(c.problems)} problem(s)", markup=False)
            failed = True
            continue
        n_emp = c.payroll["employee_id"].n_unique()
        print(f"{path}: valid: {n_emp} employees, {c.payroll.height} employee-month rows, {len(c.periods)} periods")
    if failed:
        raise typer.Exit(EXIT_INVALID)


@app.command()
def explain(
    claim: Annotated[Path, typer.Argument(help="The claim file.", show_default=False)],
    figure: Annotated[str, typer.Option("--figure", "-f", help="The figure to trace, e.g. credit.year_one, average_positions.base, periods[1].applied.")] = "credit.year_one",
    rows: Annotated[int, typer.Option(help="How many employee-months to list at the bottom of the trace.", min=0)] = 40,
) -> None:
    """Walk one figure back to its rule, parameters, inputs and employee-months (B1)."""
    from .core import decide_many
    from .explain import figure_names, walk
    from .loaders import load_claim

    try:
        c = load_claim(claim)
    except ClaimError as e:
        _report(e, claim)
        raise typer.Exit(EXIT_INVALID) from None
    det = decide_many([c])[0]
    try:
        lines = walk(det, figure, rows)
    except KeyError:
        _err().print(f"{claim}: no figure {figure!r}; figures: {', '.join(figure_names(det))}", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    print("\n".join(lines))


def _register_shells() -> None:
    """The other shells' commands: each lives beside the shell it drives."""
    from .analysis.cli import cost, reform
    from .batch.cli import batch, synth
    from .service.cli import serve
    from .web.cli import form313

    app.command()(serve)
    app.command()(form313)
    app.command()(batch)
    app.command()(synth)
    app.command()(cost)
    app.command()(reform)


_register_shells()


def main() -> None:
    """Entry point: never a traceback for the user; one line and a non-zero exit instead."""
    try:
        app()
    except KeyboardInterrupt:
        _err().print("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except ClaimError as e:
        _err().print(f"invalid claim: {e.one_line()}", markup=False)
        sys.exit(EXIT_INVALID)
    except Exception as e:  # last resort: a bug, reported on one line rather than as a traceback
        _err().print(f"qmcredit: internal error: {type(e).__name__}: {e}", markup=False)
        sys.exit(EXIT_INTERNAL)
    finally:
        # The process ends now: every object still alive (a batch's tables, the imported
        # libraries) is moved out of the interpreter's final collections, which would otherwise
        # scan them all on the way out (0.03-0.05 s after a batch).
        gc.freeze()
