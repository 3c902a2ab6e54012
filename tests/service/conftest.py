"""Fixtures of the service tests: a real database (a SQLite file, and PostgreSQL when
QMCREDIT_TEST_POSTGRES_URL names one; each test gets its own schema), the application on it, and
signed-in users of each role."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from qmcredit.service import Settings, create_app
from qmcredit.service.auth import create_user, issue_token
from qmcredit.service.db import Database, scratch_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UPLOAD_LIMIT = 2 * 1024 * 1024


def _postgres_base() -> str:
    url = os.environ.get("QMCREDIT_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("QMCREDIT_REQUIRE_SERVICES") == "1":
            pytest.fail("QMCREDIT_TEST_POSTGRES_URL is not set, and QMCREDIT_REQUIRE_SERVICES=1 requires PostgreSQL")
        pytest.skip("QMCREDIT_TEST_POSTGRES_URL not set: PostgreSQL tests skipped")
    return url


DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@contextmanager
def fresh_database(kind: str, folder: Path):
    """A fresh, empty database: a SQLite file in ``folder``, or a schema of its own on the
    PostgreSQL server (dropped afterwards)."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'service.sqlite3'}"
        return
    with scratch_schema(_postgres_base()) as url:
        yield url


@pytest.fixture(params=DATABASES)
def database_url(request, tmp_path):
    with fresh_database(request.param, tmp_path) as url:
        yield url


@dataclass
class Office:
    """The application on a fresh database, with a token for each demo role."""

    client: TestClient
    db: Database
    tokens: dict[str, str]
    url: str

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


USERS = (("preparer", "preparer"), ("preparer2", "preparer"), ("examiner", "examiner"), ("auditor", "auditor"))


def make_office(url: str) -> Office:
    db = Database(url)
    app = create_app(Settings(database_url=url, upload_limit=UPLOAD_LIMIT, session_secret="test-secret"), db)

    def users(session):
        # no passwords here: argon2 takes a third of a second per hash (test_access signs in with one)
        return {name: issue_token(session, create_user(session, name, role), "tests") for name, role in USERS}

    tokens = db.write(users)
    return Office(TestClient(app, raise_server_exceptions=False), db, tokens, url)


@pytest.fixture
def office(database_url):
    office = make_office(database_url)
    with office.client:
        yield office
    office.db.dispose()


def example(name: str = "01") -> bytes:
    return next(EXAMPLES.glob(f"{name}*.claim.json")).read_bytes()


@dataclass
class LiveOffice:
    """The application served by uvicorn on a loopback port, for tests that need real concurrency."""

    base: str
    office: Office


@pytest.fixture
def live_office(office):
    import threading
    import time

    import uvicorn

    config = uvicorn.Config(office.client.app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield LiveOffice(f"http://127.0.0.1:{port}", office)
    server.should_exit = True
    thread.join(timeout=10)


def post_at_once(base: str, requests: list[tuple[bytes, dict]]) -> list:
    """Each (claim body, headers) posted to ``/api/v1/claims`` by its own client, all released at
    one barrier; the answers in the requests' order."""
    import threading

    import httpx

    barrier = threading.Barrier(len(requests))
    out: list = [None] * len(requests)

    def send(i: int) -> None:
        body, headers = requests[i]
        with httpx.Client(base_url=base, timeout=120) as client:
            barrier.wait()
            out[i] = client.post("/api/v1/claims", content=body, headers={"content-type": "application/json"} | headers)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def variant(name: str = "01", *, ein: str | None = None, operations_began: str | None = None, address: str | None = None) -> bytes:
    """An example claim with another taxpayer id, start of operations or address (text edits only,
    so every number stays as written)."""
    import json as _json

    doc = _json.loads(example(name))
    text = example(name).decode()
    if ein:
        text = text.replace(f'"{doc["taxpayer"]["id"]}"', f'"{ein}"', 1)
    if operations_began:
        text = text.replace(f'"{doc["location"]["operations_began"]}"', f'"{operations_began}"', 1)
    if address:
        text = text.replace(f'"{doc["location"]["address"]}"', f'"{address}"', 1)
    return text.encode()
