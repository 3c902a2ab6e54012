-- The project's own floor query of 2026-11-30 (bench_batch.py at 3544290), kept unchanged as the
-- yardstick of issue 12 item 6: "the batch/floor ratio of benchmarks/batch.md must not get worse"
-- was written against this query's 1.72x (1M rows) and 1.69x (9.2M rows). Issue 18 replaced it as
-- *the* floor: it uses a window function and ignores `year_one_start` and
-- `part_time_excludes_temporary`, so its averages are not checked against the batch's (they differ on
-- some claim-periods); it is timed only. {claims}, {payroll}, {out}: paths filled in by bench_batch.py.
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
