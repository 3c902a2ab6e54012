"""The batch run: the core's rules over many claims, one claim-hash partition at a time.

Each partition goes through the same code as ``qmcredit.decide``: the header is validated by
``ClaimHeader``; payroll rows are typed and checked by ``payroll.normalize``; P1-P4 are the
``law.positions`` expressions (``classify``, ``monthly``) over the whole partition, grouped by claim
and month; every later rule (E1-E5, P5, C1-C3, L1-L5, R1-R3) is ``decide.determine`` per claim.
A claim with a bad header field or a bad payroll row gets a determination naming every problem,
as ``qmcredit compute`` reports them; the other claims go on.

Memory stays bounded by the partition: the payroll table is split by a hash of ``claim_id`` in one
streaming pass (all rows of a claim land in one partition), and partitions are decided one by one,
here or on Dask workers (``distributed``).
"""

from __future__ import annotations

import gc
import heapq
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import polars as pl
from pydantic import ValidationError

from ..claim import ClaimHeader, problems_from_validation
from ..decide import claim_constants, determine
from ..determination import Determination
from ..law.positions import CLAIM_COLUMNS, classify, monthly
from ..money import exact_decimal, money
from ..payroll import first_unknown_month
from ..problems import ClaimError, Problem
from . import outputs
from .rows import typed as typed_rows
from .tables import PAYROLL_COLUMNS, header_doc, read_claims, scan_payroll

DEFAULT_ROWS_PER_PARTITION = 6_000_000
_HASH_SEED = 20020043  # P.L.2002, c.43: any fixed seed; it only spreads claims over partitions


@dataclass(frozen=True)
class PayrollSource:
    """Where a partition's payroll rows are: the input table itself (one partition) or the files
    of the partition pass (text columns and ``_line`` already there)."""

    path: str
    name: str           # the input file's name, for row locations ("payroll.csv line 17")
    partitioned: bool

    def scan(self) -> pl.LazyFrame:
        if not self.partitioned:
            return scan_payroll(Path(self.path))
        if not self.path:  # no payroll row hashed to this partition
            return pl.LazyFrame(schema={**{c: pl.Utf8 for c in PAYROLL_COLUMNS}, "_line": pl.UInt32})
        return pl.scan_parquet(self.path)


@dataclass
class PartitionResult:
    claims: pl.DataFrame
    ledger: pl.DataFrame
    jsonl: list[tuple[str, str]]  # (claim id, JSON line), in claim id order
    rows: int
    bad_rows: int
    orphan_rows: int
    orphan_claims: list[str]


def _constants(header: ClaimHeader, cache: dict) -> tuple:
    """``decide.claim_constants``, computed once per (operations began, options): W1-W3 and the
    P2-P3 thresholds depend on nothing else."""
    key = (header.location.operations_began, header.options)
    if key not in cache:
        cache[key] = claim_constants(header)
    return cache[key]


def headers(claims: pl.DataFrame) -> tuple[dict[str, ClaimHeader], dict[str, list[Problem]]]:
    """Validate each claims-table row as a FORMAT.md header (the core's ``ClaimHeader``)."""
    valid: dict[str, ClaimHeader] = {}
    invalid: dict[str, list[Problem]] = {}
    seen: set[str] = set()
    has_periods = "_periods" in claims.columns
    for row in claims.iter_rows(named=True):
        cid = row["claim_id"]
        if cid is None or cid == "":
            continue  # counted by the caller as claims-table rows without an id
        if cid in seen:
            invalid[cid] = [Problem("claim_id", f"{cid!r} is on more than one row of the claims table; give each claim once")]
            valid.pop(cid, None)
            continue
        seen.add(cid)
        doc, found = header_doc(row, row["_periods"] if has_periods else None)
        try:
            header = ClaimHeader.model_validate(doc)
        except ValidationError as e:
            found = problems_from_validation(e) + found
            header = None
        if found:
            invalid[cid] = found
        else:
            valid[cid] = header
    return valid, invalid


