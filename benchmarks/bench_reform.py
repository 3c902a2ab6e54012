"""Benchmark of ``qmcredit reform`` against ``qmcredit batch`` (issue 17 item 4), run by hand;
figures go in benchmarks/reform.md.

For each size (employee-month rows) it uses the data of ``bench_batch.py`` (``qmcredit synth``,
seed 1, in benchmarks/data/) and measures, interleaved in each round, each in its own process as
a user runs it (wall time, peak memory of the process tree):

- batch: ``qmcredit batch`` alone;
- reform: ``qmcredit reform`` with the baseline and one reform of the amounts
  (examples/reforms/double_amounts.toml: P1-P4's counts are shared with the baseline);
- reform_hours: the baseline and one reform of the hour test (examples/reforms/hours_120.toml:
  P1-P4 counted again, from the rows in memory).

It reports the best run of each against the best batch, and each round's reform over the same
round's batch with the median of those ratios (the runs of a round are side by side).

    python benchmarks/bench_reform.py 1e6 1e7 [1.5e8] [--rounds 3]

With ``--before SRC`` (the ``src`` folder of another checkout), processor time instead of wall
time, for a loaded machine: each round runs the batch, the reform under ``SRC`` and the reform
under this checkout, interleaved, and reports each one's user+sys seconds (its process and its
children's, ``resource.RUSAGE_CHILDREN``): medians and ranges.

    python benchmarks/bench_reform.py 1e6 --before /tmp/base/src --rounds 5 [--data DIR] [--out DIR]

With ``--workbook FOLDER`` (a ``qmcredit reform`` output folder) and ``--before SRC``: the
processor time of ``analysis.outputs.write_workbook`` alone over that folder's tables (sheets in
its workbook's order), before and after, interleaved, each in a fresh process: microseconds a cell.

    python benchmarks/bench_reform.py --workbook /tmp/out-reform-10000000 --before /tmp/base/src --rounds 5
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from bench_batch import DATA, HERE, ensure_data, measure

COMMAND = """
import sys
from qmcredit.cli import main
d = {data!r}
sys.argv = ["qmcredit", {cmd!r}, d + "/claims.parquet", d + "/payroll.parquet", "--periods", d + "/periods.parquet", "--out", {out!r}, *{extra!r}]
main()
"""
REFORMS = HERE.parent / "examples" / "reforms"
RUNS = {
    "batch": ("batch", []),
    "reform": ("reform", ["--reform", str(REFORMS / "double_amounts.toml")]),
    "reform_hours": ("reform", ["--reform", str(REFORMS / "hours_120.toml")]),
}


def bench(rows: int, rounds: int) -> dict:
    d = ensure_data(rows)
    runs: dict[str, list[dict]] = {k: [] for k in RUNS}
    for _ in range(rounds):  # interleaved: the machine's drift falls on every contender alike
        for name, (cmd, extra) in RUNS.items():
            runs[name].append(measure(COMMAND.format(data=str(d), cmd=cmd, out=str(DATA / f"out-{name}-{rows}"), extra=extra)))
    best = {k: min(r["wall_s"] for r in v) for k, v in runs.items()}
    # each round's reform over that round's batch (run side by side, so that the machine's drift
    # between rounds, up to a tenth here, falls on both), and the middle of those ratios
    pairs = {k: [round(r["wall_s"] / b["wall_s"], 3) for r, b in zip(runs[k], runs["batch"])] for k in ("reform", "reform_hours")}
    parts = {k: json.loads(min(v, key=lambda r: r["wall_s"])["stdout"])["seconds"] for k, v in runs.items()}  # what the command says it spent
    return {
        "rows": json.loads(runs["batch"][-1]["stdout"])["rows"], "rounds": rounds,
        **{f"{k}_s": v for k, v in best.items()}, **{f"{k}_all_s": [r["wall_s"] for r in v] for k, v in runs.items()},
        **{f"{k}_peak_mb": max(r["peak_mb"] for r in v) for k, v in runs.items()}, **{f"{k}_seconds": v for k, v in parts.items()},
        "reform_over_batch": round(best["reform"] / best["batch"], 2), "reform_hours_over_batch": round(best["reform_hours"] / best["batch"], 2),
        **{f"{k}_over_batch_rounds": v for k, v in pairs.items()},
        **{f"{k}_over_batch_median": round(statistics.median(v), 3) for k, v in pairs.items()},
    }


def cpu(code: str, src: str | None) -> tuple[float, dict]:
    """``code`` run in a fresh interpreter (``src`` first on its path, if given): its processor
    seconds (user + sys, its children's included) and what it printed."""
    env = dict(os.environ, PYTHONPATH=src) if src else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2), json.loads(done.stdout)


