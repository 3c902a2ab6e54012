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

    python benchmarks/bench_reform.py 1e6 1e7 [1.5e8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import compileall
import json
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
    parts = {k: json.loads(min(v, key=lambda r: r["wall_s"])["stdout"])["seconds"] for k, v in runs.items()}  # what the command says it spent
    return {
        "rows": json.loads(runs["batch"][-1]["stdout"])["rows"], "rounds": rounds,
        **{f"{k}_s": v for k, v in best.items()}, **{f"{k}_all_s": [r["wall_s"] for r in v] for k, v in runs.items()},
        **{f"{k}_peak_mb": max(r["peak_mb"] for r in v) for k, v in runs.items()}, **{f"{k}_seconds": v for k, v in parts.items()},
        "reform_over_batch": round(best["reform"] / best["batch"], 2), "reform_hours_over_batch": round(best["reform_hours"] / best["batch"], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="+", type=float, help="employee-month rows, e.g. 1e6 1e7 1.5e8")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is compared")
    args = ap.parse_args()
    import qmcredit

    compileall.compile_dir(Path(qmcredit.__file__).parent, quiet=1)
    for size in args.sizes:
        print(json.dumps(bench(int(size), args.rounds)), flush=True)


if __name__ == "__main__":
    main()
