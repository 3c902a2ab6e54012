"""The ``qmcredit`` command (and ``python -m qmcredit``): ``cli.main``, imported only when run.

A local worker process (``processes.local_processes``: the batch's, a reform's, ``compute``'s) is
spawned, and runs the command's script again as its main module without running the command: with
the script importing this module rather than ``cli``, the worker does not import the command line
(typer and its commands, 40-50 ms of its start) that it never uses. ``compute --json`` of many
claim files starts its workers first, before the command line is read (``workers_ahead``); and
``compute`` ends without the interpreter's teardown once its output is flushed
(``cli.ends_at_once``)."""

import sys


def main() -> None:
    try:
        _run()
    except KeyboardInterrupt:  # Ctrl-C before the command line could answer it (``cli.main`` does from then on)
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None


def _run() -> None:
    from .decided_files import workers_ahead
    from .processes import let_ahead_go

    workers_ahead(sys.argv[1:])  # ``compute --json`` of many claims: its workers start before the command line is read
    try:
        try:
            from . import cli

            cli.main()
        finally:
            let_ahead_go()
    except SystemExit as e:
        if cli.ends_at_once and isinstance(e.code, int | None):
            _end_at_once(e.code or 0)
        raise


def _end_at_once(code: int) -> None:
    """The process ended with ``code`` once its output is flushed, without the interpreter's
    teardown (``cli.ends_at_once``). Output that can no longer be written (a closed pipe) is
    let go, as the command line's ``BrokenPipeError`` is."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
