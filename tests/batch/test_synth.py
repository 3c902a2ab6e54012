"""The generator: reproducible by seed, realistic in shape (not tuned to the engine)."""

from __future__ import annotations

import polars as pl

from qmcredit.batch import synth


def test_same_seed_same_tables_other_seed_other_tables(tmp_path):
    a = synth.write(tmp_path / "a", 300, 5)
    b = synth.write(tmp_path / "b", 300, 5)
    c = synth.write(tmp_path / "c", 300, 6)
    for name in ("claims", "periods", "payroll"):
        assert pl.read_parquet(a[name]).equals(pl.read_parquet(b[name])), name
    assert not pl.read_parquet(a["payroll"]).equals(pl.read_parquet(c["payroll"]))


def test_shape_of_the_data(generated):
    payroll = pl.read_parquet(generated["parquet"]["payroll"])
    staff = payroll.group_by("claim_id").agg(pl.col("employee_id").n_unique().alias("n")).get_column("n")
    assert staff.median() <= 10 < staff.max() // 10  # most firms small, a few large
    assert set(payroll.get_column("basis").unique()) >= {"permanent", "temporary", "seasonal"}
    assert payroll.filter(pl.col("ownership_interest") == "true").height > 0
    assert payroll.get_column("owner_relation").drop_nulls().n_unique() >= 2
    periods = pl.read_parquet(generated["parquet"]["periods"])
    fiscal = periods.filter(~pl.col("end").str.ends_with("-12-31"))
    assert fiscal.height > 0 and periods.get_column("other_credits").drop_nulls().len() > 0
    claims = pl.read_parquet(generated["parquet"]["claims"])
    assert claims.get_column("as_of").drop_nulls().len() > 0 and claims.get_column("options").drop_nulls().len() > 0