def bench_cpu(data: Path, out: Path, before: str, after: str | None, rounds: int) -> dict:
    """Processor time, interleaved: the batch, the reform before (``before``) and after (``after``, default: this checkout)."""
    runs = {"batch": ("batch", [], after), "reform_before": ("reform", RUNS["reform"][1], before), "reform_after": ("reform", RUNS["reform"][1], after)}
    got: dict[str, list[float]] = {k: [] for k in runs}
    seconds = {}
    for _ in range(rounds):
        for name, (cmd, extra, src) in runs.items():
            t, printed = cpu(COMMAND.format(data=str(data), cmd=cmd, out=str(out / f"out-{name}"), extra=extra), src)
            got[name].append(t)
            seconds[name] = printed["seconds"]
            print(f"{data.name} round {len(got[name])}: {name} {t} s", file=sys.stderr, flush=True)  # a long run's rounds so far
    med = {k: statistics.median(v) for k, v in got.items()}
    return {"data": str(data), "rounds": rounds, "load_average": os.getloadavg(), **{f"{k}_cpu_s": v for k, v in got.items()},
            **{f"{k}_median_s": v for k, v in med.items()}, "last_seconds": seconds,
            "reform_over_batch_before": round(med["reform_before"] / med["batch"], 2), "reform_over_batch_after": round(med["reform_after"] / med["batch"], 2)}


WORKBOOK = """
import json, re, sys, time, zipfile
from pathlib import Path
import polars as pl
from qmcredit.analysis.outputs import write_workbook
folder = Path({folder!r})
names = re.findall(r'<sheet name="([^"]+)"', zipfile.ZipFile(folder / "analysis.xlsx").read("xl/workbook.xml").decode())
tables = {{n: pl.read_parquet(folder / f"{{n}}.parquet") for n in names}}
started = time.process_time()
write_workbook(tables, Path({out!r}))
print(json.dumps({{"seconds": time.process_time() - started, "cells": sum(t.height * t.width for t in tables.values())}}))
"""


def bench_workbook(folder: Path, out: Path, before: str, after: str | None, rounds: int) -> dict:
    """The workbook of ``folder``'s tables written before and after, interleaved: us a cell."""
    out.mkdir(parents=True, exist_ok=True)
    got: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(rounds):
        for name, src in (("before", before), ("after", after)):
            _, printed = cpu(WORKBOOK.format(folder=str(folder), out=str(out / f"{name}.xlsx")), src)
            got[name].append(round(printed["seconds"] / printed["cells"] * 1e6, 2))
    return {"folder": str(folder), "cells": printed["cells"], "rounds": rounds, "load_average": os.getloadavg(),
            **{f"{k}_us_a_cell": v for k, v in got.items()}, **{f"{k}_median_us": statistics.median(v) for k, v in got.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=float, help="employee-month rows, e.g. 1e6 1e7 1.5e8")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is compared, and each round's pair")
    ap.add_argument("--before", help="processor time: the src folder of the code to compare with (main, say)")
    ap.add_argument("--after", help="with --before: the src folder of the code measured (default: the installed qmcredit)")
    ap.add_argument("--data", type=Path, default=DATA, help="where the rows-N folders are (with --before)")
    ap.add_argument("--out", type=Path, default=DATA, help="where the runs write (with --before)")
    ap.add_argument("--workbook", type=Path, help="with --before: a reform output folder whose workbook is written again, before and after")
    args = ap.parse_args()
    if args.workbook and args.before:
        print(json.dumps(bench_workbook(args.workbook, args.out / "workbook", args.before, args.after, args.rounds)), flush=True)
        return
    if args.before:
        for size in args.sizes:
            print(json.dumps(bench_cpu(args.data / f"rows-{int(size)}", args.out / f"rows-{int(size)}", args.before, args.after, args.rounds)), flush=True)
        return
    import qmcredit

    compileall.compile_dir(Path(qmcredit.__file__).parent, quiet=1)
    for size in args.sizes:
        print(json.dumps(bench(int(size), args.rounds)), flush=True)


if __name__ == "__main__":
    main()
