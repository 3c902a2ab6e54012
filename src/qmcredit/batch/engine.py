"""The batch run: the core's rules over many claims, one partition of claims at a time.

This module plans the partitions and runs them; ``partition`` decides one (the core's rules, the
same code as ``qmcredit.decide``). Memory stays bounded by the partition: a payroll table in claim
order is cut into runs of rows (``claim_ranges``), any other is split by a hash of ``claim_id``
(all rows of a claim land in one partition); partitions are decided here and on local worker
processes (``local_processes``), or on Dask workers (``distributed``). A partition's payroll rows
are read from the moment it starts (``read_rows``), and a process imports the rules' modules
(``partition``: pydantic, the claim models, the core) while its first partition's rows are read.
"""

from __future__ import annotations

import bisect
import functools
import gc
import heapq
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ..money import from_cents, money
from ..payroll import Coded, Lookup, lookup
from ..problems import ClaimError, Problem
from ..processes import Mapper, local_processes, prompt_handoffs, serial_map
from . import outputs
from .tables import PAYROLL_COLUMNS, claim_id_type, kind_of, read_coded, read_tables, scan_payroll, unreadable

if TYPE_CHECKING:
    from .partition import PartitionResult

DEFAULT_ROWS_PER_PARTITION = 6_000_000
#: Payroll rows that make a local worker process worth its start (an interpreter and polars, about
#: 0.4 s): a smaller table is decided faster in the process that reads it.
ROWS_PER_PROCESS = 2_000_000
#: Payroll rows from which a Parquet table's text columns are read as codes (``read_coded``):
#: reading the rows and parsing their values (``read_rows``) then costs about 0.3 processor-s a
#: million rows instead of 0.6, after pyarrow's import and first read, about 0.15 s (measured at
#: 0.1M and 1.1M rows, benchmarks/batch.md). (Runs of a table in claim order are always read so.)
CODES_FROM_ROWS = 500_000
_HASH_SEED = 20020043  # P.L.2002, c.43: any fixed seed; it only spreads claims over partitions


@dataclass(frozen=True)
class PayrollSource:
    """Where a partition's payroll rows are: the input table itself, whole, or ``rows`` = (first,
    count) of it (a run of rows holding its claims), or its claims' rows by ``bucket`` =
    (k, n) (the rows of claims hashed to partition k of n, read from the whole table); or the
    files of the partition pass (text columns and ``_line`` already there)."""

    path: str
    row_name: tuple[str, str]  # a row's location: these before and after its ``_line`` ("payroll.csv line ", "")
    partitioned: bool
    bucket: tuple[int, int] | None = None
    rows: tuple[int, int] | None = None
    claims: ClaimRange | None = None  # with ``rows``: the claim ids those rows must hold
    coded: bool = False  # text columns of the table itself, if Parquet, read as codes (``read``)
    joined: tuple[tuple[str, str], ...] = ()  # with ``bucket``: claims hashed by their return's first claim (``returns``)

    def read(self) -> tuple[pl.DataFrame, Coded]:
        """The rows, and the columns read as codes (``tables.read_coded``, when ``coded``)."""
        if self.coded and not self.partitioned and self.bucket is None and kind_of(Path(self.path)) == "parquet":
            read = read_coded(Path(self.path), self.rows)
            if read is not None:
                return read
        return self.scan().collect(), {}

    def scan(self) -> pl.LazyFrame:
        if not self.partitioned:  # claim ids are stripped by ``read_rows``, or here to find their bucket
            rows = scan_payroll(Path(self.path), self.rows, strip=self.bucket is not None)
            return rows if self.bucket is None else rows.filter(bucket(self.bucket[1], self.joined) == self.bucket[0])
        if not self.path:  # no payroll row hashed to this partition
            return pl.LazyFrame(schema={"_line": pl.UInt32, **{c: pl.Utf8 for c in PAYROLL_COLUMNS}})
        return pl.scan_parquet(self.path)


