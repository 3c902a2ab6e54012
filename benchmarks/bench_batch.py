"""Benchmark of ``qmcredit batch`` (issue 3), run by hand; figures go in benchmarks/batch.md.

For each size (employee-month rows) it generates data with ``qmcredit synth`` (seed 1, kept in
benchmarks/data/), then measures, each in its own subprocess (wall time; peak memory as the
largest sum of the resident sets of the process and all its children, sampled every 20 ms):

- batch: the ``qmcredit batch`` command on the Parquet tables, as a user runs it (defaults: one
  worker process per core);
- floors: the two measurement-only floors of ``../shared/bench`` (DuckDB and polars, written
  independently of the project: P1-P5 averages per claim and period, exact, honouring the options
  that change them), run as their README says, interleaved with the batch in each round; the
  fastest floor of each round is the one compared, and its averages are checked to equal the
  batch's ``average_*`` columns exactly (numerators over 1,680,000,000,000);
- reference (``--reference``): the project's own floor query of 2026-11-30
  (``reference_floor.sql``), the yardstick of issue 12 item 6's 1.72x/1.69x, interleaved as well;
  timed only (it ignores two options, so its averages are not compared);
- single: ``qmcredit.decide`` claim by claim (load the claim, decide it) on a random sample of
  claims, timed per claim and extrapolated to all claims (reading the tables is not counted);
- export (``--export``): the same batch given the payroll as a payroll system's CSV export
  (``export.csv``: its own headers, months as MM/YYYY, statuses in capitals, written once beside
  the data), read through ``--payroll-columns``, interleaved as well; every claim's figures must
  equal the batch's on the table (the problems' texts name the export's lines instead).

    python benchmarks/bench_batch.py 1e6 1e7 [1.5e8] [--sample 200] [--rounds 3] [--floors ../shared/bench] [--reference] [--export]
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
ROWS_PER_CLAIM = 461  # mean payroll rows per generated claim (seed 1, measured on 4,000 claims)

BATCH = """
import sys
from qmcredit.cli import main
d = {data!r}
sys.argv = ["qmcredit", "batch", d + "/claims.parquet", d + "/payroll.parquet", "--periods", d + "/periods.parquet", "--out", {out!r}]
main()
"""

#: the measurement floors written independently of the project (../shared/bench, with its README):
#: P1-P5 averages per claim and period, exact, honouring year_one_start and part_time_excludes_temporary
FLOORS = {"duckdb": "floor_duckdb.py", "polars": "floor_polars.py"}

#: the project's floor query of 2026-11-30, run with DuckDB (issue 12 item 6's yardstick)
REFERENCE = """
import duckdb
duckdb.sql("".join(line for line in open({sql!r}) if not line.startswith("--")).format(claims={claims!r}, payroll={payroll!r}, out={out!r}))
"""

SINGLE = """
import json, random, time
from pathlib import Path

import psutil
import polars as pl
from qmcredit.batch.tables import header_doc, periods_by_claim, read_tables, scan_payroll
from qmcredit import decide
from qmcredit.loaders import claim_from_dict
from qmcredit.problems import ClaimError
d = Path({data!r})
table, periods = read_tables(d / "claims.parquet", d / "periods.parquet")
ids = random.Random(5).sample(table.get_column("claim_id").to_list(), min({sample}, table.height))
rows = scan_payroll(d / "payroll.parquet").filter(pl.col("claim_id").is_in(ids)).with_columns(
    pl.format("payroll.parquet line {{}}", pl.col("_line")).alias("source")).drop("_line").collect()
parts = rows.partition_by("claim_id", as_dict=True, include_key=False)
claim_periods = periods_by_claim(periods.filter(pl.col("claim_id").is_in(ids)))
docs = {{r["claim_id"]: header_doc(r, claim_periods.get(r["claim_id"]))[0] for r in table.filter(pl.col("claim_id").is_in(ids)).iter_rows(named=True)}}
spent = 0.0
for cid in ids:
    t = time.perf_counter()
    try:
        decide(claim_from_dict(docs[cid], payroll=parts.get((cid,), rows.clear().drop("claim_id")), source=cid))
    except ClaimError:
        pass
    spent += time.perf_counter() - t
