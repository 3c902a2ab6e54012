"""A real local ``dask.distributed`` cluster gives the same Parquet output as one machine."""

from __future__ import annotations

import polars as pl

from qmcredit.batch import engine
from qmcredit.batch.distributed import cluster, dask_map


def test_local_dask_cluster_gives_identical_outputs(generated, tmp_path):
    paths = generated["parquet"]
    engine.run(paths["claims"], paths["payroll"], tmp_path / "local", periods=paths["periods"], jsonl=True)
    with cluster(workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        engine.run(paths["claims"], paths["payroll"], tmp_path / "dask", periods=paths["periods"], jsonl=True,
                   mapper=dask_map(client), min_partitions=4)
    for name in ("claims.parquet", "ledger.parquet"):
        assert pl.read_parquet(tmp_path / "local" / name).equals(pl.read_parquet(tmp_path / "dask" / name)), name
    assert (tmp_path / "local" / "determinations.jsonl").read_bytes() == (tmp_path / "dask" / "determinations.jsonl").read_bytes()
