"""Issue 14, item 3: the audit log cannot be rewritten. REPLACE (SQLite) and TRUNCATE (PostgreSQL)
are refused by the database; every event carries the hash of the one before, and
``qmcredit audit verify`` (run as a user runs it) names the first event changed around the triggers."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DatabaseError

from qmcredit.service.db import alembic_config

from .conftest import example, variant

EXE = Path(sys.executable).parent / "qmcredit"


def _verify(url: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), "audit", "verify", "--database-url", url], capture_output=True, text=True, timeout=120)


def _file_some(office) -> None:
    for name in ("01", "02"):
        assert office.client.post("/api/v1/claims?submit=true", content=example(name), headers=office.auth("preparer")).status_code == 201


def test_the_database_refuses_to_rewrite_the_audit_log(office):
    _file_some(office)
    postgres = office.db.engine.dialect.name == "postgresql"
    attacks = (["TRUNCATE audit_events", "UPDATE audit_events SET actor = 'x'", "DELETE FROM audit_events"] if postgres else [
        "INSERT OR REPLACE INTO audit_events (id, at, actor, action, entity, entity_id) VALUES (1, '2020-01-01', 'x', 'y', 'z', '1')",
        "REPLACE INTO audit_events (id, at, actor, action, entity, entity_id) VALUES (2, '2020-01-01', 'x', 'y', 'z', '1')",
        "UPDATE audit_events SET actor = 'x'", "DELETE FROM audit_events"])
    for sql in attacks:
        with pytest.raises(DatabaseError, match="append-only"):
            with office.db.engine.begin() as conn:
                conn.execute(text(sql))
    result = _verify(office.url)
    assert result.returncode == 0 and "intact" in result.stdout, result.stderr


def test_audit_verify_names_the_first_event_changed_around_the_triggers(office):
    _file_some(office)
    with office.db.engine.begin() as conn:  # an owner of the database drops the trigger and edits an event
        if office.db.engine.dialect.name == "postgresql":
            conn.execute(text("DROP TRIGGER audit_events_append_only ON audit_events"))
        else:
            conn.execute(text("DROP TRIGGER audit_events_no_update"))
        third = conn.execute(text("SELECT id FROM audit_events ORDER BY id LIMIT 1 OFFSET 2")).scalar_one()
        conn.execute(text("UPDATE audit_events SET actor = 'someone else' WHERE id = :i"), {"i": third})
    result = _verify(office.url)
    assert result.returncode == 1, result.stdout
    assert f"audit log broken at event {third}: it was changed after it was written" in result.stderr


def test_concurrent_writers_keep_one_chain(office):
    """PostgreSQL writes concurrently: the chain lock keeps each event after the one before."""
    def file(i):
        office.client.post("/api/v1/claims", content=variant("01", ein=f"99-00000{i:02d}"), headers=office.auth("preparer"))
    threads = [threading.Thread(target=file, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _verify(office.url).returncode == 0


def test_events_written_before_the_chain_are_chained_by_the_migration(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    cfg = alembic_config(engine)
    command.upgrade(cfg, "0001")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, role, created_at) VALUES (1, 'p', 'preparer', '2026-01-01 00:00:00')"))
        for i in range(3):
            conn.execute(text("INSERT INTO audit_events (at, actor_id, actor, action, entity, entity_id, after) "
                              "VALUES (:at, 1, 'p', 'user.create', 'user', '1', '{}')"), {"at": f"2026-01-0{i + 1} 00:00:00.000000"})
    command.upgrade(cfg, "head")
    engine.dispose()
    result = _verify(url)
    assert result.returncode == 0 and "3 events" in result.stdout, result.stderr


def test_a_writer_waits_for_the_chain_only_to_commit(office):
    """PostgreSQL: the chain's lock is taken as a transaction commits, so a transaction that has
    recorded events but not committed holds up no other writer's events; both stay in one chain,
    each transaction's events after the ones committed before it."""
    if office.db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's writers take turns for their whole transaction")
    from types import SimpleNamespace

    from qmcredit.service.audit import record, verify
    from qmcredit.service.models import User

    with office.db.read() as session:
        user = session.query(User).filter_by(username="preparer").one()
        who = SimpleNamespace(id=user.id, username=user.username)
    recorded, other_done = threading.Event(), threading.Event()

    def slow(session):
        record(session, who, "test.slow", "user", who.id, None, {"n": 1})
        recorded.set()
        assert other_done.wait(timeout=30), "the other writer waited for this transaction"

    slow_thread = threading.Thread(target=office.db.write, args=(slow,))
    slow_thread.start()
    assert recorded.wait(timeout=30)
    office.db.write(lambda session: record(session, who, "test.quick", "user", who.id, None, {"n": 2}))
    other_done.set()
    slow_thread.join(timeout=30)
    with office.db.read() as session:
        count, broken = verify(session)
        actions = [a for (a,) in session.execute(text("SELECT action FROM audit_events ORDER BY id"))]
    assert broken is None and actions[-2:] == ["test.quick", "test.slow"]


def test_audit_verify_of_no_office_database_says_so_and_creates_none(tmp_path):
    """``qmcredit audit verify`` where there is no office database (the default ./var/ file
    absent, a file that is not one, a server that refuses, no URL at all): one line and exit 2,
    nothing created. Before, it made an empty ./var/qmcredit.sqlite3 and ended in an internal
    error (exit 3) printing SQL."""
    import os
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)")
    (tmp_path / "text.db").write_text("not a database")
    cases = {
        None: f"no claims office database at {tmp_path / 'var' / 'qmcredit.sqlite3'}",
        f"sqlite:///{tmp_path / 'missing.db'}": f"no claims office database at {tmp_path / 'missing.db'}",
        f"sqlite:///{other}": "not a claims office database (no audit log in it)",
        f"sqlite:///{tmp_path / 'text.db'}": "cannot be read: file is not a database",
        "nonsense": "--database-url: 'nonsense' is not a database URL",
        "postgresql+psycopg://someone:secret@127.0.0.1:1/qmcredit": "postgresql+psycopg://someone:***@127.0.0.1:1/qmcredit: cannot be read:",
    }
    env = {k: v for k, v in os.environ.items() if k != "QMCREDIT_DATABASE_URL"}
    before = sorted(p.name for p in tmp_path.iterdir())
    for url, said in cases.items():
        r = subprocess.run([str(EXE), "audit", "verify", *(["--database-url", url] if url else [])], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path, env=env)
        assert r.returncode == 2 and r.stderr.startswith("qmcredit: ") and said in r.stderr and r.stderr.count("\n") == 1, (url, r.stderr)
        assert "secret" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no database made