print("PERCLAIM", spent / len(ids), table.height)
"""


def measure(code: str | None = None, argv: list[str] | None = None) -> dict:
    """Run ``code`` (or the script ``argv``) in a fresh interpreter: wall seconds, peak memory (MB)
    of its process tree, stdout."""
    t = time.perf_counter()
    cmd = [sys.executable, "-c", code] if argv is None else [sys.executable, *argv]
    proc = psutil.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [proc, *proc.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.02)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(stderr[-3000:])
    return {"wall_s": round(wall, 2), "peak_mb": round(peak / 2**20), "stdout": stdout}


EXPORT = """
import sys
from qmcredit.cli import main
d = {data!r}
sys.argv = ["qmcredit", "batch", d + "/claims.parquet", d + "/export.csv", "--periods", d + "/periods.parquet", "--out", {out!r},
            "--payroll-columns", 'claim_id="Client"']
main()
"""


def ensure_export(d: Path) -> Path:
    """``d``'s payroll table as a payroll system exports it (``EXPORT``'s input), written once."""
    path = d / "export.csv"
    if not path.exists():
        import polars as pl

        pl.scan_parquet(d / "payroll.parquet").select(
            pl.col("claim_id").alias("Client"), pl.col("employee_id").alias("Emp #"),
            (pl.col("month").str.slice(5, 2) + "/" + pl.col("month").str.slice(0, 4)).alias("Period"),
            pl.col("hours").alias("Hours Worked"), pl.col("basis").str.to_uppercase().alias("Status"),
            pl.col("ownership_interest").alias("Owner"), pl.col("owner_relation").alias("Relation"),
        ).sink_csv(path)
    return path


def same_figures(batch_out: Path, export_out: Path) -> bool:
    """Whether every claim's row of the two runs is the same but for its problems' texts."""
    import polars as pl

    a, b = (pl.read_parquet(o / "claims.parquet").drop("problems") for o in (batch_out, export_out))
    return a.equals(b)


def ensure_data(rows: int) -> Path:
    d = DATA / f"rows-{rows}"
    if not (d / "payroll.parquet").exists():
        from qmcredit.batch import synth

        t = time.perf_counter()
        synth.write(d, max(1, rows // ROWS_PER_CLAIM), 1)
        print(f"generated {d} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return d


def agreement(batch_out: Path, floor_out: Path) -> int:
    """Claim-periods whose floor average differs from the batch's: the floor's exact numerator over
    1,680,000,000,000 (12 months x 140 hours x 10^9) written as the batch writes a position figure
    (``money.exact_decimal``) must be the batch's text. 0 when they agree everywhere."""
    from fractions import Fraction

    import polars as pl

    from qmcredit.money import exact_decimal

    names = ("average_base", "average_year_one", "average_year_two")
    batch = pl.read_parquet(batch_out / "claims.parquet", columns=["claim_id", *names])
    floor = {(c, p): n for c, p, n in pl.read_parquet(floor_out, columns=["claim_id", "period", "avg_num"]).iter_rows()}
    wrong = 0
    for claim_id, *averages in batch.iter_rows():
        for period, text in enumerate(averages):
            if text is not None and exact_decimal(Fraction(int(floor.get((claim_id, period), 0)), 1_680_000_000_000)) != text:
                wrong += 1
    return wrong


