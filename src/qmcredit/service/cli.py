"""``qmcredit serve``: run the claims office (wired into the main CLI by ``qmcredit.cli``)."""

from __future__ import annotations

import os
from typing import Annotated, NoReturn

import typer

from .settings import Settings

#: The most server processes started when neither ``--workers`` nor ``QMCREDIT_WORKERS`` says: one
#: a core up to this (each holds the rules, polars and the web stack, ~200 MB).
MOST_WORKERS = 4
#: The most server processes that may be asked for.
MAX_WORKERS = 64


def default_workers() -> int:
    """``QMCREDIT_WORKERS``, else one server process a core of this machine's, at most
    ``MOST_WORKERS``. Deciding a claim is processor work and a process's
    Python runs on one core at a time: at 16 clients on 2 cores, SQLite, one process took
    92-95 filings a second, two 116-117 (benchmarks/service_load.md)."""
    given = os.environ.get("QMCREDIT_WORKERS", "").strip()
    if given:
        if not given.isdigit() or not 1 <= int(given) <= MAX_WORKERS:
            raise typer.BadParameter(f"QMCREDIT_WORKERS is {given!r}: give a whole number of server processes from 1 to {MAX_WORKERS}")
        return int(given)
    return min(MOST_WORKERS, os.cpu_count() or 1)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8313,
    database_url: Annotated[str | None, typer.Option(
        help="SQLAlchemy database URL; default $QMCREDIT_DATABASE_URL, else a SQLite file under ./var/.")] = None,
    seed_examples: Annotated[bool, typer.Option(
        "--seed-examples/--no-seed-examples",
        help="Create demo users (preparer, preparer2, examiner, auditor), file the bundled example claims, print tokens.")] = True,
    workers: Annotated[int | None, typer.Option(
        min=1, max=MAX_WORKERS, help=f"Server processes; default $QMCREDIT_WORKERS, else one a core, at most {MOST_WORKERS} (on SQLite their writers take turns, docs/service.md).")] = None,
) -> None:
    """Start the claims office: the HTTP API under /api/v1, OpenAPI at /openapi.json."""
    workers = workers or default_workers()
    import uvicorn

    from .app import collector_past_start_up, create_app
    from sqlalchemy.exc import SQLAlchemyError

    from .db import Database
    from .seed import DEMO_PASSWORD, seed

    _bindable(host, port)
    settings = Settings.from_env(database_url=database_url)
    _url(settings.database_url)
    try:
        db = Database(settings.database_url)
        app = create_app(settings, db)
    except SQLAlchemyError as e:  # the server refused, the file cannot be made or is not a database
        _refuse(f"{_shown(settings.database_url)}: cannot be opened: {_first_line(e)}")
    address = f"http://{host}:{port}"
    typer.echo(f"qmcredit claims office: open {address}/ in a browser to sign in (the pages, docs/pages.md)")
    typer.echo(f"HTTP API: {address}/api/v1  (OpenAPI: {address}/openapi.json, docs: {address}/docs)")
    typer.echo(f"database: {db.engine.url.render_as_string(hide_password=True)}")
    if seed_examples:
        seeded = seed(db)
        for name in seeded.filed:
            typer.echo(f"filed example claim {name}")
        for line in seeded.skipped:
            typer.echo(f"skipped example {line}")
        typer.echo(f"demo users (password {DEMO_PASSWORD!r}; sign in at {address}/signin) and their API tokens for this run:")
        for user, token in seeded.tokens.items():
            typer.echo(f"  {user:10s} Authorization: Bearer {token}")
        typer.echo(f"try: curl -H 'Authorization: Bearer {seeded.tokens['examiner']}' {address}/api/v1/claims")
    if workers > 1:  # worker processes build their own app from the same settings
        os.environ.update(QMCREDIT_DATABASE_URL=settings.database_url, QMCREDIT_SESSION_SECRET=settings.session_secret)
        # the workers share the cores: each decides its claims with a share of them (polars reads this at import)
        os.environ.setdefault("POLARS_MAX_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
        uvicorn.run("qmcredit.service.app:app_from_env", factory=True, host=host, port=port, workers=workers, log_level="info")
    else:
        collector_past_start_up()
        uvicorn.run(app, host=host, port=port, log_level="info")


audit_app = typer.Typer(help="The claims office's audit log.", no_args_is_help=True)


@audit_app.command("verify")
def audit_verify(
    database_url: Annotated[str | None, typer.Option(
        help="SQLAlchemy database URL; default $QMCREDIT_DATABASE_URL, else the SQLite file under ./var/.")] = None,
) -> None:
    """Check the audit log's hash chain: exit 0 when every event is as written, 1 naming the
    first event that was changed, removed or inserted."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import SQLAlchemyError

    from .audit import verify
    from .db import Database
    from .models import AuditEvent

    url = _existing_database(database_url)
    db = Database(url)
    try:
        if not inspect(db.engine).has_table(AuditEvent.__tablename__):
            _refuse(f"{_shown(url)}: not a claims office database (no audit log in it); give the office's --database-url")
        with db.read() as session:
            count, broken = verify(session)
    except SQLAlchemyError as e:  # the server refused, the file is not a database
        _refuse(f"{_shown(url)}: cannot be read: {_first_line(e)}")
    finally:
        db.dispose()
    if broken is not None:
        typer.echo(f"audit log broken at event {broken[0]}: it {broken[1]} ({count} events)", err=True)
        raise typer.Exit(1)
    typer.echo(f"audit log intact: {count} events, each chained to the one before")


def _refuse(message: str) -> NoReturn:
    """A database that cannot be used: one line, exit 2 (``serve``, ``audit verify``)."""
    typer.echo(f"qmcredit: {message}", err=True)
    raise typer.Exit(2)


def _bindable(host: str, port: int) -> None:
    """``host``:``port`` refused (one line, exit 2) when the office could not listen there: a port
    in use, an address not this machine's (uvicorn logged it and ended with 3, the code of an
    internal error, after setting up the database)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        _refuse(f"--host {host!r}: not an address of this machine ({e.strerror})")
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a port left in TIME_WAIT is free
        try:
            s.bind(address)
        except OSError as e:
            _refuse(f"cannot listen on {host}:{port}: {e.strerror.lower()}; give another --port (or --host)")


