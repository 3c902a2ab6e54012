"""The ``qmcredit`` command (and ``python -m qmcredit``): ``cli.main``, imported only when run.

A local worker process (``processes.local_processes``: the batch's, a reform's, ``compute``'s) is
spawned, and runs the command's script again as its main module without running the command: with
the script importing this module rather than ``cli``, the worker does not import the command line
(typer and its commands, 40-50 ms of its start) that it never uses."""


def main() -> None:
    from .cli import main as run

    run()


if __name__ == "__main__":
    main()
