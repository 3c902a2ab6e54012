"""Work spread over this process and local worker processes: the batch's partitions, a reform's,
and ``qmcredit compute``'s chunks of claim files. A ``Mapper`` runs a function over a list of
argument tuples and yields each result as it finishes (the work's own index travels in it)."""

from __future__ import annotations

import gc
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

Mapper = Callable[[Callable, list[tuple]], Iterable[Any]]


def serial_map(fn: Callable, args: list[tuple]) -> Iterator[Any]:
    """Run ``fn`` over ``args`` one after another in this process, each one's inputs let go of
    ``args`` as it is taken (a ``Mapper`` consumes ``args``: memory)."""
    while args:
        yield fn(*args.pop(0))


@contextmanager
def prompt_handoffs() -> Iterator[None]:
    """A 0.05 ms interpreter switch interval instead of 5 ms while this process's own work runs
    Python beside a thread that waits on something else: the polars thread reading a partition's
    rows needs the interpreter's lock back after each of its operations (with 5 ms, reading a
    million rows took three times as long beside busy Python as alone; with 0.05 ms, 1.4 times,
    benchmarks/batch.md), and the process pool's thread reads a worker's result from the pipe 64 KB
    a turn, each turn waiting for the lock: a worker waited 12-58 ms, writing a chunk of
    ``compute``'s results, before it could start its next (3-9 ms so, benchmarks/compute.md)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.00005))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _workers(jobs: int, start: Callable[[], None] | None) -> ProcessPoolExecutor:
    """``jobs`` - 1 worker processes, spawned now (not forked: polars' thread pool does not survive
    a fork), each given ``start`` first if given."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs - 1, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_starts)
    if start is not None:
        with _interrupts_held():
            for _ in range(jobs - 1):
                pool.submit(start)  # spawns a worker: it starts with Ctrl-C held, until it can answer it
    return pool


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held, not lost, while worker processes are spawned here: a spawned process
    starts with the signals its parent holds held, and a worker then takes Ctrl-C only once it can
    answer it (``_worker_starts``), not while its interpreter still starts, where it printed a
    traceback. This process takes a Ctrl-C held meanwhile as it lets go."""
    import signal

    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        if held is not None and signal.SIGINT not in held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


#: Workers started ahead (``start_ahead``): (jobs, start, the pool), until ``local_processes`` takes them.
_ahead: list[tuple[int, Callable[[], None], ProcessPoolExecutor]] = []


def start_ahead(jobs: int, start: Callable[[], None]) -> None:
    """The workers of a ``local_processes(jobs, start)`` to come, started now: their own start
    (polars, pydantic, the rules: about 0.2 s) overlaps what this process does before it gets
    there. Those not taken must be let go (``let_ahead_go``) before the interpreter ends."""
    _ahead.append((jobs, start, _workers(jobs, start)))


def let_ahead_go() -> None:
    """Workers started ahead and not taken (the command ended before it needed them: a usage
    error, a refused option) shut down once their start is done: left to the interpreter's end,
    their pool's cleanup ran after the modules it needs were gone, and printed a traceback."""
    while _ahead:
        _ahead.pop()[2].shutdown(wait=True, cancel_futures=True)


