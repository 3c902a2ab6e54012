"""Claim files decided as ``qmcredit compute --json`` writes them, a chunk of files at a time: each
chunk loaded, decided and written by the one code path (``loaders.load_claims``,
``core.decide_many``, ``determination.to_json_lines``), in this process or, for many files, on
local worker processes too (``processes.local_processes``: the machine's cores). A claim's line is
the text it has when decided alone, so the chunks' lines, put back in the files' order, are the
lines of one pass over every file."""

from __future__ import annotations

import codecs
import gc
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from .problems import ClaimError
from .processes import local_processes, serial_map, start_ahead

if TYPE_CHECKING:
    import polars as pl

    from .determination import Determination
    from .imports import Settings

#: Bytes of claim files that make a process worth its start (an interpreter with polars, pydantic
#: and the rules: about 0.3 s of a core, and its share of the work waits for it): 1,000 claims of
#: 50 employees (25 MB) take 1.71 s in one process and 1.19 s in two, 400 (10 MB) the same in
#: either, 200 (5 MB) or 210 small ones (2 MB) longer in two (benchmarks/compute.md). A claim
#: whose employees are in a payroll table counts its JSON header only: it gets fewer processes.
BYTES_PER_PROCESS = 6_000_000
#: Chunks a process, so that the processes finish together however the files' sizes differ.
CHUNKS_PER_PROCESS = 4

#: A claim file's outcome: its determination's JSON line, or why it was refused.
Outcome = str | ClaimError


def decided(claims: list, explain: bool = True) -> list[Determination | ClaimError]:
    """Each claim's ``Determination`` (``explain``: with its explanation, B1), or the
    ``ClaimError`` of a claim that a later stage than loading refuses (so that one claim never
    takes the others down with it)."""
    from .core import decide_many

    try:
        return decide_many(claims, explain)
    except ClaimError:
        out = []
        for c in claims:
            try:
                out.append(decide_many([c], explain)[0])
            except ClaimError as e:
                out.append(e)
        return out


def load_and_decide(paths: Sequence[Path], settings: Settings | None, explain: bool = True) -> tuple[list, list[Determination | ClaimError]]:
    """The claim files ``paths`` loaded (each a ``Claim`` or its ``ClaimError``) and decided in one
    pass (``decided``): each file's ``Determination``, or the ``ClaimError`` loading or deciding it
    gave, in order."""
    from .loaders import load_claims

    loaded = load_claims(list(paths), settings)
    dets = iter(decided([c for c in loaded if not isinstance(c, ClaimError)], explain))
    return loaded, [item if isinstance(item, ClaimError) else next(dets) for item in loaded]


def decide_chunk(k: int, paths: Sequence[Path], settings: Settings | None, explain: bool,
                 rows_file: str | None, spill: str | None = None) -> tuple[int, list[Outcome | None], pl.DataFrame | str | None, str | None]:
    """Chunk ``k`` of claim files: each file's ``Outcome`` in order, and with ``rows_file`` (the
    trace's Parquet file, named in each line) the chunk's employee-months (``trace_table``). The
    documents, rows and determinations hold no cycles: the cyclic collector stays paused. In a
    worker process, with ``spill`` (a folder), the chunk's bulk is written to a file there and
    named in the result: its lines (``_lines_written``), or with ``rows_file`` its employee-months
    (``_table_written``)."""
    from .determination import to_json_lines, trace_table

    gc.disable()
    _, results = load_and_decide(paths, settings, explain)
    good = [d for d in results if not isinstance(d, ClaimError)]
    texts = to_json_lines(good, explain, rows_file)
    outcomes: list[Outcome | None] = [r if isinstance(r, ClaimError) else next(texts) for r in results]
    table = trace_table(good) if rows_file is not None else None
    if spill is not None:
        import multiprocessing  # imported by then: ``spill`` is given only with worker processes

        if multiprocessing.parent_process() is not None:  # a worker's chunk, not this process's own
            if table is not None:
                return k, outcomes, _table_written(table, Path(spill) / f"trace-{k}.arrow"), None
            outcomes, lines = _lines_written(outcomes, Path(spill) / f"lines-{k}")
            return k, outcomes, table, lines
    return k, outcomes, table, None