def read_rows(payroll: PayrollSource, ids: list[str]) -> tuple[Lookup, int, pl.Series, pl.Series]:
    """The first half of ``partition.measure``, which needs nothing of the claims' headers: the payroll rows
    read, their claim ids coded (a claim's place in ``ids``; stripped here, each distinct id once)
    and their columns' distinct values parsed (``payroll.lookup``). Also the number of rows, the
    claim ids of rows whose claim is not in ``ids`` (orphans), which are left out, and the codes
    of the claims of ``ids`` that have a row (all of a claim's rows are in its partition: the
    others have none in the table, ``_unmatched``)."""
    rows, coded = payroll.read()
    if "claim_id" in coded:
        raw, names = coded.pop("claim_id")
    else:
        categories = pl.Categories.random()
        cast = rows.get_column("claim_id").cast(pl.Categorical(categories))  # holds the categories
        raw, names = cast.to_physical(), categories.to_series()
    names = names.str.strip_chars()  # by code
    claim = names.cast(pl.Enum(ids), strict=False).to_physical().cast(pl.UInt32).gather(raw)  # as gathers by it take it: not cast each time
    orphans = names.gather(raw.filter(claim.is_null()))
    known = rows.with_columns(claim.alias("claim_id"))
    if orphans.len():
        kept = claim.is_not_null()
        known = known.filter(kept)
        coded = {c: (codes.filter(kept), values) for c, (codes, values) in coded.items()}
    return lookup(known, lean=True, coded=coded), rows.height, orphans, claim.drop_nulls().unique()



@dataclass(frozen=True)
class ReadFrom:
    """What the batch's payroll table was made of: the files the manifest names instead of it (an
    export and its mapping), how the export names a row in its problems (before and after the
    row's number, ``_line``), and the claims refused before deciding (rows of theirs that the
    export could not give, ``batch.cli``), how many rows it left out so, and the options it was
    read with."""

    files: dict[str, Path]
    row_name: tuple[str, str]
    refused: dict[str, list[Problem]] = field(default_factory=dict)
    left_out: int = 0  # the export's rows not in the table for a problem of theirs: bad rows read
    options: dict[str, str] = field(default_factory=dict)  # how it was read, as the manifest records it (``--payroll-columns``)

    @staticmethod
    def table(payroll: Path) -> ReadFrom:
        """A payroll table read as it is."""
        return ReadFrom({}, (f"{payroll.name} line ", ""))

    def found(self, unmatched: dict[str, list[Problem]]) -> dict[str, list[Problem]]:
        """The claims refused for rows the export could not give, then those no row matched
        (``_unmatched``): a claim all of whose rows the export left out has its rows' problems,
        not "no row"."""
        return self.refused | {cid: p for cid, p in unmatched.items() if cid not in self.refused}


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


def _started() -> None:
    """A worker process's first task (``processes.local_processes``): it imports this module, and
    with it polars and the tables' readers, while the planning process reads the tables."""


def payroll_rows(payroll: Path) -> int:
    """The payroll table's rows (a CSV's are estimated from its size, at 24 bytes a row, which
    overestimates rows of realistic ids)."""
    if payroll.suffix.lower() == ".csv":
        return payroll.stat().st_size // 24
    return pl.scan_parquet(payroll).select(pl.len()).collect().item()


def bucket(n: int, joined: tuple[tuple[str, str], ...] = ()) -> pl.Expr:
    """A claim's partition of ``n`` by hash; the claims of one return (``joined``: claim id and its
    return's first claim id) by their first claim's, so that a return is decided in one partition."""
    cid = pl.col("claim_id")
    if joined:
        cid = cid.replace([a for a, _ in joined], [b for _, b in joined])
    return (cid.hash(seed=_HASH_SEED) % n).cast(pl.Int32).alias("_bucket")


def returns(table: pl.DataFrame) -> tuple[tuple[str, str], ...]:
    """L6: the claims-table rows sharing a taxpayer are one return. Each such claim id (after the
    first of its taxpayer, in table order) with its return's first claim id."""
    if "taxpayer_id" not in table.columns:
        return ()
    rows = table.select("claim_id", pl.col("taxpayer_id").str.strip_chars()).filter(pl.col("claim_id").is_not_null() & (pl.col("claim_id") != "")
                                                          & pl.col("taxpayer_id").is_not_null() & (pl.col("taxpayer_id") != ""))
    firsts = rows.with_columns(pl.col("claim_id").first().over("taxpayer_id").alias("first"))
    return tuple(firsts.filter(pl.col("claim_id") != pl.col("first")).select("claim_id", "first").iter_rows())


