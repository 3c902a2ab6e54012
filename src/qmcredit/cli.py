"""The command line: a thin shell that loads claims, calls ``decide`` and presents.

Exit codes: 0 done; 1 a claim is invalid (the reason on stderr, one line per problem); 2 the
command line itself is wrong (a figure ``explain`` does not know among them); 3 an unexpected
internal error (reported on one line); 130 stopped by Ctrl-C, 143 by SIGTERM. Output whose reader
has gone (``| head``) ends the command quietly, with 0.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from .imports.options import Columns, DateFormat, MappingFile, Roster, Sheet, settings_from
from .problems import ClaimError

if TYPE_CHECKING:
    from rich.console import Console

# Each command imports the modules it runs (the rules, the loaders, the worksheet) in its body: a
# command pays only for its own, and ``qmcredit batch`` starts reading its tables before the
# rules are imported (qmcredit/__init__.py).

#: The other shells' commands, each beside the shell it drives: name -> (module, attribute, the
#: summary ``--help`` lists, the first paragraph of its own help). Their modules (polars, DuckDB,
#: the office's FastAPI and SQLAlchemy, reportlab) are imported only when the command runs or its
#: own help is shown, so neither ``qmcredit compute`` nor ``qmcredit --help`` starts with them
#: (tests/test_start_up.py: the summaries are the commands' own).
SHELLS = {
    "serve": ("service.cli", "serve", "Start the claims office: the HTTP API under /api/v1, OpenAPI at /openapi.json."),
    "form313": ("web.cli", "form313", "Write Form 313 (Economic Recovery Tax Credit, Parts I-V) for one privilege period, or all, as a PDF, JSON or CSV."),
    "batch": ("batch.cli", "batch", "Decide every claim of a claims table against one payroll table (N.J.S.A. 52:27BBB-55)."),
    "synth": ("batch.cli", "synth", "Write a realistic synthetic claims table, periods table and payroll table."),
    "cost": ("analysis.cli", "cost", "What the credit costs the State: by fiscal year, tax, firm size and credit year (docs/analysis.md)."),
    "reform": ("analysis.cli", "reform", "Decide the same claims under the baseline and under each reform, side by side: per claim,\n"
               "in totals, by fiscal year, tax, firm size and credit year (docs/analysis.md)."),
    "audit": ("service.cli", "audit_app", "The claims office's audit log."),
}


def _summarized(command):
    """``command``, listed in its group's help by the first paragraph of its help on one line
    (rich's list of commands kept a docstring's line breaks)."""
    if command is not None and command.help and not command.short_help:
        command.short_help = " ".join(command.help.split("\n\n")[0].split())
    return command


class _Shells(TyperGroup):
    """The command group: this module's commands, and ``SHELLS``: listed by their summaries,
    loaded by name when one is run (or asked for its own help)."""

    def list_commands(self, ctx) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in SHELLS if n not in self.commands)]

    def get_command(self, ctx, name: str):
        if name not in self.commands and name in SHELLS:  # listed in --help: its summary, its module not imported
            command = TyperCommand(name, help=SHELLS[name][2])
        else:
            command = super().get_command(ctx, name)
        return _summarized(command)

    def resolve_command(self, ctx, args):
        if args and args[0] in SHELLS and args[0] not in self.commands:
            self._load(args[0])
        return super().resolve_command(ctx, args)

    def _load(self, name: str) -> None:
        module, attr, _ = SHELLS[name]
        shell, command = getattr(import_module(f"qmcredit.{module}"), attr), None
        if not isinstance(shell, typer.Typer):  # one command: a Typer of it alone
            command, shell = shell, typer.Typer(add_completion=False)
            shell.command(name=name)(command)
        loaded = typer.main.get_command(shell) if command else typer.main.get_group(shell)
        loaded.name = name
        for sub in getattr(loaded, "commands", {}).values():  # a group's own list (``audit``)
            _summarized(sub)
        self.add_command(loaded)

    def invoke(self, ctx):
        """The command run, with SIGTERM, Ctrl-C and a closed output answered (``_stopped``) as
        ``main`` answers them outside a command (typer would end Ctrl-C with 130 and no word, a
        closed output with 1, the code of an invalid claim)."""
        try:
            return super().invoke(ctx)
        except _STOPS as e:
            raise typer.Exit(_stopped(e)) from None


app = typer.Typer(
    name="qmcredit",
    help="The New Jersey credit for new jobs in a qualified municipality (N.J.S.A. 52:27BBB-55, Form 313).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_Shells,
)

#: Whether ``main`` paused the cyclic collector for the start-up (``_started`` lets it run again).
_paused_for_start_up = False
#: Set by a command whose process holds nothing that needs the interpreter's teardown (no server,
#: cluster or worker pool left, every file closed): once its output is flushed, the process ends
#: at once (``__main__.main``), as a worker does, rather than free every object of polars,
#: pydantic and the rules one by one (6-8 ms of one claim's 0.23 s, benchmarks/compute.md).
ends_at_once = False


@app.callback()
def _started() -> None:
    """The command starts. The collector, paused by ``main`` while the command line was read and
    the command's modules imported (typer's commands, polars and the engine for ``batch``: hundreds
    of thousands of long-lived objects and no garbage, which it scanned again and again, ~8 ms of
    the batch's start, benchmarks/compute.md), runs again, those objects frozen out of its reach, as
    ``batch.engine._rules`` freezes the rules' modules. A command that keeps it paused says so
    (``compute``; the batch while it decides)."""
    global _paused_for_start_up
    if _paused_for_start_up:
        _paused_for_start_up = False
        gc.freeze()
        gc.enable()


def _say(line: str) -> None:
    """One line on stderr, as written: never wrapped (a problem is one ``FILE: LOCATION: MESSAGE``
    line, whatever the width of a terminal or a pipe)."""
    sys.stderr.write(line.replace("\n", " ") + "\n")


def _output_closed() -> None:
    """The reader of stdout has gone (``| head``): what is left unwritten goes nowhere, so that the
    interpreter's last flush does not fail again on the way out (a line "Exception ignored")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no stdout to point elsewhere
        pass