def _table_written(table: pl.DataFrame, path: Path) -> str:
    """A worker's employee-months written to ``path`` as Arrow IPC (``_table_taken`` takes them
    back) rather than sent through the process pool's pipe: a chunk of 125 claims of 50 employees
    is 133,000 rows, which took 65 ms to pickle and 30 ms to unpickle (24 MB), and longer to pass
    through the pipe; as a file, 19 ms to write and 30 ms to read (benchmarks/compute.md)."""
    table.write_ipc(path)
    return str(path)


def _table_taken(path: str) -> pl.DataFrame:
    """The employee-months a worker wrote to ``path`` (``_table_written``), read back (copied,
    not mapped) and the file removed."""
    import polars as pl

    table = pl.read_ipc(path, memory_map=False)
    os.unlink(path)
    return table


def _lines_written(outcomes: list[Outcome | None], path: Path) -> tuple[list[Outcome | None], str]:
    """A worker's lines written to ``path`` (UTF-8, each ended by a newline) rather than sent back
    through the process pool's pipe: a chunk of 125 claims with their trace is 28 MB of lines,
    which the worker took 80-130 ms to send, 64 KB at a time, and this process as long to take in
    and write out again; the file is written in 20 ms and copied to the output as it is
    (``copy_lines``; benchmarks/compute.md). Each line's place in ``outcomes``: None."""
    with path.open("wb") as file:
        for o in outcomes:
            if isinstance(o, str):
                file.write(o.encode())
                file.write(b"\n")
    return [o if isinstance(o, ClaimError) else None for o in outcomes], str(path)


def lines_read(outcomes: list[Outcome | None], path: str | None) -> list[Outcome]:
    """``outcomes`` whole: a worker's lines (``_lines_written``) read back into their places."""
    if path is None:
        return outcomes
    lines = iter(Path(path).read_bytes().decode().split("\n"))  # a JSON line holds no newline (``str.splitlines`` would also split at U+2028)
    return [next(lines) if o is None else o for o in outcomes]


def copy_lines(path: str, out) -> bool:
    """A worker's lines file (``_lines_written``) copied to ``out``, a text stream, as its bytes
    when ``out`` writes UTF-8 to a byte stream (the lines' text then is the same); False, and
    nothing written, when it does not."""
    raw = getattr(out, "buffer", None)
    if raw is None or codecs.lookup(out.encoding or "ascii").name != "utf-8":
        return False
    out.flush()
    with open(path, "rb") as file:
        shutil.copyfileobj(file, raw, 1 << 20)
    return True