def key_figures(d: Determination) -> tuple[dict, list[dict]]:
    """The claim's row and ledger rows: the figures of ``Determination.to_dict`` (same text)."""
    pos = lambda x: None if x is None else exact_decimal(x)  # noqa: E731
    cash = lambda x: None if x is None else money(x)  # noqa: E731
    totals_pending = d.ledger.pending_from is not None
    row = {
        "claim_id": d.claim_id, "taxpayer_id": d.taxpayer_id, "status": "decided", "eligible": d.eligible,
        "ineligible_because": ",".join(c.rule for c in d.checks if not c.passed) or None,
        "average_base": pos(d.averages["base"]), "average_year_one": pos(d.averages["year_one"]),
        "average_year_two": pos(d.averages["year_two"]),
        "new_year_one": pos(d.new_positions["year_one"]), "new_year_two": pos(d.new_positions["year_two"]),
        "credit_year_one": cash(d.credit["year_one"]), "credit_year_two": cash(d.credit["year_two"]),
        "sustained_effort_ratio": pos(d.sustained_effort_ratio),
        "refund": None if totals_pending else money(d.ledger.refund),
        "carried_forward": None if totals_pending else money(d.ledger.carried_forward),
        "pending": d.pending is not None, "problems": None,
    }
    ledger = [{
        "claim_id": d.claim_id, "period": line.index, "start": line.start, "end": line.end,
        "allowed": None if line.pending else money(line.allowed), "room": money(line.room.room),
        "applied": None if line.pending else money(line.applied),
        "refund": None if line.pending else money(line.refund),
        "forfeited": None if line.pending else money(line.forfeited),
        "carried_forward": None if line.pending else money(line.carried_forward),
    } for line in d.ledger.periods]
    return row, ledger


def invalid_row(cid: str, taxpayer_id: str | None, found: list[Problem]) -> dict:
    return {
        "claim_id": cid, "taxpayer_id": taxpayer_id, "status": "invalid", "eligible": None,
        "ineligible_because": None, "average_base": None, "average_year_one": None, "average_year_two": None,
        "new_year_one": None, "new_year_two": None, "credit_year_one": None, "credit_year_two": None,
        "sustained_effort_ratio": None, "refund": None, "carried_forward": None, "pending": None,
        "problems": json.dumps([p.to_dict() for p in found], ensure_ascii=False),
    }


def invalid_json(cid: str, found: list[Problem]) -> str:
    """The JSON Lines record of a claim that cannot be decided: ``ClaimError.to_dict`` as
    ``qmcredit compute`` reports it."""
    return json.dumps({"claim_id": cid, **ClaimError(found, cid).to_dict()}, ensure_ascii=False)


def measure(rows: pl.LazyFrame, constants: pl.DataFrame, name: str) -> tuple[pl.DataFrame, pl.DataFrame, int, pl.Series]:
    """Type and check every payroll row (``normalize``, via ``rows.typed``), then P1-P4
    (``classify``, ``monthly``) over the claims none of whose rows has a problem. Returns the
    monthly sums by claim code and month, the bad rows, the number of rows, and the claim ids of
    rows whose claim is not in the claims table (orphans)."""
    joined = rows.join(constants.lazy().select("claim_id", "_code", "as_of_idx"), on="claim_id", how="left").collect()
    orphans = joined.filter(pl.col("_code").is_null()).get_column("claim_id")
    typed = typed_rows(joined.filter(pl.col("_code").is_not_null()).drop("claim_id"), name).rename({"_code": "claim_id"})
    bad = typed.filter(pl.col("problem").is_not_null()).sort("claim_id", "_line").select("claim_id", "source", "problem")
    claim_columns = constants.lazy().select(pl.col("_code").alias("claim_id"), *CLAIM_COLUMNS)
    good = typed.lazy().filter(~pl.col("claim_id").is_in(bad.get_column("claim_id").unique().implode())).join(
        claim_columns, on="claim_id", how="inner").filter(pl.col("base_idx").is_not_null())
    per_month = monthly(classify(good)).collect()
    return per_month, bad, joined.height, orphans


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector: a partition keeps hundreds of thousands of
    long-lived objects (headers, monthly sums) that it would otherwise re-scan while each claim
    is decided. They hold no reference cycles; reference counting frees them as before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def decide_partition(claims: pl.DataFrame, payroll: PayrollSource, jsonl: bool) -> PartitionResult:
    """Decide every claim of one partition (its claims-table rows and all their payroll rows)."""
    with _collector_paused():
        return _decide_partition(claims, payroll, jsonl)