def _console() -> Console:
    """The worksheet's console: wrapped to a terminal's width; piped or redirected, never cut
    (rich would otherwise take 80 columns). A closed output is left to the command line (rich
    would end the process with 1, the code of an invalid claim)."""
    from rich.console import Console

    class Worksheets(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    console = Worksheets()
    return console if console.is_terminal else Worksheets(width=100_000, soft_wrap=True)


EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
#: Ctrl-C, and SIGTERM: 128 + the signal's number, as a shell reports a program the signal ended.
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM (``kill``, ``timeout``, a service manager) met while a command runs: it stops as at
    Ctrl-C, its workers shut down and its scratch files removed on the way out (``main``)."""


#: Set once the command's exit code is known (``_outcome``): a SIGTERM from then on is not answered.
_decided = False


def _terminated(signum, frame) -> None:
    if not _decided:
        raise Terminated


#: How a command is stopped from outside: SIGTERM, Ctrl-C, its output's reader gone.
_STOPS = (Terminated, KeyboardInterrupt, BrokenPipeError)


def _stopped(e: BaseException) -> int:
    """One of ``_STOPS`` answered (one line said, or the output let go), and the exit code it ends with."""
    if isinstance(e, BrokenPipeError):
        _output_closed()
        return 0
    if isinstance(e, Terminated):
        _say("terminated")
        return EXIT_TERMINATED
    _say("interrupted")
    return EXIT_INTERRUPTED

ClaimPaths = Annotated[list[Path], typer.Argument(help="Claim files: JSON with employees, or a JSON header naming its payroll table (docs/format.md).", show_default=False)]


def _report(e: ClaimError, path: Path) -> None:
    for p in e.problems:
        _say(f"{path}: {p.location}: {p.message}")


def _check_trace(path: Path, explain: bool) -> None:
    """``--trace FILE.parquet``: refused (exit 2, one line) without the explanation, without the
    .parquet suffix, or in a folder that does not exist."""
    from .files import unwritable

    why = ("the trace is the explanation's: give --trace without --no-explain" if not explain
           else unwritable(path, (".parquet",), "the trace is written as Parquet"))
    if why is not None:
        _say(f"qmcredit compute: --trace: {why}")
        raise typer.Exit(EXIT_USAGE)


@app.command()
def compute(
    claims: ClaimPaths,
    json_out: Annotated[bool, typer.Option("--json", help="One determination per claim, one JSON object per line, in the order given.")] = False,
    explain: Annotated[bool, typer.Option("--explain/--no-explain", help="With --json: include the explanation trace (B1), down to each employee-month.")] = True,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the employee-months of the trace (B1) to this Parquet file, one row each; the JSON's explanation then names the file instead of listing them.", dir_okay=False, show_default=False)] = None,
    columns: Columns = None, mapping: MappingFile = None, sheet: Sheet = None, roster: Roster = None, date_format: DateFormat = None,
    jobs: Annotated[int, typer.Option(help="With --json: local processes deciding the claims at once (default: the machine's cores), at most one per 6 MB of claim files.", min=1)] = os.cpu_count() or 1,
) -> None:
    """Decide claims. Without --json, print the preparer's worksheet (Form 313 Parts III-V)."""
    # The rules' modules, the claims' documents, rows and determinations live until the command
    # ends and hold no cycles worth collecting: the collector's passes over them were 7% of 1,000
    # claims' time, and 15 ms of one claim's (the modules' import, benchmarks/compute.md).
    gc.disable()
    global ends_at_once
    ends_at_once = True
    if trace is not None:
        _check_trace(trace, explain or not json_out)
    settings = settings_from(columns, mapping, sheet, roster, date_format)
    if json_out:
        _json_lines(claims, settings, explain, trace, jobs)
        return
    from .decided_files import load_and_decide
    from .worksheet import print_worksheet

    loaded, results = load_and_decide(claims, settings)
    if trace is not None:
        from .determination import trace_table, write_trace

        write_trace(trace_table([d for d in results if not isinstance(d, ClaimError)]), trace)
    console, failed = _console(), False
    for path, claim, det in zip(claims, loaded, results):
        if isinstance(det, ClaimError):
            _report(det, path)
            failed = True
        else:
            print_worksheet(claim, det, console)
    sys.stdout.flush()
    if failed:
        raise typer.Exit(EXIT_INVALID)


def _json_lines(claims: list[Path], settings, explain: bool, trace: Path | None, jobs: int) -> None:
    """``compute --json``: one line a claim file, in order (``decided_files``: on ``jobs``
    processes for many files); with ``trace``, the employee-months written whole to it first."""
    from contextlib import closing

    from .decided_files import copy_lines, decide_files, lines_read

    # closed however this ends: a Ctrl-C or a closed output met while a chunk is written out
    # leaves the chunks unfinished, and their worker processes would be left running
    with closing(decide_files(claims, settings, explain, None if trace is None else str(trace), jobs)) as decided:
        chunks = decided
        if trace is not None:  # the trace file whole before any line names it
            import polars as pl

            from .determination import trace_table, write_trace

            chunks = list(decided)
            write_trace(pl.concat([table for _, table, _ in chunks]) if chunks else trace_table([]), trace)
        out, paths, failed = sys.stdout, iter(claims), False
        for outcomes, _, lines in chunks:
            if lines is not None and not any(isinstance(o, ClaimError) for o in outcomes) and copy_lines(lines, out):
                for _ in outcomes:
                    next(paths)
                continue
            for outcome in lines_read(outcomes, lines):
                path = next(paths)
                if isinstance(outcome, ClaimError):
                    _report(outcome, path)
                    failed = True
                    out.write(json.dumps({"claim": str(path), **outcome.to_dict()}) + "\n")
                else:
                    out.write(outcome + "\n")
    out.flush()
    if failed:
        raise typer.Exit(EXIT_INVALID)


@app.command()
def validate(
    claims: ClaimPaths,
    columns: Columns = None, mapping: MappingFile = None, sheet: Sheet = None, roster: Roster = None, date_format: DateFormat = None,
) -> None:
    """Check claims and report every problem at once (exit 1 if any claim is invalid): every
    check `qmcredit compute` runs before it decides (the rules' reading of each header included)."""
    from .core import prepare
    from .loaders import load_claims

    failed = False
    for path, c in zip(claims, load_claims(claims, settings_from(columns, mapping, sheet, roster, date_format))):
        if not isinstance(c, ClaimError):
            try:
                for part in c.locations:  # a several-location claim: each location as the rules read it (L6)
                    prepare(part.header, str(path))
            except ClaimError as e:
                c = e
        if isinstance(c, ClaimError):
            _report(c, path)
            _say(f"{path}: invalid: {len(c.problems)} problem(s)")
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
    columns: Columns = None, mapping: MappingFile = None, sheet: Sheet = None, roster: Roster = None, date_format: DateFormat = None,
) -> None:
    """Walk one figure back to its rule, parameters, inputs and employee-months (B1)."""
    from .decided_files import decided
    from .explain import figure_names, walk
    from .loaders import load_claim

    try:
        c = load_claim(claim, settings_from(columns, mapping, sheet, roster, date_format))
        det = decided([c])[0]
        if isinstance(det, ClaimError):
            raise det
    except ClaimError as e:
        _report(e, claim)
        raise typer.Exit(EXIT_INVALID) from None
    try:
        lines = walk(det, figure, rows)
    except KeyError:
        _say(f"qmcredit explain: --figure: no figure {figure!r} in {claim}; its figures: {', '.join(figure_names(det))}")
        raise typer.Exit(EXIT_USAGE) from None  # the command line is wrong, not the claim
    print("\n".join(lines))


