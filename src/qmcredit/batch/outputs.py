"""The batch outputs (docs/batch.md): ``claims.parquet`` (one row per claim), ``ledger.parquet``
(one row per claim and period), ``determinations.jsonl`` on request, and ``summary.json``.

Each file is written beside its final name and renamed into place, so a reader never sees a
half-written file; ``summary.json`` is written last and marks a finished run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import polars as pl

_TEXT = pl.Utf8
#: Figures are text with the exact digits of FORMAT.md (positions: exact decimals; money: cents).
CLAIMS_SCHEMA = {
    "claim_id": _TEXT, "taxpayer_id": _TEXT, "status": _TEXT, "eligible": pl.Boolean,
    "ineligible_because": _TEXT,
    "average_base": _TEXT, "average_year_one": _TEXT, "average_year_two": _TEXT,
    "new_year_one": _TEXT, "new_year_two": _TEXT, "credit_year_one": _TEXT, "credit_year_two": _TEXT,
    "sustained_effort_ratio": _TEXT, "refund": _TEXT, "carried_forward": _TEXT, "pending": pl.Boolean,
    "problems": _TEXT,
}
LEDGER_SCHEMA = {
    "claim_id": _TEXT, "period": pl.Int32, "start": pl.Date, "end": pl.Date, "allowed": _TEXT, "room": _TEXT,
    "applied": _TEXT, "refund": _TEXT, "forfeited": _TEXT, "carried_forward": _TEXT,
}


def write_parquet(df: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    df.write_parquet(tmp, statistics=True)
    os.replace(tmp, path)


def write_lines(lines: Iterable[str], path: Path) -> None:
    """JSON Lines: one determination per line."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line)
            out.write("\n")
    os.replace(tmp, path)


def write_json(doc: dict, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