def _decide_partition(claims: pl.DataFrame, payroll: PayrollSource, jsonl: bool) -> PartitionResult:
    valid, invalid = headers(claims)
    cache: dict = {}
    codes = {cid: i for i, cid in enumerate(sorted(valid.keys() | invalid.keys()))}
    consts = {k: [] for k in ("claim_id", "_code", "as_of_idx", *CLAIM_COLUMNS)}
    for cid, code in codes.items():
        header = valid.get(cid)
        cols = _constants(header, cache)[2] if header is not None else dict.fromkeys(CLAIM_COLUMNS)
        consts["claim_id"].append(cid)
        consts["_code"].append(code)
        consts["as_of_idx"].append(first_unknown_month(header.as_of) if header is not None else None)
        for k in CLAIM_COLUMNS:
            consts[k].append(cols[k])
    constants = pl.DataFrame(consts, schema={"claim_id": pl.Utf8, "_code": pl.Int64, "as_of_idx": pl.Int32, **CLAIM_COLUMNS})
    per_month, bad, rows, orphans = measure(payroll.scan(), constants, payroll.name)

    found_rows: dict[int, list[Problem]] = {}
    for code, source, message in bad.iter_rows():
        found_rows.setdefault(code, []).append(Problem(source, message))
    measured: dict[int, dict[int, tuple[int, int]]] = {}
    for code, idx, ft, eqh in per_month.iter_rows():
        measured.setdefault(code, {})[idx] = (ft, eqh)

    out_rows, ledger_rows, lines = [], [], []
    for cid, code in codes.items():
        header = valid.get(cid)
        found = invalid.get(cid, []) + found_rows.get(code, [])
        if not found:
            w, t, _ = _constants(header, cache)
            try:
                d = determine(header, w, t, measured.get(code, {}), None, claim_id=cid, explain=False)
            except ClaimError as e:
                found = e.problems
        if found:
            out_rows.append(invalid_row(cid, header.taxpayer.id if header else None, found))
            if jsonl:
                lines.append((cid, invalid_json(cid, found)))
            continue
        row, ledger = key_figures(d)
        out_rows.append(row)
        ledger_rows += ledger
        if jsonl:
            lines.append((cid, json.dumps(d.to_dict(explain=False), ensure_ascii=False)))
    return PartitionResult(
        pl.DataFrame(out_rows, schema=outputs.CLAIMS_SCHEMA), pl.DataFrame(ledger_rows, schema=outputs.LEDGER_SCHEMA),
        lines, rows, bad.height, orphans.len(), sorted(set(orphans.drop_nulls().to_list())),
    )


@dataclass
class Summary:
    """What a batch run did: claims decided and invalid, rows read and bad, totals of the credit."""

    claims: int = 0
    decided: int = 0
    invalid: int = 0
    eligible: int = 0
    rows: int = 0
    bad_rows: int = 0
    orphan_rows: int = 0
    orphan_claims: list[str] = field(default_factory=list)
    claims_without_id: int = 0
    partitions: int = 0
    totals: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {**self.__dict__, "orphan_claims": self.orphan_claims[:100]}


Mapper = Callable[[Callable, list[tuple]], Iterable[tuple[int, PartitionResult]]]


def serial_map(fn: Callable, args: list[tuple]) -> Iterator[tuple[int, PartitionResult]]:
    """Decide the partitions one after another in this process."""
    return (fn(*a) for a in args)