@app.command()
def columns(
    table: Annotated[Path, typer.Argument(help="A payroll table or export: CSV, Excel (.xlsx) or Parquet.", show_default=False)],
    columns: Columns = None, mapping: MappingFile = None, sheet: Sheet = None, date_format: DateFormat = None,
    save_mapping: Annotated[Path | None, typer.Option("--save-mapping", help="Save the mapping used (TOML or JSON, by its suffix) to reuse with --mapping.", show_default=False)] = None,
    rows: Annotated[int, typer.Option(help="How many of the first rows to show.", min=0)] = 5,
) -> None:
    """Show how a payroll export is read: each column's field, date formats, status words, the first rows and every problem."""
    from .imports.mapping import save
    from .imports.options import mapping_from
    from .imports.preview import chosen_mapping, lines
    from .loaders import grouped, import_payroll

    from .imports.table import Unmapped

    given = mapping_from(columns, mapping, sheet, date_format)
    if save_mapping is not None:  # before the table is read: where it goes can be wrong too
        from .files import unwritable

        why = unwritable(save_mapping, (".toml", ".json"), "the file's kind")
        if why is not None:
            _say(f"qmcredit columns: --save-mapping: {why}")
            raise typer.Exit(EXIT_USAGE)
    try:
        read = import_payroll(table, mapping=given)
        problems = grouped(read.problems)
    except Unmapped as e:  # show what was read, and what is missing
        read, problems = e.read, e.problems
    except ClaimError as e:
        _report(e, table)
        raise typer.Exit(EXIT_INVALID) from None
    print(f"{table}:")
    print("\n".join(lines(read, problems, rows)))
    if save_mapping is not None:
        try:
            save(chosen_mapping(read, given), save_mapping)
        except OSError as e:
            _say(f"qmcredit columns: --save-mapping: {str(save_mapping)!r} cannot be written: {e.strerror}")
            raise typer.Exit(EXIT_USAGE) from None
        print(f"saved the mapping to {save_mapping}; reuse it with --mapping {save_mapping}")
    if problems:
        raise typer.Exit(EXIT_INVALID)