@contextmanager
def local_processes(jobs: int, start: Callable[[], None]) -> Iterator[Mapper]:
    """A ``Mapper`` over this process and ``jobs`` - 1 local worker processes, yielding results as
    they finish. This process works too, on a thread of its own, from the start, while the
    workers, spawned on entry (not forked: polars' thread pool does not survive a fork), run
    ``start``: a function of the module the work is in, so that they import it meanwhile. Each is
    given its next piece of work as it finishes one, so that they finish together however the
    pieces' costs differ; once none is left for them, the workers are let go, and exit while this
    process finishes its last (a second call, after ``OutOfClaimOrder``, starts new ones). The
    process machinery is imported here: ``compute`` of a few claims, which needs none, does not
    start with it. Workers started ahead for the same ``jobs`` and ``start`` (``start_ahead``) are
    taken instead of new ones; others are let go."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pools: list[ProcessPoolExecutor] = []
    stopping: dict[ProcessPoolExecutor, threading.Thread] = {}

    def workers(start: Callable[[], None] | None = None) -> ProcessPoolExecutor:
        pools.append(_workers(jobs, start))
        return pools[-1]

    def stop(pool: ProcessPoolExecutor, cancel: bool = False) -> None:
        """``pool`` shut down once, on a thread of its own, which waits for its workers and its
        manager thread to end (joined as the context ends). A shutdown that does not wait lets
        go of the manager thread, which a later one then no longer waits for: a command that
        ended while it still closed its pipes had the interpreter's exit write to a closed one."""
        if pool not in stopping:
            stopping[pool] = threading.Thread(target=pool.shutdown, kwargs={"wait": True, "cancel_futures": cancel}, name="qmcredit-stop-workers")
            stopping[pool].start()

    taken = None
    if _ahead:
        ahead_jobs, ahead_start, taken = _ahead.pop()
        pools.append(taken)
        if (ahead_jobs, ahead_start) != (jobs, start):  # started for other work: let go
            stop(taken, cancel=True)
            taken = None
    # started now (or ahead): they import the work's modules while this process reads its inputs and plans
    ready = [taken or workers(start)]

    with prompt_handoffs(), ThreadPoolExecutor(max_workers=1) as here:

        def mapper(fn: Callable, args: list[tuple]) -> Iterator[Any]:
            pool = ready.pop() if ready else workers()
            todo, running = deque(args), {}
            args.clear()  # each piece's inputs are held until it is done, not to the end (memory)
            # each is given its next when it is done: none idles while one works; and a worker holds
            # its next piece while it works (``AHEAD``) while more pieces are left than processes
            free = {here: 1, pool: AHEAD * (jobs - 1)}

            def give() -> None:
                """The next pieces to whoever is free; once none is left for the workers, they are let go."""
                for executor in (here, pool):
                    while todo and free[executor] > (0 if executor is here or len(todo) > jobs else (AHEAD - 1) * (jobs - 1)):
                        piece = todo.popleft()
                        running[executor.submit(fn, *piece) if executor is here else executor.submit(_piece, fn, *piece)] = executor
                        free[executor] -= 1
                if not todo and free[pool] == AHEAD * (jobs - 1):
                    stop(pool)  # nothing more for the workers: they exit while this process works

            try:
                give()
                while running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        free[running.pop(future)] += 1
                    give()  # before the results are handed on: a worker does not wait while this process takes in what it sent
                    for future in done:
                        yield future.result()
            finally:  # done, or given up (OutOfClaimOrder): the workers' queued pieces are dropped
                stop(pool, cancel=True)

        try:
            yield mapper
        finally:
            for pool in pools:
                stop(pool, cancel=True)
            for thread in stopping.values():
                thread.join()


#: Pieces a worker process holds at once while more are left than there are processes: the one it
#: works on and its next, queued in its pipe. Given only when it finished one, a worker waited for
#: this process to take in the finished piece and hand it the next, which needs the interpreter's
#: lock that this process's own piece holds: 40-50 ms a piece in ``compute`` (a chunk takes 0.2 s),
#: 0.9 s over a reform's 24 partitions at 142M rows. The last pieces are given one at a time, so
#: that the processes still finish together.
AHEAD = 2


#: Whether this worker process is running a piece (``_piece``): Ctrl-C stops it then, and only then.
_working = False
#: Whether this worker process has begun its first piece (the collector runs again from then on).
_begun = False


def _piece(fn: Callable, *args):
    """``fn(*args)`` in a worker, where Ctrl-C ends the piece (``_interrupted``). Before its first
    piece, the collector paused by ``_worker_starts`` runs again, what the worker's start imported
    frozen out of its reach (as the command's own process does, ``cli._started``)."""
    global _working, _begun
    if not _begun:
        _begun = True
        gc.freeze()
        gc.enable()
    _working = True
    try:
        return fn(*args)
    finally:
        _working = False


def _interrupted(signum, frame) -> None:
    """A worker's answer to Ctrl-C, which a terminal sends to every process of the command: the
    piece it is running stops (its ``KeyboardInterrupt`` goes back to this process as the piece's
    outcome, as any exception does), then the worker ends as the command shuts its pool down.
    Between pieces it is ignored: there, Python would print where the worker was stopped."""
    if _working:
        raise KeyboardInterrupt


def _worker_starts() -> None:
    """A worker's start: Ctrl-C answered by ``_interrupted``; the cyclic collector paused until its
    first piece (``_piece``). The worker's start imports polars, pydantic and the rules (its start
    task, and the modules its pieces' functions live in, as they are unpickled): hundreds of
    thousands of long-lived objects and no garbage, which the collector scanned again and again,
    30-40 ms of the 0.25 s a worker took to start (benchmarks/compute.md)."""
    import atexit
    import os
    import signal

    gc.disable()
    signal.signal(signal.SIGINT, _interrupted)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held while it was spawned (``_interrupts_held``)
    threading.Thread(target=_ends_with_the_command, daemon=True, name="qmcredit-command-watch").start()
    # Once its last piece's result is sent, nothing the worker holds is of use: it ends at once
    # rather than tear its interpreter down (polars, pydantic, the rules: 50-60 ms that the command
    # waited for at its end, shutting the pool down). Its output is flushed by then: the process's
    # own ending does that before the interpreter's exit, which calls this first.
    atexit.register(os._exit, 0)


def _ends_with_the_command() -> None:
    """A worker's watch on the command's process: once that is gone without shutting its workers
    down (killed, ended by a signal it does not answer, out of memory), the worker ends too, rather
    than wait for work for ever, holding its memory and the command's output open (a pipeline
    reading it never ended). The command's end closes the pipe its worker was started through:
    the worker's ``parent_process().sentinel``."""
    import multiprocessing
    import os
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is not None:
        wait([parent.sentinel])
        os._exit(1)