def processes_for(paths: Sequence[Path], jobs: int) -> int:
    """How many processes decide the claim files ``paths``: at most ``jobs``, one per
    ``BYTES_PER_PROCESS`` of them (a file that cannot be read counts nothing: loading it says why)."""
    if jobs < 2:
        return 1
    size, enough = 0, jobs * BYTES_PER_PROCESS
    for path in paths:
        try:
            size += Path(path).stat().st_size
        except OSError:
            pass
        if size >= enough:  # the rest need not be looked at (read twice: by ``workers_ahead``, then by the command)
            break
    return max(1, min(jobs, size // BYTES_PER_PROCESS))


def chunks(files: int, processes: int) -> list[tuple[int, int]]:
    """The (start, end) of each chunk of ``files`` for ``processes``: all of them in one for one
    process, else ``CHUNKS_PER_PROCESS`` a process, the last turn cut in halves, so that the
    processes finish within half a chunk of each other."""
    if processes == 1:
        return [(0, files)] if files else []
    turns = processes * CHUNKS_PER_PROCESS
    last = (turns - processes) * files // turns  # where the last turn starts
    cuts = [k * files // turns for k in range(turns - processes)] + [last + k * (files - last) // (2 * processes) for k in range(2 * processes)]
    bounds = sorted(set(cuts)) + [files]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def decide_files(paths: Sequence[Path], settings: Settings | None, explain: bool, rows_file: str | None,
                 jobs: int = 1) -> Iterator[tuple[list[Outcome | None], pl.DataFrame | None, str | None]]:
    """Each chunk's outcomes (and employee-months, with ``rows_file``), in the files' order, as
    soon as the chunk and those before it are done: one chunk of every file in this process, or
    ``CHUNKS_PER_PROCESS`` a process over ``processes_for(paths, jobs)`` processes. A worker's
    chunk without ``rows_file`` comes with its lines in a file (``_lines_written``; each line's
    place in its outcomes None: ``lines_read``, ``copy_lines``), which is removed when the next
    chunk is asked for; with ``rows_file``, its employee-months come through a file
    (``_table_written``), read back and removed as the chunk arrives (``_table_taken``). This
    module imports the rules only when a chunk is decided, so that the workers, started first,
    import them while this process does."""
    n = processes_for(paths, jobs)
    if n > 1:
        _sharing_cores()
        import tempfile
    with tempfile.TemporaryDirectory(prefix="qmcredit-compute-") if n > 1 else nullcontext() as spill:
        args = [(k, paths[a:b], settings, explain, rows_file, spill) for k, (a, b) in enumerate(chunks(len(paths), n))]
        done: dict[int, tuple[list[Outcome | None], pl.DataFrame | None, str | None]] = {}
        following = 0
        with local_processes(n, _started) if n > 1 else nullcontext(serial_map) as run:
            for k, outcomes, table, lines in run(decide_chunk, args):
                if isinstance(table, str):  # a worker's employee-months, in a file of ``spill``
                    table = _table_taken(table)
                done[k] = (outcomes, table, lines)
                while following in done:
                    chunk = done.pop(following)
                    yield chunk
                    if chunk[2] is not None:
                        os.unlink(chunk[2])
                    following += 1


def _sharing_cores() -> None:
    """The processes share the cores: polars works on one thread in each (read as polars loads,
    and by the workers as they start)."""
    os.environ.setdefault("POLARS_MAX_THREADS", "1")


#: ``compute``'s options that take a value, which ``workers_ahead`` steps over (a test checks
#: them against the command's own).
VALUED_OPTIONS = frozenset({"--trace", "--columns", "--mapping", "--sheet", "--roster", "--date-format", "--jobs"})


def workers_ahead(argv: Sequence[str]) -> None:
    """For ``qmcredit compute --json`` of many claim files (``argv``: the command line after the
    program's name), the worker processes that ``decide_files`` will ask for, started before the
    command line is read (``processes.start_ahead``): their start then overlaps this process's
    import of typer and the commands (50 ms of the 0.2 s before a worker could start its first
    chunk, benchmarks/compute.md). ``argv`` is read only as far as that needs: the claim files
    given (their sizes; none is opened) and ``--jobs``. A command line it cannot follow starts
    nothing, and workers the command does not take are let go."""
    if argv[:1] != ["compute"] or "--json" not in argv or "--help" in argv:
        return
    jobs, paths, args = os.cpu_count() or 1, [], iter(argv[1:])
    for arg in args:
        if arg == "--":
            paths += args
            break
        name, given, value = arg.partition("=")
        if name in VALUED_OPTIONS:
            value = value if given else next(args, "")
            if name == "--jobs":
                try:
                    jobs = int(value)
                except ValueError:
                    return
        elif not arg.startswith("-"):
            paths.append(arg)
    n = processes_for([Path(p) for p in paths], jobs)
    if n > 1:
        _sharing_cores()
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # as the command's own process has it (``cli.main``)
        try:
            start_ahead(n, _started)
        except OSError:  # no process could be started now: the command tries again, and says why if it cannot
            pass


def _started() -> None:
    """A worker process's first task (``processes.local_processes``): the loaders, the rules and
    the determination's writers imported while this process imports them too."""
    from . import determination, loaders  # noqa: F401