def partition_count(payroll: Path, rows_per_partition: int) -> int:
    """Partitions needed to keep each under ``rows_per_partition`` rows (a CSV is estimated from
    its size, at 24 bytes a row, which overestimates rows of realistic ids)."""
    if payroll.suffix.lower() == ".csv":
        rows = payroll.stat().st_size // 24
    else:
        rows = pl.scan_parquet(payroll).select(pl.len()).collect().item()
    return max(1, -(-rows // rows_per_partition))


def bucket(n: int) -> pl.Expr:
    return (pl.col("claim_id").hash(seed=_HASH_SEED) % n).cast(pl.Int32).alias("_bucket")


def split_payroll(payroll: Path, n: int, workdir: Path) -> list[PayrollSource]:
    """One streaming pass: the payroll rows, as text with their line numbers, written into ``n``
    Parquet partitions by claim hash (all rows of a claim land in one)."""
    scan_payroll(payroll).with_columns(bucket(n)).sink_parquet(
        pl.PartitionBy(workdir, key="_bucket", include_key=False), mkdir=True, engine="streaming",
    )
    out = []
    for k in range(n):
        files = sorted((workdir / f"_bucket={k}").glob("*.parquet"))
        out.append(PayrollSource(str(workdir / f"_bucket={k}" / "*.parquet") if files else "", payroll.name, True))
    return out


def run(
    claims: Path, payroll: Path, out: Path, *, periods: Path | None = None, jsonl: bool = False,
    rows_per_partition: int = DEFAULT_ROWS_PER_PARTITION, min_partitions: int = 1, mapper: Mapper = serial_map,
    workdir: Path | None = None, on_progress: Callable[[int, int], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> Summary:
    """Decide every claim of the claims table against the payroll table and write the outputs to
    ``out``. ``mapper`` runs ``decide_partition`` over the partitions (here, or on Dask);
    ``on_start(claims)`` is told the number of claims-table rows, ``on_progress(rows, claims)``
    as each partition is done. The outputs are sorted by
    claim id, so they do not depend on the partitioning or on where partitions ran."""
    started = time.perf_counter()
    table = read_claims(claims, periods)
    summary = Summary(claims_without_id=table.filter(pl.col("claim_id").is_null() | (pl.col("claim_id") == "")).height)
    n = max(min_partitions, partition_count(payroll, rows_per_partition))
    if on_start:
        on_start(table.height - summary.claims_without_id)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".qmcredit-batch-", dir=workdir or out))
    try:
        if n == 1:
            sources = [PayrollSource(str(payroll), payroll.name, False)]
        else:
            sources = split_payroll(payroll, n, scratch / "payroll")
        table = table.with_columns(bucket(n))
        args = [(table.filter(pl.col("_bucket") == k).drop("_bucket"), src, jsonl) for k, src in enumerate(sources)]
        results = []
        for res in mapper(_decide_indexed, [(k, *a) for k, a in enumerate(args)]):
            results.append(res)
            if on_progress:
                on_progress(res[1].rows, res[1].claims.height)
        results.sort(key=lambda r: r[0])
        claims_df = pl.concat([r.claims for _, r in results]).sort("claim_id")
        ledger_df = pl.concat([r.ledger for _, r in results]).sort("claim_id", "period")
        if jsonl:
            outputs.write_lines((line for _, line in heapq.merge(*(r.jsonl for _, r in results))), out / "determinations.jsonl")
        outputs.write_parquet(claims_df, out / "claims.parquet")
        outputs.write_parquet(ledger_df, out / "ledger.parquet")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    decided = claims_df.filter(pl.col("status") == "decided")
    summary.claims = claims_df.height
    summary.decided = decided.height
    summary.invalid = summary.claims - summary.decided
    summary.eligible = decided.filter(pl.col("eligible")).height
    summary.rows = sum(r.rows for _, r in results)
    summary.bad_rows = sum(r.bad_rows for _, r in results)
    summary.orphan_rows = sum(r.orphan_rows for _, r in results)
    summary.orphan_claims = sorted({c for _, r in results for c in r.orphan_claims})
    summary.partitions = n
    summary.totals = {
        col: str(sum((Decimal(v) for v in decided.get_column(col).drop_nulls()), Decimal("0.00")))
        for col in ("credit_year_one", "credit_year_two", "refund", "carried_forward")
    }
    summary.seconds = round(time.perf_counter() - started, 3)
    outputs.write_json(summary.to_dict(), out / "summary.json")
    return summary


def _decide_indexed(k: int, claims: pl.DataFrame, payroll: PayrollSource, jsonl: bool) -> tuple[int, PartitionResult]:
    return k, decide_partition(claims, payroll, jsonl)