def main() -> None:
    """Entry point: never a traceback for the user; one line and a non-zero exit instead. The
    cyclic collector is paused until the command starts (``_started``)."""
    global _paused_for_start_up
    _paused_for_start_up = gc.isenabled()
    gc.disable()
    # The command line uses no pydantic plugin: looking for them reads every installed
    # distribution's entry points as the first model is built (5-8 ms of each start, in this
    # process and the batch's workers, which inherit it; benchmarks/compute.md). A setting given stays.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # called off the main thread (a program's own thread), where only the default is possible
        pass
    try:
        code = _outcome()
    finally:
        if _paused_for_start_up:  # no command started (--help, a usage error): as it was
            _paused_for_start_up = False
            gc.enable()
        # The process ends now: every object still alive (a batch's tables, the imported
        # libraries) is moved out of the interpreter's final collections, which would otherwise
        # scan them all on the way out (0.03-0.05 s after a batch).
        gc.freeze()
    sys.exit(code)


def _outcome() -> int | str | None:
    """The command run (typer ends it with ``SystemExit``), and the code it ends with: a stop
    from outside met outside a command (the command line read, its modules imported; a command's
    own: ``_Shells.invoke``), an invalid claim, or a bug, each said on one line. Once the code is
    known, SIGTERM is ignored: the process is on its way out, its outputs whole; answered there, it
    ended in a traceback and exit 1 (met after this returned) or killed the process before its
    output was flushed (met in the interpreter's teardown)."""
    global _decided
    try:
        try:
            app()
        except SystemExit as e:
            return e.code
        except _STOPS as e:
            return _stopped(e)
        except ClaimError as e:
            _say(f"invalid claim: {e.one_line()}")
            return EXIT_INVALID
        except Exception as e:  # last resort: a bug, reported on one line rather than as a traceback
            _say(f"qmcredit: internal error: {type(e).__name__}: {e}")
            return EXIT_INTERNAL
    except Terminated:  # SIGTERM met while one of those was said
        return EXIT_TERMINATED
    finally:
        _decided = True  # before the call below, where Python may run a SIGTERM's handler
        try:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        except ValueError:  # off the main thread: no handler was set (``main``)
            pass