def bench(rows: int, sample: int, rounds: int, floors: Path, reference: bool = False, export: bool = False) -> dict:
    d = ensure_data(rows)
    out = DATA / f"out-{rows}"
    runs = {"batch": [], **{k: [] for k in FLOORS}}
    if reference:
        runs["reference"] = []
    if export:
        ensure_export(d)
        runs["export"] = []
    for _ in range(rounds):  # interleaved: the machine's drift falls on every contender alike
        runs["batch"].append(measure(BATCH.format(data=str(d), out=str(out))))
        for name, script in FLOORS.items():
            runs[name].append(measure(argv=[str(floors / script), str(d / "claims.parquet"), str(d / "payroll.parquet"), str(DATA / f"floor-{name}-{rows}.parquet")]))
        if reference:
            runs["reference"].append(measure(REFERENCE.format(sql=str(HERE / "reference_floor.sql"), claims=str(d / "claims.parquet"),
                                                              payroll=str(d / "payroll.parquet"), out=str(DATA / f"reference-{rows}.parquet"))))
        if export:
            runs["export"].append(measure(EXPORT.format(data=str(d), out=str(DATA / f"out-export-{rows}"))))
    summary = json.loads(runs["batch"][-1]["stdout"])
    claims, actual_rows = summary["claims"], summary["rows"]
    best = {k: min(r["wall_s"] for r in v) for k, v in runs.items()}
    peak = {k: max(r["peak_mb"] for r in v) for k, v in runs.items()}
    fastest = min(FLOORS, key=best.get)
    from_export = {"export_s": best["export"], "export_peak_mb": peak["export"], "export_over_batch": round(best["export"] / best["batch"], 2),
                   "export_same_figures": same_figures(out, DATA / f"out-export-{rows}")} if export else {}
    single = measure(SINGLE.format(data=str(d), sample=sample))
    per_claim = float(single["stdout"].split("PERCLAIM")[1].split()[0])
    single_total = per_claim * claims
    versus_reference = {"reference_s": best["reference"], "reference_peak_mb": peak["reference"],
                        "batch_over_reference": round(best["batch"] / best["reference"], 2)} if reference else {}
    return {
        "rows": actual_rows, "claims": claims, "rounds": rounds,
        "batch_s": best["batch"], "batch_peak_mb": peak["batch"],
        **{f"floor_{k}_s": best[k] for k in FLOORS}, **{f"floor_{k}_peak_mb": peak[k] for k in FLOORS},
        "fastest_floor": fastest,
        "floor_disagreements": {k: agreement(out, DATA / f"floor-{k}-{rows}.parquet") for k in FLOORS},
        "single_per_claim_ms": round(per_claim * 1000, 2), "single_est_s": round(single_total, 1),
        "batch_over_fastest_floor": round(best["batch"] / best[fastest], 2),
        "single_over_batch": round(single_total / best["batch"], 1),
        **versus_reference, **from_export,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="+", type=float, help="employee-month rows, e.g. 1e6 1e7 1.5e8")
    ap.add_argument("--sample", type=int, default=200, help="claims timed one by one for the claim-by-claim estimate")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the batch and each floor; the best of each is compared")
    ap.add_argument("--floors", type=Path, default=HERE.parent.parent / "shared" / "bench", help="folder of the independent floors (floor_duckdb.py, floor_polars.py)")
    ap.add_argument("--reference", action="store_true", help="also run the project's floor query of 2026-11-30 (reference_floor.sql), issue 12 item 6's yardstick")
    ap.add_argument("--export", action="store_true", help="also run the batch on the payroll as a CSV export (export.csv, --payroll-columns)")
    args = ap.parse_args()
    # qmcredit's bytecode, as `pip install` leaves it (DuckDB's and polars' are there already): an
    # editable install under PYTHONDONTWRITEBYTECODE recompiles the package in every process.
    import qmcredit

    compileall.compile_dir(Path(qmcredit.__file__).parent, quiet=1)
    for size in args.sizes:
        print(json.dumps(bench(int(size), args.sample, args.rounds, args.floors, args.reference, args.export)), flush=True)


if __name__ == "__main__":
    main()
