"""Benchmark of `qmcredit compute --json` (issues 2 and 18): claims per second over 1,000 claims of
50 employees (with the trace in the JSON, with it in a Parquet side file, without it), the start-up
of one small claim, and the time for one claim of 2,500 to 40,000 employees; also how time grows
with employee-months. Run by hand (`make bench`); each run adds a dated section at the top of
benchmarks/compute.md (the earlier sections stay, for comparison).

Each run is a fresh process, as a user runs it (start-up included), timed over `--repeat` runs
(best and median reported), with the processor time it used (user + system, the steadier figure
on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXE = Path(sys.executable).parent / "qmcredit"
TITLE = "# `qmcredit compute --json` benchmark"


def generate(out: Path, claims: int, employees: int) -> list[Path]:
    if not out.is_dir() or len(list(out.glob("*.json"))) != claims:
        subprocess.run([sys.executable, str(HERE / "make_claims.py"), str(out), "--claims", str(claims), "--employees", str(employees)], check=True)
    return sorted(out.glob("*.json"))


def timed(args: list[str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall and processor seconds of each of ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        t = time.perf_counter()
        subprocess.run([str(EXE), *args], check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return walls, cpus


#: One claim decided again and again in one process, after a first time: its own work (loading,
#: deciding, writing), without the start-up; the fewest seconds of ``n`` runs.
WARM = """
import contextlib, io, sys, time
from qmcredit.cli import main
def run():
    sys.argv = ["qmcredit", *{args!r}]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
        except SystemExit:
            pass
run()
times = []
for _ in range({n}):
    t = time.perf_counter()
    run()
    times.append(time.perf_counter() - t)
print(min(times))
"""
#: The libraries the rules and the command line are written with, imported by a bare interpreter:
#: the start-up no code of the project's can go below.
LIBRARIES = "import polars, pydantic, typer"
#: The same, with pydantic's own import, which happens only at its first model (``import pydantic``
#: alone defers it): the floor one claim really stands on.
WITH_A_MODEL = "import polars, pydantic, typer; pydantic.create_model('M', x=(int, ...))"


def warm(args: list[str], n: int = 20) -> float:
    """The fewest seconds ``qmcredit ARGS`` takes in a process that has run it once already."""
    out = subprocess.run([sys.executable, "-c", WARM.format(args=args, n=n)], capture_output=True, text=True, check=True)
    return float(out.stdout)


def bare(code: str, repeat: int) -> tuple[list[float], list[float]]:
    """Wall and processor seconds of ``python -c CODE`` run ``repeat`` times."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return walls, cpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--largest", type=int, default=40000, help="the largest one-claim size to run (2,500, 10,000, 40,000)")
    ap.add_argument("--note", default="", help="a sentence on the conditions (the commit, the machine's load)")
    a = ap.parse_args()
    rows = []
    many = generate(a.data / "compute-1000x50", 1000, 50)
    with tempfile.TemporaryDirectory() as tmp:
        runs = (("", []), (", --no-explain", ["--no-explain"]), (", --trace FILE.parquet", ["--trace", str(Path(tmp) / "trace.parquet")]))
        for label, flag in runs:
            wall, cpu = timed(["compute", "--json", *flag, *map(str, many)], a.repeat)
            rows.append((f"1,000 claims x 50 employees{label}", min(wall), statistics.median(wall), min(cpu), f"{1000 / min(wall):.0f} claims/s ({1000 / min(cpu):.0f} a processor second)"))
    small = HERE.parent / "examples" / "01-expansion-cap-carryforward.claim.json"
    wall, cpu = timed(["compute", "--json", str(small)], a.repeat)
    work = warm(["compute", "--json", str(small)])
    rows.append(("1 claim (examples/01), start to finish", min(wall), statistics.median(wall), min(cpu),
                 f"start-up {min(wall) - work:.2f} s: all but the claim's own work, {work * 1000:.0f} ms in a warm process"))
    wall, cpu = bare(LIBRARIES, a.repeat)
    rows.append((f"`python -c '{LIBRARIES}'` (the libraries' start-up)", min(wall), statistics.median(wall), min(cpu), "no project code"))
    wall, cpu = bare(WITH_A_MODEL, a.repeat)
    rows.append(("the same and one pydantic model (pydantic's own import)", min(wall), statistics.median(wall), min(cpu), "no project code"))
    wall, cpu = timed(["--help"], a.repeat)
    rows.append(("`qmcredit --help` (the start-up alone)", min(wall), statistics.median(wall), min(cpu), ""))
    single = []
    for n in (n for n in (2500, 10000, 40000) if n <= a.largest):
        one = generate(a.data / f"compute-1x{n}", 1, n)
        wall, cpu = timed(["compute", "--json", str(one[0])], a.repeat)
        single.append((n * 36, min(wall)))
        rows.append((f"1 claim x {n:,} employees", min(wall), statistics.median(wall), min(cpu), f"{n * 36 / min(wall) / 1000:.0f}k employee-months/s, start-up included"))
    growth = [(t2 - t1) / (m2 - m1) * 1e6 for (m1, t1), (m2, t2) in zip(single, single[1:])]
    head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    section = [
        f"## {time.strftime('%Y-%m-%d %H:%M')} at `{head}`", "",
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores; each figure a fresh process (start-up included), best and median of {a.repeat} runs; "
        f"processor: the fewest user + system seconds of a run. Generated by `benchmarks/make_claims.py` (seed 313). {a.note}".rstrip(), "",
        "| run | best (s) | median (s) | processor (s) | rate |", "|---|---:|---:|---:|---|",
        *(f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f} | {r[4]} |" for r in rows),
        "",
    ]
    if growth:
        section += ["Growth: from one claim size to the next each added employee-month costs "
                    + " and ".join(f"{g:.1f} µs" for g in growth) + ".", ""]
    path = HERE / "compute.md"
    old = path.read_text().removeprefix(TITLE).lstrip("\n") if path.is_file() else ""
    path.write_text("\n".join([TITLE, "", *section, old]).rstrip("\n") + "\n")
    print("\n".join(section))


if __name__ == "__main__":
    main()
