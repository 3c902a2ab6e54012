"""Benchmark of ``qmcredit batch`` (issue 3), run by hand; figures go in benchmarks/batch.md.

For each size (employee-month rows) it generates data with ``qmcredit synth`` (seed 1, kept in
benchmarks/data/), then measures, each in its own subprocess (wall time; peak memory as the
largest sum of the resident sets of the process and all its children, sampled every 20 ms):

- batch: the ``qmcredit batch`` command on the Parquet tables, as a user runs it (defaults: one
  worker process per core);
- floor: one DuckDB SQL query computing only the per-claim monthly full-time and equivalent counts
  and the three averages (P2-P5 with W1-W3 read off the claims table), written to Parquet;
- single: ``qmcredit.decide`` claim by claim (load the claim, decide it) on a random sample of
  claims, timed per claim and extrapolated to all claims (reading the tables is not counted).

    python benchmarks/bench_batch.py 1e6 1e7 [1.5e8] [--sample 200]
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

FLOOR_SQL = """
COPY (
WITH c AS (
  SELECT claim_id, year(d) * 12 + month(d) - 1 + 1 - 12 AS base_idx
  FROM (SELECT claim_id, TRY_CAST(operations_began AS DATE) AS d FROM read_parquet('{claims}')) WHERE d IS NOT NULL
), p AS (
  SELECT claim_id, employee_id,
         TRY_CAST(substr(month, 1, 4) AS INTEGER) * 12 + TRY_CAST(substr(month, 6, 2) AS INTEGER) - 1 AS idx,
         TRY_CAST(hours AS DECIMAL(18, 6)) AS h,
         ownership_interest = 'false' AND owner_relation IS NULL AS emp, basis = 'permanent' AS perm
  FROM read_parquet('{payroll}')
), j AS (
  SELECT p.*, (idx - base_idx) // 12 AS period FROM p JOIN c USING (claim_id)
  WHERE idx >= base_idx AND idx < base_idx + 36 AND h IS NOT NULL
), e AS (
  SELECT claim_id, idx, period, h, emp AND perm AND h >= 140 AS ft,
         sum(CASE WHEN emp AND h * 12 >= 20 * 52 THEN 1 ELSE 0 END) OVER (PARTITION BY claim_id, employee_id, period) AS n20, emp
  FROM j
), m AS (
  SELECT claim_id, period, idx, sum(ft::INTEGER) AS ft, sum(CASE WHEN emp AND n20 >= 3 AND NOT ft THEN h ELSE 0 END) AS eqh
  FROM e GROUP BY ALL
)
SELECT claim_id, period, (sum(ft) + sum(eqh) / 140) / 12 AS average FROM m GROUP BY ALL
) TO '{out}' (FORMAT parquet)
"""

BATCH = """
import sys
from qmcredit.cli import main
d = {data!r}
sys.argv = ["qmcredit", "batch", d + "/claims.parquet", d + "/payroll.parquet", "--periods", d + "/periods.parquet", "--out", {out!r}]
main()
"""

FLOOR = """
import duckdb
duckdb.sql({sql!r})
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


def measure(code: str) -> dict:
    """Run ``code`` in a fresh interpreter: wall seconds, peak memory (MB) of its process tree, stdout."""
    t = time.perf_counter()
    proc = psutil.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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


def ensure_data(rows: int) -> Path:
    d = DATA / f"rows-{rows}"
    if not (d / "payroll.parquet").exists():
        from qmcredit.batch import synth

        t = time.perf_counter()
        synth.write(d, max(1, rows // ROWS_PER_CLAIM), 1)
        print(f"generated {d} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return d


def bench(rows: int, sample: int) -> dict:
    d = ensure_data(rows)
    out = DATA / f"out-{rows}"
    batch = measure(BATCH.format(data=str(d), out=str(out)))
    summary = json.loads(batch["stdout"])
    claims, actual_rows = summary["claims"], summary["rows"]
    floor = measure(FLOOR.format(sql=FLOOR_SQL.format(claims=d / "claims.parquet", payroll=d / "payroll.parquet", out=DATA / f"floor-{rows}.parquet")))
    single = measure(SINGLE.format(data=str(d), sample=sample))
    per_claim = float(single["stdout"].split("PERCLAIM")[1].split()[0])
    single_total = per_claim * claims
    return {
        "rows": actual_rows, "claims": claims,
        "batch_s": batch["wall_s"], "batch_peak_mb": batch["peak_mb"],
        "floor_s": floor["wall_s"], "floor_peak_mb": floor["peak_mb"],
        "single_per_claim_ms": round(per_claim * 1000, 2), "single_est_s": round(single_total, 1),
        "batch_over_floor": round(batch["wall_s"] / floor["wall_s"], 2),
        "single_over_batch": round(single_total / batch["wall_s"], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="+", type=float, help="employee-month rows, e.g. 1e6 1e7 1.5e8")
    ap.add_argument("--sample", type=int, default=200, help="claims timed one by one for the claim-by-claim estimate")
    args = ap.parse_args()
    # qmcredit's bytecode, as `pip install` leaves it (DuckDB's and polars' are there already): an
    # editable install under PYTHONDONTWRITEBYTECODE recompiles the package in every process.
    import qmcredit

    compileall.compile_dir(Path(qmcredit.__file__).parent, quiet=1)
    for size in args.sizes:
        print(json.dumps(bench(int(size), args.sample)), flush=True)


if __name__ == "__main__":
    main()
