"""Load test of the claims office on loopback: concurrent claim submissions against a real server.

Starts ``qmcredit.service.cli.serve`` (uvicorn, one process) on 127.0.0.1 with a fresh database,
posts ``--claims`` distinct claims (the bundled example 01 under new taxpayer ids) from
``--concurrency`` client threads, then checks that every request was answered, none with a 5xx,
and that every claim is stored. Bounded in count and in time (``--deadline`` seconds). Also
reports the server's CPU time per claim (all its processes), a figure a loaded machine blurs less
than the throughput. ``--workers n`` serves from n processes (``QMCREDIT_WORKERS``).

    .venv/bin/python benchmarks/service_load.py --claims 400 --concurrency 16
    .venv/bin/python benchmarks/service_load.py --database-url postgresql+psycopg://postgres@127.0.0.1:55433/postgres
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil

from qmcredit.service.cli import default_workers

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "01-expansion-cap-carryforward.claim.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(database_url: str, workdir: str) -> tuple[subprocess.Popen, str, str]:
    """The office as ``qmcredit serve`` runs it; returns the process, its address and the preparer's token."""
    port = free_port()
    code = ("from qmcredit.service.cli import serve; "
            f"serve(host='127.0.0.1', port={port}, database_url={database_url!r}, seed_examples=True)")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    # every worker up before the clients connect: a worker still starting gets none of their connections (kept alive)
    token, deadline, starting = None, time.monotonic() + 60, default_workers()
    while time.monotonic() < deadline and starting:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"preparer\s+Authorization: Bearer (\S+)", line)
        token = m.group(1) if m else token
        starting -= "Application startup complete" in line
    if token is None:
        proc.kill()
        raise RuntimeError("the server did not start")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # keep its pipe drained
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(f"{base}/openapi.json", timeout=2)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    return proc, base, token


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of a process and its children (uvicorn's workers)."""
    root = psutil.Process(pid)
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def run(base: str, token: str, claims: int, concurrency: int, deadline: float, server_pid: int | None = None) -> dict:
    template = EXAMPLE.read_text()
    ein = json.loads(template)["taxpayer"]["id"]
    bodies = [template.replace(f'"{ein}"', f'"77-{i:07d}"', 1).encode() for i in range(claims)]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors: list[str] = []
    lock = threading.Lock()
    next_index = iter(range(claims))
    stop_at = time.monotonic() + deadline

    def worker() -> None:
        with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {token}",
                                                               "content-type": "application/json"}) as client:
            while time.monotonic() < stop_at:
                with lock:
                    i = next(next_index, None)
                if i is None:
                    return
                t0 = time.perf_counter()
                try:
                    r = client.post("/api/v1/claims", content=bodies[i])
                    code = r.status_code
                except httpx.HTTPError as e:
                    code = 0
                    with lock:
                        errors.append(f"{type(e).__name__}: {e}")
                elapsed = time.perf_counter() - t0
                with lock:
                    latencies.append(elapsed)
                    statuses[code] = statuses.get(code, 0) + 1

    cpu0 = cpu_seconds(server_pid) if server_pid else None
    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    server_cpu = cpu_seconds(server_pid) - cpu0 if server_pid else None
    stored = httpx.get(f"{base}/api/v1/claims?limit=1000&offset=0", headers={"Authorization": f"Bearer {token}"}, timeout=60).json()
    stored_new = sum(1 for c in stored if c["taxpayer_ein"].startswith("77-"))
    if claims > 1000 - 6:
        stored_new = None
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    return {
        "claims": claims, "concurrency": concurrency, "sent": len(lat), "statuses": statuses, "errors": errors[:5],
        "stored": stored_new, "wall_s": round(wall, 2), "throughput_per_s": round(len(lat) / wall, 1),
        "p50_ms": round(pct(0.50), 1), "p95_ms": round(pct(0.95), 1), "p99_ms": round(pct(0.99), 1),
        "max_ms": round(lat[-1] * 1000, 1) if lat else None,
        "lost": claims - statuses.get(201, 0), "server_errors": sum(n for c, n in statuses.items() if c >= 500),
        "server_cpu_ms_per_claim": round(server_cpu * 1000 / max(1, len(lat)), 1) if server_cpu is not None else None,
        "load_average": round(os.getloadavg()[0], 1),
    }


@contextmanager
def fresh_database(url: str | None, work: str):
    """A SQLite file in ``work``, or a new schema on the PostgreSQL server ``url`` (dropped after)."""
    if url is None:
        yield f"sqlite:///{work}/load.sqlite3"
        return
    from qmcredit.service.db import scratch_schema

    with scratch_schema(url, "load") as scratch:
        yield scratch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--deadline", type=float, default=300.0, help="stop sending after this many seconds")
    ap.add_argument("--database-url", default=None, help="default: a fresh SQLite file in a temporary folder")
    ap.add_argument("--workers", type=int, default=None, help="server processes (QMCREDIT_WORKERS); default: the server's (qmcredit serve --help)")
    args = ap.parse_args()
    if args.workers is not None:
        os.environ["QMCREDIT_WORKERS"] = str(args.workers)
    with tempfile.TemporaryDirectory() as work, fresh_database(args.database_url, work) as url:
        proc, base, token = start_server(url, work)
        try:
            result = run(base, token, args.claims, args.concurrency, args.deadline, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    result["database"] = url.split(":", 1)[0].split("+", 1)[0]
    result["workers"] = default_workers()
    print(json.dumps(result))
    return 0 if result["lost"] == 0 and result["server_errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
