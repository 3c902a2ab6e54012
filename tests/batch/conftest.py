"""Shared generated data: one seeded synthetic set, written as Parquet and as CSV, and the
single-claim path's result for each claim (``qmcredit.decide``), the oracle the batch must match."""

from __future__ import annotations

import json

import pytest

from qmcredit.batch import synth
from qmcredit import decide
from qmcredit.loaders import claim_from_dict
from qmcredit.problems import ClaimError

CLAIMS = 2400
SEED = 11


def single(claim_id: str, doc: dict, rows) -> dict:
    """What ``qmcredit compute`` decides for one claim: its determination, or its problems."""
    try:
        claim = claim_from_dict(json.loads(json.dumps(doc)), payroll=rows.drop("claim_id"), source=claim_id)
        return decide(claim).to_dict(explain=False)
    except ClaimError as e:
        return {"claim_id": claim_id, **e.to_dict()}


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("synth")
    return {kind: synth.write(root / kind, CLAIMS, SEED, kind=kind) for kind in ("parquet", "csv")}


@pytest.fixture(scope="session")
def oracle(generated) -> dict[str, dict]:
    """claim id -> the single-claim result, payroll rows named as the batch names them."""
    import polars as pl

    from qmcredit.batch.tables import scan_payroll

    rows = (
        scan_payroll(generated["parquet"]["payroll"])
        .with_columns(pl.format("payroll.parquet line {}", pl.col("_line")).alias("source"))
        .drop("_line").collect()
    )
    from qmcredit.batch.engine import no_payroll_rows

    parts = rows.partition_by("claim_id", as_dict=True, maintain_order=True)
    found = {cid: single(cid, doc, parts.get((cid,), rows.clear())) for cid, doc in synth.documents(CLAIMS, SEED)}
    # issue 14: a claim that would be decided but has no payroll row at all is a problem, not a credit of 0.00
    return {cid: ({"claim_id": cid, **ClaimError([no_payroll_rows(cid)], cid).to_dict()}
                  if (cid,) not in parts and "error" not in got else got) for cid, got in found.items()}
