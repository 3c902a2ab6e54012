"""The ``qmcredit`` command (and ``python -m qmcredit``): ``cli.main``, imported only when run.

A local worker process (``processes.local_processes``: the batch's, a reform's, ``compute``'s) is
spawned, and runs the command's script again as its main module without running the command: with
the script importing this module rather than ``cli``, the worker does not import the command line
(typer and its commands, 40-50 ms of its start) that it never uses. ``compute --json`` of many
claim files starts its workers first, before the command line is read (``workers_ahead``)."""


def main() -> None:
    import sys

    from .decided_files import workers_ahead
    from .processes import let_ahead_go

    workers_ahead(sys.argv[1:])  # ``compute --json`` of many claims: its workers start before the command line is read
    try:
        from .cli import main as run

        run()
    finally:
        let_ahead_go()


if __name__ == "__main__":
    main()