def _url(url: str):
    """``url`` parsed (SQLAlchemy's ``URL``), refused (one line, exit 2) when it is no database URL."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url)
    except ArgumentError:
        _refuse(f"--database-url: {url!r} is not a database URL; e.g. sqlite:////srv/qmcredit/var/qmcredit.sqlite3 or "
                "postgresql+psycopg://user@host/qmcredit")


def _shown(url: str) -> str:
    """The database URL as it may be shown: its password hidden."""
    return _url(url).render_as_string(hide_password=True)


def _first_line(e: Exception) -> str:
    """What the database's driver said (SQLAlchemy wraps it with SQL and a link), its first line."""
    return str(getattr(e, "orig", None) or e).splitlines()[0]


def _existing_database(given: str | None) -> str:
    """The office's database URL (``--database-url``, else $QMCREDIT_DATABASE_URL, else the SQLite
    file under ./var/), refused (exit 2, one line) when it is no URL or names a SQLite file that
    does not exist: reading the log never creates a database (an empty one was made, and its
    missing table reported as an internal error)."""
    from pathlib import Path

    url = given or os.environ.get("QMCREDIT_DATABASE_URL") or f"sqlite:///{(Path('var') / 'qmcredit.sqlite3').resolve()}"
    parsed = _url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") and not Path(parsed.database).is_file():
        _refuse(f"no claims office database at {parsed.database}; give the office's --database-url (or set QMCREDIT_DATABASE_URL)")
    return url
