"""The database connection: engine, schema migrations (Alembic), and one transaction per change.

SQLite (the default) serialises writers: every transaction begins ``IMMEDIATE`` so two
submissions never interleave, and waits (``busy_timeout``) instead of failing. PostgreSQL runs
them concurrently; the unique and foreign keys of ``models`` settle any race, and ``write``
retries the whole unit of work once such a key refused it, so the retry sees what won.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

try:
    import fcntl
except ImportError:  # Windows has none: there the processes queue in SQLite's busy handler
    fcntl = None

MIGRATIONS = Path(__file__).with_name("migrations")
T = TypeVar("T")


def make_engine(url: str, begin: str = "BEGIN IMMEDIATE") -> Engine:
    """An engine; for SQLite, ``begin`` is the statement that opens each transaction."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # let the "begin" hook below issue BEGIN itself
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            # WAL with synchronous=NORMAL: a commit is not synced to disk, the WAL is at checkpoints;
            # the database stays consistent through a crash of the process or of the machine, and a
            # power cut can lose only the last commits (SQLite's documented trade; PostgreSQL syncs)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):
            conn.exec_driver_sql(begin)

        return engine
    return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)


def alembic_config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return cfg


def migrate(engine: Engine) -> None:
    """Bring the schema up to the newest migration."""
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class WriterQueue:
    """SQLite's writers, one at a time: this process's threads queue on a lock and, for a database
    file, the processes (``QMCREDIT_WORKERS``) on an exclusive ``flock`` of a file beside it
    (``<database>.writers``), which the kernel hands to the next waiter as soon as it is released."""

    def __init__(self, database: str | None):
        self._threads = threading.Lock()
        self._file = None if fcntl is None or not database or database == ":memory:" or database.startswith("file:") else f"{database}.writers"
        self._fd: int | None = None
        self._pid = 0  # a forked process opens its own (a lock is shared through an inherited file)

    def __enter__(self) -> None:
        self._threads.acquire()
        if self._file is None:
            return
        try:
            if self._fd is None or self._pid != os.getpid():
                self._fd, self._pid = os.open(self._file, os.O_RDWR | os.O_CREAT, 0o600), os.getpid()
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise

    def __exit__(self, *exc) -> None:
        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def close(self) -> None:
        with self._threads:
            if self._fd is not None and self._pid == os.getpid():
                os.close(self._fd)
            self._fd = None


class Database:
    """The engine and its sessions; ``write`` runs a unit of work as one transaction."""

    def __init__(self, url: str):
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        # SQLite readers open a plain (deferred) transaction: in WAL mode they never wait for a writer.
        self.read_engine = make_engine(url, "BEGIN") if self.engine.dialect.name == "sqlite" else self.engine
        self.read_sessions = sessionmaker(self.read_engine, expire_on_commit=False)
        # SQLite has one writer at a time: queue the writers on a lock, which wakes the next at once,
        # rather than on SQLite's busy handler, which polls with growing sleeps.
        self._writers = WriterQueue(self.engine.url.database) if self.engine.dialect.name == "sqlite" else nullcontext()

    @contextmanager
    def read(self):
        """A session for reading only: closing it rolls back whatever it began."""
        with self.read_sessions() as session:
            yield session

    def read_connection(self) -> Connection:
        """A connection for one quick read without the ORM's session (signing a request in):
        closing it rolls back whatever it began."""
        return self.read_engine.connect()

    def write(self, work: Callable[[Session], T], retries: int = 2) -> T:
        """Run ``work(session)`` in one transaction: all of it is committed or none of it.
        A unique or foreign key that refused a row written concurrently reruns the work, which
        then sees the winner's rows and answers accordingly."""
        for attempt in range(retries + 1):
            try:
                with self._writers, self.sessions() as session, session.begin():
                    return work(session)
            except (IntegrityError, OperationalError) as exc:
                if attempt == retries or not _retryable(exc):
                    raise
        raise AssertionError("unreachable")

    def dispose(self) -> None:
        self.engine.dispose()
        self.read_engine.dispose()
        if isinstance(self._writers, WriterQueue):
            self._writers.close()


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, IntegrityError):
        return True
    text = str(getattr(exc, "orig", exc)).lower()
    return "deadlock" in text or "could not serialize" in text or "database is locked" in text


@contextmanager
def scratch_schema(url: str, prefix: str = "t") -> Iterator[str]:
    """A URL for a new, empty schema of its own on the PostgreSQL server ``url``, dropped with
    everything in it afterwards (tests and the load benchmark run side by side without sharing)."""
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