@dataclass(frozen=True)
class ClaimRange:
    """A partition of a table in claim order: its rows (a run from ``first``) and the claim ids
    it holds, ``low`` <= id < ``high`` (None: unbounded)."""

    first: int
    count: int
    low: str | None
    high: str | None

    def holds(self) -> pl.Expr:
        cid = pl.col("claim_id")
        low = pl.lit(True) if self.low is None else cid >= self.low
        return low & (pl.lit(True) if self.high is None else cid < self.high)


def claim_ranges(payroll: Path, rows_per_partition: int, at_least: int, most: int | None = None) -> list[ClaimRange] | None:
    """Partitions without a split pass, for a Parquet table in claim order, as an export sorted by
    claim gives it: row groups whose claim_id statistics never go back. The partitions are runs of
    rows of about equal size, at most ``rows_per_partition`` (more only where one claim's rows
    leave no cut, or, up to ``most``, where a cut moves), their number a multiple of ``at_least``
    (the processes, kept equally busy) where the claims allow; the processes' last turn is cut in
    halves. A cut is moved to a row-group start next to it where the runs stay within ``most``
    rows (default: ``rows_per_partition``; ``_group_places``). Each cut is at the first row from
    its place on where a new claim starts (``_cut``). None when the table is not such a table, or gives fewer than
    ``at_least`` partitions (then the rows are split by claim hash)."""
    if kind_of(payroll) != "parquet":
        return None
    import pyarrow.parquet as pq  # here: a worker process does not need it

    file = pq.ParquetFile(payroll)
    meta = file.metadata
    col = next((j for j, name in enumerate(meta.schema.names) if name.strip().lower() == "claim_id"), None)
    if col is None or meta.num_rows < 2:
        return None
    groups = []  # each row group's (least, greatest) claim id
    for g in range(meta.num_row_groups):
        st = meta.row_group(g).column(col).statistics
        if st is None or not st.has_min_max or st.null_count or not isinstance(st.min, str) or not isinstance(st.max, str):
            return None
        if st.min != st.min.strip() or st.max != st.max.strip():  # ids are compared stripped
            return None
        groups.append((st.min, st.max))
    if any(a[1] > b[0] for a, b in zip(groups, groups[1:])):
        return None
    ids = pl.scan_parquet(payroll).select(pl.col(meta.schema.names[col]).cast(pl.Utf8).str.strip_chars())
    if len(groups) == 1 and not ids.collect().to_series().is_sorted():  # one group's statistics tell no order
        return None
    parts = at_least * -(-meta.num_rows // (at_least * rows_per_partition))  # the processes' turns, all of them busy in each
    # The last turn in halves: the processes then finish within half a partition of each other.
    places = [*_group_places([meta.row_group(g).num_rows for g in range(meta.num_row_groups)], parts, parts - at_least, most or rows_per_partition),
              *((2 * (parts - at_least) + k) * meta.num_rows // (2 * parts) for k in range(1, 2 * at_least))]
    cuts: list[tuple[int, str]] = []
    for place in places:
        cut = _cut(ids, meta.num_rows, max(place, cuts[-1][0] + 1 if cuts else 1))
        if cut is not None:
            cuts.append(cut)
    bounds = [(0, None), *cuts, (meta.num_rows, None)]
    out = [ClaimRange(a, b - a, low, high) for (a, low), (b, high) in zip(bounds, bounds[1:])]
    return out if len(out) >= at_least else None


def _group_places(sizes: list[int], parts: int, full: int, most: int) -> list[int]:
    """The places of the cuts of the first ``full`` of ``parts`` runs of a table whose row groups
    hold ``sizes`` rows: each even place moved to a row-group start next to it (a run then decodes
    its own groups and only the first rows of the next, ``read_coded``) where the runs on both
    sides keep within ``most`` rows (memory stays bounded) and in order; else left where it is.
    As many places as evenly spaced ones: the same number of runs."""
    rows = sum(sizes)
    even = [k * rows // parts for k in range(1, full + 1)]
    starts = list(itertools.accumulate(sizes[:-1]))
    places, last = [], 0
    for k, place in enumerate(even):
        after = even[k + 1] if k + 1 < full else (2 * full + 1) * rows // (2 * parts)  # the next place (the last turn's first half)
        at = bisect.bisect_left(starts, place)
        near = sorted(starts[max(0, at - 1):at + 1], key=lambda s: abs(s - place))  # the group starts either side, nearer first
        places.append(next((s for s in near if last < s < after and s - last <= most and after - s <= most), place))
        last = places[-1]
    return places


def _cut(ids: pl.LazyFrame, rows: int, at: int) -> tuple[int, str] | None:
    """The first row from ``at`` on whose claim id is greater than the row's before it (a new
    claim, in order), and that id; None if none. Only the rows around it are read. (Whether the
    rows beyond are in order too is found by the workers: ``OutOfClaimOrder``.)"""
    width = 4096
    while at < rows:
        window = ids.slice(at - 1, width + 1).collect().to_series()
        rises = (window.slice(1) > window.slice(0, window.len() - 1)).arg_true()
        if rises.len():
            return at + rises[0], window[rises[0] + 1]
        at, width = at + width, width * 2
    return None


def split_payroll(payroll: Path, n: int, workdir: Path, row_name: tuple[str, str], joined: tuple[tuple[str, str], ...] = ()) -> list[PayrollSource]:
    """One streaming pass: the payroll rows, as text with their line numbers, written into ``n``
    Parquet partitions by claim hash (all rows of a claim, and of a return, land in one)."""
    scan_payroll(payroll).with_columns(bucket(n, joined)).sink_parquet(
        pl.PartitionBy(workdir, key="_bucket", include_key=False), mkdir=True, engine="streaming",
    )
    out = []
    for k in range(n):
        files = sorted((workdir / f"_bucket={k}").glob("*.parquet"))
        out.append(PayrollSource(str(workdir / f"_bucket={k}" / "*.parquet") if files else "", row_name, True))
    return out


def run(
    claims: Path, payroll: Path, out: Path, *, periods: Path | None = None, jsonl: bool = False,
    rows_per_partition: int = DEFAULT_ROWS_PER_PARTITION, min_partitions: int = 1, mapper: Mapper | None = None,
    jobs: int = 1, rows_per_process: int = ROWS_PER_PROCESS, workdir: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None, on_start: Callable[[int], None] | None = None,
    read_from: ReadFrom | None = None,
) -> Summary:
    """Decide every claim of the claims table against the payroll table and write the outputs to
    ``out``. ``read_from``: the export the payroll table was made of (``ReadFrom``). ``mapper`` runs
    ``decide_partition`` over the partitions (on Dask, say); without one, they run here (``jobs`` = 1) or on up to ``jobs`` local processes, one per
    ``rows_per_process`` payroll rows, which then share ``rows_per_partition`` (the rows in
    memory at once). ``on_start(claims)`` is told the number
    of claims-table rows, ``on_progress(rows, claims)`` as each partition is done. The outputs are
    sorted by claim id, so they do not depend on the partitioning or on where partitions ran."""
    started = time.perf_counter()
    local = mapper is None  # partitions decided on this machine: they may read the table itself
    try:
        with outputs.whole_folder(out) as fresh:
            rows = payroll_rows(payroll)
            jobs = max(1, min(jobs, rows // max(1, rows_per_process))) if local else 1
            with local_processes(jobs, _started) if local and jobs > 1 else nullcontext(mapper or serial_map) as mapper:
                summary = _run(claims, payroll, fresh, periods, jsonl, rows, rows_per_partition // jobs, min_partitions, mapper, local, jobs,
                               workdir, on_progress, on_start, started, read_from or ReadFrom.table(payroll))
            outputs.write_manifest(fresh, {"claims": claims, "payroll": payroll, "periods": periods} | (read_from.files if read_from else {}),
                                   {"jsonl": jsonl, "rows_per_partition": rows_per_partition} | (read_from.options if read_from else {}))
        return summary
    except (pl.exceptions.PolarsError, OSError, ValueError) as e:  # the fresh folder is gone by now (``whole_folder``)
        if isinstance(e, ClaimError):
            raise
        damaged = unreadable([p for p in (claims, payroll, periods) if p is not None])
        if damaged is not None:
            raise damaged from None
        raise


def _run(
    claims: Path, payroll: Path, out: Path, periods: Path | None, jsonl: bool, rows: int, rows_per_partition: int,
    min_partitions: int, mapper: Mapper, local: bool, jobs: int, workdir: Path | None,
    on_progress: Callable[[int, int], None] | None, on_start: Callable[[int], None] | None, started: float, read_from: ReadFrom,
) -> Summary:
    read = [read_tables(claims, periods)]  # handed to decide_planned, which lets go of it once split (memory)
    table = read[0][0]
    summary = Summary(claims_without_id=table.filter(pl.col("claim_id").is_null() | (pl.col("claim_id") == "")).height)
    if on_start:
        on_start(table.height - summary.claims_without_id)
    del table
    out.mkdir(parents=True, exist_ok=True)
    if workdir is not None:
        outputs.remove_stale(workdir, ".qmcredit-batch-")
    scratch = Path(tempfile.mkdtemp(prefix=f".qmcredit-batch-{os.getpid()}-", dir=workdir or out))
    try:
        results, n = decide_planned(lambda: read.pop() if read else read_tables(claims, periods), payroll, rows, rows_per_partition,
                                    min_partitions, mapper, local, jobs, scratch, (jsonl, None), on_progress, keep=_spill(scratch / "results"),
                                    row_name=read_from.row_name)
        claims_df = outputs.in_order(pl.concat([pl.read_ipc(_spilled(scratch / "results", k, "claims"), memory_map=False) for k, _ in results]), "claim_id")
        ledger_df = outputs.in_order(pl.concat([r.ledger_rows() for _, r in results]), "claim_id", "period")
        from .partition import invalid_json  # the rules' modules are loaded by now

        unmatched = _unmatched(claims, payroll, claims_df, {cid for _, r in results for cid in r.unrowed}, read_from.files.get("payroll", payroll))
        refused = refusals(claims_df, read_from.found(unmatched))
        if refused:
            claims_df, ledger_df = _refuse(claims_df, ledger_df, refused)
        jsonl_lines = [[(cid, invalid_json(cid, refused[cid]) if cid in refused else line) for cid, line in r.jsonl] for _, r in results]
        if jsonl:
            outputs.write_lines((line for _, line in heapq.merge(*jsonl_lines)), out / "determinations.jsonl")
        outputs.write_parquet(claims_df, out / "claims.parquet")
        outputs.write_parquet(ledger_df, out / "ledger.parquet")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    decided = claims_df.filter(pl.col("status") == "decided")
    summary.claims = claims_df.height
    summary.decided = decided.height
    summary.invalid = summary.claims - summary.decided
    summary.eligible = decided.filter(pl.col("eligible")).height
    summary.rows = sum(r.rows for _, r in results) + read_from.left_out
    summary.bad_rows = sum(r.bad_rows for _, r in results) + read_from.left_out
    summary.orphan_rows = sum(r.orphan_rows for _, r in results)
    summary.orphan_claims = sorted({c for _, r in results for c in r.orphan_claims})
    summary.partitions = n
    money_columns = ("credit_year_one", "credit_year_two", "refund", "carried_forward")
    cents = decided.select(pl.col(money_columns).str.replace(".", "", literal=True).cast(pl.Int128).sum())  # money_text: two decimals
    summary.totals = {col: money(from_cents(cents.get_column(col).item())) for col in money_columns}
    summary.seconds = round(time.perf_counter() - started, 3)
    outputs.write_json(summary.to_dict(), out / "summary.json")
    return summary


def decide_planned(
    tables: Callable[[], tuple[pl.DataFrame, pl.DataFrame | None]], payroll: Path, rows: int, rows_per_partition: int, min_partitions: int, mapper: Mapper,
    local: bool, jobs: int, scratch: Path, tail: tuple, on_progress: Callable[[int, int], None] | None, decide: Callable | None = None,
    keep: Callable[[int, PartitionResult], PartitionResult] | None = None, row_name: tuple[str, str] | None = None,
) -> tuple[list[tuple[int, PartitionResult]], int]:
    """The partitions planned and decided (``decide``, default ``_decide_indexed``, given each
    partition's claims, periods, payroll source, ``tail`` and the folder its ledger rows are
    written to, ``_ledger_written``): runs of a table in claim order
    when it is one, else partitions by claim hash. ``tables()`` gives the claims and periods
    tables (called again for a split by hash after ``OutOfClaimOrder``); they are let go once
    split, and each partition's part once it is decided, so that the tables are not held whole
    beside their parts to the end of the run (memory). ``keep(k, result)``: what is kept of
    partition ``k``'s result as it arrives (default: all of it). Returns each partition's
    result, in partition order, and their number. ``row_name``: how a payroll row is named in
    its problems (default: "<file> line <number>"). ``analysis.reform`` decides its scenarios
    through this reading."""
    row_name = row_name or (f"{payroll.name} line ", "")
    rows_per_partition = max(1, rows_per_partition)
    by_size = max(1, -(-rows // rows_per_partition))
    n = max(min_partitions, by_size, jobs)
    # At least four runs a process, so that the processes finish together.
    run_rows = rows_per_partition if jobs == 1 else min(rows_per_partition, -(-rows // (4 * jobs)))
    table, ptable = tables()
    joined = returns(table)  # L6: a return's claims are decided together, in one partition by hash
    ranges = claim_ranges(payroll, run_rows, max(jobs, min_partitions), rows_per_partition) if n > 1 and local and not joined else None
    results = None
    if ranges is not None:  # each partition reads its own rows: no split pass
        highs = pl.Series([r.high for r in ranges[:-1]], dtype=pl.Utf8)
        part = pl.lit(highs).search_sorted(pl.col("claim_id").fill_null(""), side="right")  # the range holding each claim
        parts = _parts(table, ptable, part, len(ranges), scratch / "parts")
        del table, ptable
        ledgers = _ledger_folder(scratch / "ledgers-runs")
        args = [(*parts[k], PayrollSource(str(payroll), row_name, False, rows=(r.first, r.count), claims=r, coded=True), *tail, ledgers)
                for k, r in enumerate(ranges)]
        del parts
        try:
            results = _decide_all(mapper, args, on_progress, decide, keep)
            n = len(ranges)
        except OutOfClaimOrder:  # the statistics said claim order, a row did not: split by hash after all
            results = None
            table, ptable = tables()
    if results is None:
        if n == 1:
            sources = [PayrollSource(str(payroll), row_name, False, coded=rows >= CODES_FROM_ROWS)]
        elif by_size == 1 and n <= jobs:  # each process reads its claims' rows from the table itself
            sources = [PayrollSource(str(payroll), row_name, False, (k, n), joined=joined) for k in range(n)]
        else:
            sources = split_payroll(payroll, n, scratch / "payroll", row_name, joined)
        parts = _parts(table, ptable, bucket(n, joined), n, scratch / "hashed")
        del table, ptable
        ledgers = _ledger_folder(scratch / "ledgers-hashed")  # not the runs' folder: a piece of theirs may still be finishing
        args = [(*parts[k], src, *tail, ledgers) for k, src in enumerate(sources)]
        del parts
        results = _decide_all(mapper, args, on_progress, decide, keep)
    return results, n


def _unmatched(claims: Path, payroll: Path, decided: pl.DataFrame, unrowed: set[str] | None = None, shown: Path | None = None) -> dict[str, list[Problem]]:
    """Decided claims that no payroll row matches, with the problem: every claim when the two
    tables' claim_id columns differ in type (no row can be trusted to match), else each claim
    without any payroll row (its employees and hours are missing): those of ``unrowed``, the
    partitions' claims without a row (``PartitionResult.unrowed``), or, not given, found by
    reading the table's claim ids. ``shown``: the payroll file named (the export it was made of)."""
    ids = decided.filter(pl.col("status") == "decided").get_column("claim_id")
    if ids.is_empty():
        return {}
    ctype, ptype = claim_id_type(claims), claim_id_type(payroll)
    if ctype != ptype and shown is not None and shown != payroll:  # an export, whose every value was read as text
        problem = Problem("claim_id", f"{claims.name} has claim_id of type {ctype}, and the claim ids of {shown.name} are read as text: "
                                      "give the claims table's claim_id as text, so that payroll rows match their claims")
        return {cid: [problem] for cid in ids}
    if ctype != ptype:
        problem = Problem("claim_id", f"{payroll.name} has claim_id of type {ptype}, {claims.name} of type {ctype}: "
                                      "give both the same type (text), so that payroll rows match their claims")
        return {cid: [problem] for cid in ids}
    if unrowed is not None:
        return {cid: [no_payroll_rows(cid)] for cid in ids.to_list() if cid in unrowed}
    present = scan_payroll(payroll).select("claim_id").unique().collect(engine="streaming").get_column("claim_id")
    return {cid: [no_payroll_rows(cid)] for cid in ids.filter(~ids.is_in(present.implode()))}


def no_payroll_rows(cid: str) -> Problem:
    return Problem("payroll", f"no row of the payroll table has claim_id {cid!r}: the claim's employees and hours are missing")


def refusals(claims_df: pl.DataFrame, found: dict[str, list[Problem]]) -> dict[str, list[Problem]]:
    """The claims refused once the partitions are decided, with every problem of theirs: each
    claim of ``found`` in the claims table, after the problems it was already refused for; and
    the other claims of their returns (L6: a return is decided with all its locations or not at
    all). A claim of ``found`` that the claims table does not hold is no claim's (its rows are
    orphans)."""
    from .partition import return_refused

    if not found:
        return {}
    ids = pl.Series(list(found), dtype=pl.Utf8).implode()
    had = claims_df.filter(pl.col("claim_id").is_in(ids)).select("claim_id", "taxpayer_id", "problems")
    out = {cid: [Problem(**p) for p in json.loads(before)] + found[cid] if before else found[cid] for cid, _, before in had.iter_rows()}
    returns = had.filter(pl.col("taxpayer_id").is_not_null()).group_by("taxpayer_id", maintain_order=True).agg("claim_id")
    others = claims_df.filter(pl.col("taxpayer_id").is_in(returns.get_column("taxpayer_id").implode()) & ~pl.col("claim_id").is_in(ids)
                              & (pl.col("status") == "decided")).select("claim_id", "taxpayer_id")
    bad = dict(returns.iter_rows())
    for cid, tp in others.iter_rows():
        out[cid] = [return_refused(bad[tp], tp)]
    return out


def _refuse(claims_df: pl.DataFrame, ledger_df: pl.DataFrame, refused: dict[str, list[Problem]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The claims of ``refused`` (``refusals``) made invalid with their problems, and their ledger rows dropped."""
    from .partition import invalid_row

    ids = pl.Series(list(refused), dtype=pl.Utf8).implode()
    taxpayers = dict(claims_df.filter(pl.col("claim_id").is_in(ids)).select("claim_id", "taxpayer_id").iter_rows())
    rows = pl.DataFrame([invalid_row(cid, taxpayers.get(cid), found) for cid, found in refused.items()], schema=outputs.CLAIMS_SCHEMA)
    return (pl.concat([claims_df.filter(~pl.col("claim_id").is_in(ids)), rows]).sort("claim_id"),
            ledger_df.filter(~pl.col("claim_id").is_in(ids)))


Part = pl.DataFrame | Path  # a partition's claims-table or periods-table rows, or the file holding them (``_parts``)


def _parts(claims: pl.DataFrame, periods: pl.DataFrame | None, key: pl.Expr, n: int, folder: Path) -> list[tuple[Part, Part | None]]:
    """The claims-table and periods-table rows of each partition 0..n-1 (``key``, an expression
    of ``claim_id``), each table split in one pass. Several partitions' rows are written to
    ``folder`` (Arrow IPC) and given by path, read by the partition that decides them
    (``_read_part``): the planning process, which decides partitions too, then holds none of
    them while it decides (memory, issue 18)."""
    if n > 1:
        folder.mkdir(parents=True, exist_ok=True)

    def split(table: pl.DataFrame, name: str) -> list[Part]:
        parts = table.with_columns(key.alias("_key")).partition_by("_key", as_dict=True, include_key=False, maintain_order=True)
        if n == 1:
            return [parts.get((0,), table.clear())]
        out = []
        for k in range(n):
            out.append(folder / f"{name}-{k}.arrow")
            parts.pop((k,), table.clear()).write_ipc(out[-1])
        return out

    return list(zip(split(claims, "claims"), split(periods, "periods") if periods is not None else [None] * n))


def _read_part(part: Part | None) -> pl.DataFrame | None:
    """A partition's rows as ``_parts`` gave them."""
    return pl.read_ipc(part, memory_map=False) if isinstance(part, Path) else part


class OutOfClaimOrder(Exception):
    """A partition read as a run of claim-ordered rows holds a row of another partition's claim."""


def _decide_all(mapper: Mapper, args: list[tuple], on_progress: Callable[[int, int], None] | None,
                decide: Callable | None = None, keep: Callable[[int, PartitionResult], PartitionResult] | None = None,
                ) -> list[tuple[int, PartitionResult]]:
    """Every partition's result (what ``keep`` keeps of it), in partition order. ``args`` is
    consumed: each partition's inputs are let go as it is handed out. Progress is told as each
    one is done (so a run restarted by ``OutOfClaimOrder`` may have told some)."""
    results = []
    indexed = [(k, *args.pop(0)) for k in range(len(args))]
    for k, res in mapper(decide or _decide_indexed, indexed):
        if on_progress:
            on_progress(res.rows, res.claims.height)
        results.append((k, keep(k, res) if keep else res))
    return sorted(results, key=lambda r: r[0])


def _spill(folder: Path) -> Callable[[int, PartitionResult], PartitionResult]:
    """``keep`` of the batch: a partition's claims rows written to ``folder`` as they arrive
    (Arrow IPC, ``_spilled``), as its ledger rows were where it was decided (``_ledger_written``),
    and read back only to write the outputs, so that a run does not hold every partition's rows
    while it decides the others (memory, issue 18)."""
    folder.mkdir(parents=True, exist_ok=True)

    def keep(k: int, result: PartitionResult) -> PartitionResult:
        result.claims.write_ipc(_spilled(folder, k, "claims"))
        return replace(result, claims=result.claims.clear())

    return keep


def _spilled(folder: Path, k: int, table: str) -> Path:
    return folder / f"{table}-{k}.arrow"


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


def _decide_indexed(
    k: int, claims: Part, periods: Part | None, payroll: PayrollSource, jsonl: bool, sets: list | None = None, ledgers: Path | None = None,
) -> tuple[int, PartitionResult | list[PartitionResult]]:
    """Partition ``k`` decided (``partition.decide_partition``). Its payroll rows are read on a
    polars thread from the start, and the rules' modules are imported meanwhile, the first time:
    here, not at the top, so that a process reads while it imports them (0.1 s of start-up).
    With ``sets`` (parameter sets, ``analysis.reform``): decided under each, from the one reading
    (and what the scenarios share, ``decide_partition``'s ``shared``), a result for each. With
    ``ledgers``, each result's ledger rows are written there (``_ledger_written``)."""
    claims, periods = _read_part(claims), _read_part(periods)
    ids = sorted({cid for cid in claims.get_column("claim_id").to_list() if cid})  # a claim's code is its place here
    if payroll.coded and kind_of(Path(payroll.path)) == "parquet":
        # The read of such a table starts by importing pyarrow (``tables.read_coded``), Python that
        # holds the interpreter's lock; beside the rules' import it took turns with it and both
        # finished late. Imported here first, the read decodes from its start (1.12M rows:
        # 0.02-0.04 s sooner, benchmarks/batch.md).
        import pyarrow.parquet  # noqa: F401
    with _collector_paused(), prompt_handoffs(), ThreadPoolExecutor(max_workers=1) as polars_thread:
        reading = polars_thread.submit(read_rows, payroll, ids)
        if sets is None:
            return k, _ledger_written(_rules()(claims, periods, payroll, jsonl, ids, reading), ledgers, k)
        shared: dict = {}
        results = [_ledger_written(_rules()(claims, periods, payroll, jsonl, ids, reading, params, shared), ledgers, k, i)
                   for i, params in enumerate(sets)]
        # let go of what the scenarios shared (every claim's header, Prepared, Figures) while the
        # collector is still paused: reference counting frees it; alive when the collector comes
        # back, its first pass scanned all of it (0.12 s a partition of 1.6 million rows)
        del shared
        return k, results


def _ledger_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _ledger_written(result: PartitionResult, folder: Path | None, k: int, i: int = 0) -> PartitionResult:
    """``result`` with its ledger rows (six times its claims' rows, most of what it holds) written
    to ``folder`` (Arrow IPC; ``i``: the parameter set's place) by the process that decided them,
    and read back where they are used (``PartitionResult.ledger_rows``), rather than sent back
    through the process pool's pipe, 4-5 ms a megabyte, during which the worker waited for its
    next partition: a reform's worker at 142M rows waited 3.8 s between its 24 partitions, 0.9 s
    so (benchmarks/reform.md)."""
    if folder is None:
        return result
    path = _spilled(folder, k, f"ledger-{i}")
    result.ledger.write_ipc(path)
    return replace(result, ledger=result.ledger.clear(), ledger_file=path)


@functools.cache
def _rules() -> Callable:
    """``partition.decide_partition``, imported once a process. What is alive then (the modules
    just imported, the interpreter's own objects) lives as long as the process: frozen out of the
    collector's reach, it is not scanned again between partitions nor at the process's end (0.1 s
    of a 9-million-row run). Reference counting frees as ever."""
    from .partition import decide_partition

    gc.freeze()
    return decide_partition
