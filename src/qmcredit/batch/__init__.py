"""Many claims at once (issue 3): the core's rules over a claims table and one payroll table,
partitioned by claim, on one machine or a Dask cluster; and the synthetic data they run on.
See docs/batch.md."""
