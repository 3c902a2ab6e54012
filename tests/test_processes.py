"""Work on local worker processes (``processes.local_processes``) and ``compute --json``'s chunks
of claim files (``decided_files``; issue 18: the machine's cores for many claim files)."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
import threading

import pytest

from hypothesis import given
from hypothesis import strategies as st

from qmcredit.decided_files import CHUNKS_PER_PROCESS, chunks
from qmcredit.problems import ClaimError, Problem
from qmcredit.processes import local_processes


def test_local_processes_give_every_result_and_leave_no_thread_running():
    """Every piece's result, whichever process did it; when the context ends, every thread it
    started has ended (the workers' manager threads too: one still closing its pipes when the
    command ended had the interpreter's exit write to a closed one, ``Bad file descriptor``)."""
    before = threading.active_count()
    with local_processes(2, os.getpid) as run:
        assert sorted(run(operator.neg, [(k,) for k in range(12)])) == sorted(-k for k in range(12))
    assert threading.active_count() == before


@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("pieces", [0, 1, 2, 3, 4, 5, 13])
def test_every_piece_is_done_once_however_many_are_given_ahead(jobs, pieces):
    """A worker holds its next piece while it works (``AHEAD``) while more pieces are left than
    processes, and the last ones are given one at a time: every piece's result, once."""
    with local_processes(jobs, os.getpid) as run:
        assert sorted(run(operator.neg, [(k,) for k in range(pieces)])) == sorted(-k for k in range(pieces))


def test_a_worker_ends_without_losing_what_it_wrote():
    """A worker ends at once when the pool lets it go (no interpreter teardown), after its own
    process has flushed what it wrote: a worker's unflushed output still reaches the command's."""
    code = ("import os\nfrom qmcredit.processes import local_processes\n"
            "if __name__ == '__main__':\n"
            "    with local_processes(2, os.getpid) as run:\n"
            "        list(run(print, [(f'piece {k}',) for k in range(12)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.split("\n")[:-1]) == sorted(f"piece {k}" for k in range(12))


def _collector() -> tuple[int, bool, bool]:
    """Who ran the piece, and whether the cyclic collector runs there, with objects frozen."""
    import gc

    return os.getpid(), gc.isenabled(), gc.get_freeze_count() > 0


def test_a_worker_starts_with_the_collector_paused_and_works_with_it_running():
    """A worker imports its modules with the collector paused (issue 18: 30-40 ms of its start);
    from its first piece on the collector runs, what the start made frozen out of its reach."""
    with local_processes(2, os.getpid) as run:
        got = list(run(_collector, [()] * 8))
    workers = [g for g in got if g[0] != os.getpid()]
    assert workers and all(enabled and frozen for _, enabled, frozen in workers)


def test_a_claim_error_made_in_a_worker_reaches_this_process_whole():
    """A ``ClaimError`` pickles as its problems and source (an exception pickles its message)."""
    problems = [Problem("periods[0].end", "is before the start"), Problem("employees[3].hours", "is not a number")]
    with local_processes(2, os.getpid) as run:
        got = list(run(ClaimError, [(problems, "a.json")] * 4))
    assert all(e.problems == problems and e.source == "a.json" and str(e) == str(ClaimError(problems, "a.json")) for e in got)


@given(st.integers(0, 5000), st.integers(1, 8))
def test_chunks_cover_the_files_in_order_and_end_in_halves(files, processes):
    cut = chunks(files, processes)
    assert cut == [] if files == 0 else [a for a, _ in cut] == [0, *(b for _, b in cut[:-1])] and cut[-1][1] == files
    assert all(a < b for a, b in cut)
    if processes == 1:
        assert len(cut) == min(files, 1)
    elif files >= 2 * processes * CHUNKS_PER_PROCESS:
        sizes = [b - a for a, b in cut]
        assert len(cut) == processes * (CHUNKS_PER_PROCESS + 1) and max(sizes[-2 * processes:]) <= max(sizes) // 2 + 1


def test_workers_started_ahead_are_taken_by_the_work_they_were_started_for():
    """``start_ahead``: the workers of a ``local_processes`` to come, started before it; taken
    when the work asks for as many with the same start, else let go (and new ones started)."""
    from qmcredit import processes

    before = threading.active_count()
    for ahead_jobs in (2, 3):
        processes.start_ahead(ahead_jobs, os.getpid)
        with local_processes(2, os.getpid) as run:
            assert sorted(run(operator.neg, [(k,) for k in range(12)])) == sorted(-k for k in range(12))
        assert processes._ahead == []
    processes.start_ahead(2, os.getpid)
    processes.let_ahead_go()  # never taken: shut down, nothing left running
    assert processes._ahead == [] and threading.active_count() == before


def test_workers_ahead_reads_the_command_line_as_compute_does():
    """``decided_files.VALUED_OPTIONS`` are ``compute``'s options that take a value: what
    ``workers_ahead`` steps over to find the claim files."""
    import typer

    from qmcredit.cli import app
    from qmcredit.decided_files import VALUED_OPTIONS

    group = typer.main.get_command(app)
    compute = group.commands.get("compute") or group.get_command(None, "compute")
    valued = {o for p in compute.params if p.param_type_name == "option" and not p.is_flag for o in (*p.opts, *p.secondary_opts)}
    assert valued == VALUED_OPTIONS


@pytest.mark.parametrize("argv, processes", [
    (["compute", "--json", "BIG"], 2),
    (["compute", "--json", "--jobs", "2", "BIG"], 2),
    (["compute", "--json", "--jobs=1", "BIG"], None),
    (["compute", "--json", "--jobs", "many", "BIG"], None),
    (["compute", "BIG"], None),  # the worksheet: one process
    (["compute", "--json", "--help", "BIG"], None),
    (["validate", "--json", "BIG"], None),
    (["compute", "--json", "--roster", "BIG", "SMALL"], None),  # an option's value is not a claim file
    (["compute", "--json", "--", "BIG"], 2),
])
def test_workers_start_ahead_only_for_compute_json_of_many_claim_files(tmp_path, monkeypatch, argv, processes):
    from qmcredit import decided_files

    big, small = tmp_path / "big.json", tmp_path / "small.json"
    with big.open("wb") as f:
        f.truncate(2 * decided_files.BYTES_PER_PROCESS)
    small.write_text("{}")
    started = []
    monkeypatch.setattr(decided_files, "start_ahead", lambda n, start: started.append(n))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    decided_files.workers_ahead([{"BIG": str(big), "SMALL": str(small)}.get(a, a) for a in argv])
    assert started == ([] if processes is None else [processes])


def test_a_command_that_ends_before_its_workers_are_taken_lets_them_go(tmp_path):
    """``compute --json`` of many claim files starts its workers before its command line is read;
    ended by a usage error or a refused option before it needs them, it says so and exits with 2,
    with no traceback from the workers' pool and no process left running."""
    from qmcredit.decided_files import BYTES_PER_PROCESS

    from .test_cli import EXE

    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(2 * BYTES_PER_PROCESS)
    for bad in (["--no-such-option"], ["--trace", str(tmp_path / "t.txt")]):
        p = subprocess.run([str(EXE), "compute", "--json", *bad, str(big)], capture_output=True, text=True, timeout=120,
                           start_new_session=True)
        assert p.returncode == 2 and "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
        assert ("No such option" if bad[0] == "--no-such-option" else "must end in .parquet") in p.stderr


def test_workers_that_cannot_be_started_ahead_leave_nothing_behind(tmp_path):
    """No process can be started (a limit reached): ``workers_ahead`` starts none and says
    nothing (the command tries again, and says why if it still cannot); nothing is left to
    print a traceback as the interpreter ends."""
    from qmcredit.decided_files import BYTES_PER_PROCESS

    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(2 * BYTES_PER_PROCESS)
    code = ("import multiprocessing.context as c, sys\nfrom qmcredit import processes\nfrom qmcredit.decided_files import workers_ahead\n"
            "def refused(process):\n    raise OSError(11, 'Resource temporarily unavailable')\n"
            "c.SpawnProcess._Popen = staticmethod(refused)\n"
            f"workers_ahead(['compute', '--json', '--jobs', '2', {str(big)!r}])\nprint(len(processes._ahead))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (0, "0\n", "")


def _held() -> tuple[int, bool]:
    import signal

    return os.getpid(), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_ctrl_c_is_held_only_while_workers_are_spawned():
    """A worker is spawned with Ctrl-C held, so that one pressed while its interpreter starts
    does not print a traceback there, and takes it from its start on (``_worker_starts``); this
    process holds it no longer than the spawning."""
    import signal

    with local_processes(2, os.getpid) as run:
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        got = list(run(_held, [()] * 8))
    assert not any(held for _, held in got) and any(pid != os.getpid() for pid, _ in got)
