"""The batch path decides every claim exactly as the single-claim path does (one code path)."""

from __future__ import annotations

import itertools
import json

import polars as pl
import pytest

from qmcredit.batch import engine

from .conftest import CLAIMS


def run(generated, kind, out, **kw):
    paths = generated[kind]
    return engine.run(paths["claims"], paths["payroll"], out, periods=paths["periods"], jsonl=True, **kw)


def lines(out) -> dict[str, dict]:
    with open(out / "determinations.jsonl", encoding="utf-8") as f:
        return {d["claim_id"]: d for d in map(json.loads, f)}


def test_batch_equals_single_claim_decide_including_invalid(generated, oracle, tmp_path):
    summary = run(generated, "parquet", tmp_path)
    got = lines(tmp_path)
    assert set(got) == set(oracle) and len(got) == CLAIMS
    mismatched = [cid for cid in oracle if got[cid] != oracle[cid]]
    assert not mismatched, (mismatched[:3], got[mismatched[0]], oracle[mismatched[0]])
    invalid = {cid for cid, d in oracle.items() if "error" in d}
    assert 20 < len(invalid) < CLAIMS // 4  # the generator makes some of every kind, and not too many
    assert summary.invalid == len(invalid) and summary.decided == CLAIMS - len(invalid)


def _year_one(period: dict) -> dict:
    """L4: a determination period's year of origin one (Form 313 Part V), as the ledger's columns."""
    o = period["detail"]["origins"].get("year_one", {})
    pairs = {"allowed_year_one": "allowed", "applied_year_one": "applied", "forfeited_year_one": "forfeited", "carried_forward_year_one": "closing"}
    return {col: None if period["applied"] is None else o.get(k, "0.00") for col, k in pairs.items()}


def test_key_figures_are_the_determinations_figures(generated, oracle, tmp_path):
    run(generated, "parquet", tmp_path)
    claims = pl.read_parquet(tmp_path / "claims.parquet")
    ledger = pl.read_parquet(tmp_path / "ledger.parquet")
    assert claims.height == CLAIMS and claims.get_column("claim_id").is_sorted()
    periods = ledger.partition_by("claim_id", as_dict=True, maintain_order=True)
    for row in claims.iter_rows(named=True):
        want = oracle[row["claim_id"]]
        if "error" in want:
            assert row["status"] == "invalid" and json.loads(row["problems"]) == want["problems"]
            continue
        assert row["status"] == "decided" and row["eligible"] == want["eligible"]
        assert [row["average_base"], row["average_year_one"], row["average_year_two"]] == list(want["average_positions"].values())
        assert [row["new_year_one"], row["new_year_two"]] == list(want["new_positions"].values())
        assert [row["credit_year_one"], row["credit_year_two"]] == list(want["credit"].values())
        assert (row["sustained_effort_ratio"], row["refund"], row["carried_forward"]) == (want["sustained_effort_ratio"], want["refund"], want["carried_forward"])
        mine = periods.get((row["claim_id"],))
        got = [] if mine is None else [
            {**r, "start": r["start"].isoformat(), "end": r["end"].isoformat()} for r in mine.drop("claim_id", "period").iter_rows(named=True)
        ]
        assert got == [{**{k: p[k] for k in ("start", "end", "allowed", "room", "applied", "refund", "forfeited", "carried_forward")}, **_year_one(p)}
                       for p in want["periods"]]


def test_quiet_periods_written_once_are_written_as_any_other_line(generated, tmp_path, monkeypatch):
    """``key_figures`` writes the periods in which nothing moves (``ledger.QUIET``) once for all of
    them: the text of each is what the same line written as any other gives."""
    from qmcredit.batch import partition
    from qmcredit.law.ledger import QUIET, Line

    seen, real = [], partition.key_figures
    monkeypatch.setattr(partition, "key_figures", lambda prepared, figs: seen.append((prepared, figs)) or real(prepared, figs))
    run(generated, "parquet", tmp_path)
    assert seen and any(ln is QUIET for _, figs in seen for f in figs for ln in f.lines)
    for prepared, figs in seen:
        written = [f._replace(lines=tuple(Line(*ln) if ln is QUIET else ln for ln in f.lines)) for f in figs]  # equal, not the same object
        (claims, ledger), (claims_too, ledger_too) = real(prepared, figs), real(prepared, written)
        assert claims.equals(claims_too) and ledger.equals(ledger_too) and ledger.schema == ledger_too.schema


def test_frames_built_column_by_column_are_the_frames_read_row_by_row():
    """``key_figures`` builds its frames from rows column by column (``partition._columns``): the
    same frame, types and values (nulls, integers past 64 bits) as polars reading the rows, and
    an empty frame with the schema when there are none."""
    from qmcredit.batch import partition

    schema = {"claim_id": pl.Utf8, "eligible": pl.Boolean, "c1": pl.Int128, "rn": pl.Int128}
    rows = [("C1", True, 250_000, None), ("C2", None, 2**100, 7), ("C3", False, 0, 0)]
    built = partition._columns(rows, schema)
    assert built.equals(pl.DataFrame(rows, orient="row", schema=schema)) and built.schema == pl.Schema(schema)
    empty = partition._columns([], schema)
    assert empty.height == 0 and empty.schema == pl.Schema(schema)


def test_bad_rows_are_reported_not_dropped(generated, oracle, tmp_path):
    summary = run(generated, "parquet", tmp_path)
    claims = pl.read_parquet(tmp_path / "claims.parquet")
    row_problems = claims.filter(pl.col("problems").str.contains("payroll.parquet line"))
    assert row_problems.height > 0 and summary.bad_rows >= row_problems.height
    assert summary.claims == summary.decided + summary.invalid == CLAIMS
    assert json.loads((tmp_path / "summary.json").read_text())["bad_rows"] == summary.bad_rows


def test_csv_input_and_partitions_give_the_same_outputs(generated, tmp_path):
    run(generated, "parquet", tmp_path / "one")
    run(generated, "csv", tmp_path / "csv", rows_per_partition=50_000)
    for name in ("claims.parquet", "ledger.parquet"):
        a = pl.read_parquet(tmp_path / "one" / name)
        b = pl.read_parquet(tmp_path / "csv" / name)
        if name == "claims.parquet":  # the same bad rows, named by CSV line instead of Parquet row
            b = b.with_columns(pl.col("problems").str.replace_all(r"payroll\.csv line (\d+)", "ROW"))
            a = a.with_columns(pl.col("problems").str.replace_all(r"payroll\.parquet line (\d+)", "ROW"))
        assert a.equals(b), name


def test_payroll_rows_of_unknown_claims_are_counted(tmp_path):
    claims = tmp_path / "claims.csv"
    claims.write_text(
        "claim_id,taxpayer_id,tax,municipality,operations_began,periods\n"
        'A,22-1,cbt,Camden,2004-03-15,"[{""start"": ""2005-01-01"", ""end"": ""2005-12-31"", ""liability"": ""1000.00"", ""minimum_tax"": ""500.00""}]"\n'
    )
    payroll = tmp_path / "payroll.csv"
    payroll.write_text("claim_id,employee_id,month,hours\nA,E1,2004-05,160\nZ,E1,2004-05,160\nA,E2,2004-05,lots\n")
    summary = engine.run(claims, payroll, tmp_path / "out", jsonl=True)
    assert (summary.orphan_rows, summary.orphan_claims, summary.bad_rows, summary.invalid) == (1, ["Z"], 1, 1)
    (line,) = lines(tmp_path / "out").values()
    assert line["problems"] == [{"location": "payroll.csv line 4", "message": "hours: 'lots' is not a number of hours; write e.g. 152.5"}]


def test_local_processes_give_the_same_outputs(generated, tmp_path):
    """--jobs: partitions decided by spawned worker processes, each reading its claims' rows from
    the table itself (the whole table fits the memory budget) or from the partition pass."""
    paths = generated["parquet"]
    shuffled = tmp_path / "payroll.parquet"  # out of claim order: partitioned by claim hash
    pl.read_parquet(paths["payroll"]).sample(fraction=1.0, shuffle=True, seed=3).write_parquet(shuffled)
    engine.run(paths["claims"], shuffled, tmp_path / "one", periods=paths["periods"], jsonl=True)
    summary = engine.run(paths["claims"], shuffled, tmp_path / "jobs", periods=paths["periods"], jsonl=True, jobs=2, rows_per_process=1)
    assert summary.partitions == 2
    summary = engine.run(paths["claims"], shuffled, tmp_path / "split", periods=paths["periods"], jsonl=True, jobs=2, rows_per_process=1,
                         rows_per_partition=50_000)
    assert summary.partitions > 2
    for name in ("claims.parquet", "ledger.parquet", "determinations.jsonl"):
        one = (tmp_path / "one" / name).read_bytes()
        assert (tmp_path / "jobs" / name).read_bytes() == one, name
        assert (tmp_path / "split" / name).read_bytes() == one, name


def test_a_small_table_is_decided_without_worker_processes(generated, tmp_path):
    """A worker process is started only for each ``rows_per_process`` payroll rows: below that,
    starting one costs more than it saves."""
    summary = run(generated, "parquet", tmp_path / "small", jobs=2)
    assert summary.partitions == 1


def test_claim_ordered_tables_need_no_split_pass(generated, tmp_path):
    """A Parquet table in claim order (by its row groups' claim_id statistics) is partitioned by
    runs of row groups, each read by its worker; the outputs are those of every other path."""
    paths = generated["parquet"]
    table = pl.read_parquet(paths["payroll"])
    ordered = tmp_path / "ordered" / "payroll.parquet"
    ordered.parent.mkdir()
    table.write_parquet(ordered, row_group_size=20_000)
    ranges = engine.claim_ranges(ordered, 100_000, 2)
    assert ranges is not None and len(ranges) > 2
    assert sum(r.count for r in ranges) == table.height and ranges[0].low is None and ranges[-1].high is None
    run(generated, "parquet", tmp_path / "one")
    summary = engine.run(paths["claims"], ordered, tmp_path / "ranges", periods=paths["periods"], jsonl=True, jobs=2, rows_per_process=1, rows_per_partition=200_000)
    assert summary.partitions == len(engine.claim_ranges(ordered, 100_000, 2))
    for name in ("claims.parquet", "ledger.parquet", "determinations.jsonl"):
        assert (tmp_path / "ranges" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name


def test_tables_out_of_claim_order_are_split_by_hash(generated, tmp_path):
    table = pl.read_parquet(generated["parquet"]["payroll"])
    shuffled = tmp_path / "payroll.parquet"
    table.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(shuffled, row_group_size=20_000)
    assert engine.claim_ranges(shuffled, 100_000, 2) is None
    one_group = tmp_path / "one.parquet"
    table.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(one_group, row_group_size=10**7)
    assert engine.claim_ranges(one_group, 100_000, 2) is None  # no claim order inside the group: nowhere to cut


def test_a_row_group_in_claim_order_is_cut_where_its_claim_changes(generated, tmp_path):
    """Partitions of about equal size (the processes kept equally busy) are cut inside a row
    group whose claim ids are in order, each before the first row of a claim."""
    table = pl.read_parquet(generated["parquet"]["payroll"])
    one_group = tmp_path / "one.parquet"
    table.write_parquet(one_group, row_group_size=10**7)
    ranges = engine.claim_ranges(one_group, table.height // 3, 2)
    assert len(ranges) == 6 and sum(r.count for r in ranges) == table.height  # two turns of two, the last in halves
    ids = table.get_column("claim_id")
    changes = (ids != ids.shift(1)).fill_null(False).arg_true()  # the rows where a claim starts
    places = [table.height // 4, table.height // 2, 5 * table.height // 8, 6 * table.height // 8, 7 * table.height // 8]
    for k, r in enumerate(ranges):
        assert ids.slice(r.first, r.count).to_frame().filter(~r.holds()).height == 0
        if k:  # the first claim start at or after its place
            assert r.first == changes.filter(changes >= max(places[k - 1], ranges[k - 1].first + 1)).min()


@pytest.mark.parametrize("jobs", [1, 2])
def test_rows_found_out_of_claim_order_send_the_run_to_the_hash_split(generated, tmp_path, monkeypatch, jobs):
    """Statistics can mislead (a writer's truncated minimum, say): a partition that meets a row of
    another partition's claim stops the range run, and the run is split by claim hash instead
    (with ``jobs``, by new worker processes if the first ones were let go)."""
    paths = generated["parquet"]
    ordered = tmp_path / "ordered" / "payroll.parquet"
    ordered.parent.mkdir()
    pl.read_parquet(paths["payroll"]).write_parquet(ordered, row_group_size=20_000)
    right = engine.claim_ranges(ordered, 100_000, 2)
    a, b = right[0], right[1]
    moved = a.count // 2  # the cut moved back into the first partition's last claims
    wrong = [engine.ClaimRange(a.first, a.count - moved, a.low, a.high), engine.ClaimRange(b.first - moved, b.count + moved, b.low, b.high), *right[2:]]
    monkeypatch.setattr(engine, "claim_ranges", lambda *_: wrong)
    splits = []
    split = engine.split_payroll
    monkeypatch.setattr(engine, "split_payroll", lambda *a: splits.append(a) or split(*a))
    run(generated, "parquet", tmp_path / "one")
    engine.run(paths["claims"], ordered, tmp_path / "fallback", periods=paths["periods"], jsonl=True, rows_per_partition=100_000,
               jobs=jobs, rows_per_process=1)
    assert len(splits) == 1  # the hash split, after the range run stopped
    for name in ("claims.parquet", "ledger.parquet", "determinations.jsonl"):
        assert (tmp_path / "fallback" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name



def test_reading_parquet_text_as_codes_decides_as_reading_text(generated, oracle, tmp_path, monkeypatch):
    """A large Parquet table's text columns are read as their dictionary's codes
    (``tables.read_coded``), not as text; the determinations are the single-claim path's."""
    monkeypatch.setattr(engine, "CODES_FROM_ROWS", 0)
    reads = []
    read_coded = engine.read_coded
    monkeypatch.setattr(engine, "read_coded", lambda *a: reads.append(a) or read_coded(*a))
    run(generated, "parquet", tmp_path)
    assert len(reads) == 1
    got = lines(tmp_path)
    assert [cid for cid in oracle if got[cid] != oracle[cid]] == []


def test_typed_and_oddly_named_parquet_columns_read_as_codes_or_as_text_alike(generated, tmp_path, monkeypatch):
    """Columns of other types (hours as decimals, a flag as booleans) are read as text beside the
    coded ones, names are matched without regard to case and spaces, and row groups with their
    own dictionaries and runs that start inside a row group give the same codes' values."""
    paths = generated["parquet"]
    table = pl.read_parquet(paths["payroll"])
    odd = table.with_columns(
        pl.when(pl.col("hours").str.contains(r"^\d+(\.\d+)?$")).then(pl.col("hours").cast(pl.Decimal(12, 2), strict=False)).alias("hours"),
    ).rename({"employee_id": " Employee_ID ", "month": "MONTH"})
    assert odd.schema["hours"] == pl.Decimal(12, 2)
    typed = tmp_path / "typed.parquet"
    odd.write_parquet(typed, row_group_size=15_000)
    outputs = {}
    for codes in (False, True):
        monkeypatch.setattr(engine, "CODES_FROM_ROWS", 0 if codes else 10**12)
        out = tmp_path / f"codes-{codes}"
        engine.run(paths["claims"], typed, out, periods=paths["periods"], jsonl=True)
        outputs[codes] = [(out / name).read_bytes() for name in ("claims.parquet", "ledger.parquet", "determinations.jsonl")]
    assert outputs[True] == outputs[False]
    frame, coded = engine.read_coded(typed, (20_000, 30_000))  # a run from inside the second row group into the third
    assert frame.height == 30_000 and frame.get_column("_line").to_list()[:2] == [20_001, 20_002] and "hours" in frame.columns
    assert set(coded) == {"claim_id", "employee_id", "month", "basis", "ownership_interest", "owner_relation"}
    for name, (codes_, values) in coded.items():
        source = {"employee_id": " Employee_ID ", "month": "MONTH"}.get(name, name)
        assert values.gather(codes_).to_list() == odd.get_column(source).slice(20_000, 30_000).to_list(), name
    frame, coded = engine.read_coded(typed, (16_000, 14_500))  # to just after the third row group starts: its first rows decoded alone
    assert frame.get_column("_line").to_list()[-1] == 30_500 and frame.get_column("hours").to_list() == odd.get_column("hours").cast(pl.Utf8).slice(16_000, 14_500).to_list()
    for name, (codes_, values) in coded.items():
        source = {"employee_id": " Employee_ID ", "month": "MONTH"}.get(name, name)
        assert values.gather(codes_).to_list() == odd.get_column(source).slice(16_000, 14_500).to_list(), name


@pytest.mark.parametrize("codes", [True, False])
def test_empty_cells_and_tables_read_as_codes_or_as_text_alike(tmp_path, monkeypatch, codes):
    """Null cells (a row without a claim, one without an employee) and an empty table give the
    same determinations whether the Parquet text is read as codes or as text."""
    monkeypatch.setattr(engine, "CODES_FROM_ROWS", 0 if codes else 10**12)
    claims = tmp_path / "claims.csv"
    claims.write_text(
        "claim_id,taxpayer_id,tax,municipality,operations_began,periods\n"
        'A,22-1,cbt,Camden,2004-03-15,"[{""start"": ""2005-01-01"", ""end"": ""2005-12-31"", ""liability"": ""1000.00"", ""minimum_tax"": ""500.00""}]"\n'
    )
    text = {c: pl.Utf8 for c in ("claim_id", "employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation")}
    pl.DataFrame(schema=text).write_parquet(tmp_path / "empty.parquet")
    summary = engine.run(claims, tmp_path / "empty.parquet", tmp_path / "empty", jsonl=True)
    assert (summary.rows, summary.decided) == (0, 0)  # issue 14: a claim without payroll rows is a problem
    assert lines(tmp_path / "empty")["A"]["problems"][0]["location"] == "payroll"
    pl.DataFrame({"claim_id": ["A", None, "A"], "employee_id": ["E1", "E2", None], "month": ["2004-05", "2004-05", "2004-06"],
                  "hours": ["160", "10", "12"]}, schema={c: pl.Utf8 for c in ("claim_id", "employee_id", "month", "hours")}).write_parquet(
        tmp_path / "nulls.parquet")
    summary = engine.run(claims, tmp_path / "nulls.parquet", tmp_path / "nulls", jsonl=True)
    assert (summary.rows, summary.bad_rows, summary.orphan_rows, summary.orphan_claims, summary.invalid) == (3, 1, 1, [], 1)
    assert lines(tmp_path / "nulls")["A"]["problems"] == [
        {"location": "nulls.parquet line 3", "message": "employee_id: missing; every row needs the employee it is for"}]


@pytest.mark.parametrize("order", ["claim order", "shuffled"])
def test_claims_without_payroll_rows_are_found_by_the_partitions_as_by_reading_the_table(generated, oracle, tmp_path, order):
    """Issue 14: a claim no payroll row matches is refused. The partitions that read the rows tell
    which of their claims have none (``PartitionResult.unrowed``), over runs of a claim-ordered
    table or partitions by claim hash; the claims refused are those a reading of the table's
    claim ids finds, and the outputs those of one partition."""
    paths = generated["parquet"]
    table = pl.read_parquet(paths["payroll"])
    known = set(pl.read_parquet(paths["claims"]).get_column("claim_id").to_list())
    ids = [cid for cid in table.get_column("claim_id").unique(maintain_order=True).to_list() if cid in known]
    gone = {ids[0], ids[len(ids) // 2], ids[-1]}
    thinned = table.filter(~pl.col("claim_id").is_in(list(gone)))
    if order == "shuffled":
        thinned = thinned.sample(fraction=1.0, shuffle=True, seed=3)
    payroll = tmp_path / "payroll.parquet"
    thinned.write_parquet(payroll, row_group_size=20_000)
    assert (engine.claim_ranges(payroll, 100_000, 2) is None) == (order == "shuffled")
    many = engine.run(paths["claims"], payroll, tmp_path / "many", periods=paths["periods"], jsonl=True, jobs=2, rows_per_process=1,
                      rows_per_partition=200_000)
    one = engine.run(paths["claims"], payroll, tmp_path / "one", periods=paths["periods"], jsonl=True)
    assert many.partitions > 2 and one.partitions == 1
    for name in ("claims.parquet", "ledger.parquet", "determinations.jsonl"):
        assert (tmp_path / "many" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    claims = pl.read_parquet(tmp_path / "many" / "claims.parquet")
    read = engine._unmatched(paths["claims"], payroll, claims.with_columns(pl.lit("decided").alias("status")))  # every claim, by a reading
    assert set(read) == gone
    got = lines(tmp_path / "many")
    refused = {cid for cid in gone if "error" not in oracle[cid]}
    assert refused and all(got[cid]["problems"] == [engine.no_payroll_rows(cid).to_dict()] for cid in refused)


@pytest.mark.parametrize("sizes, parts, full, most", [
    ([1000] * 10, 8, 6, 2000), ([1000] * 10, 8, 6, 1250), ([1000, 300, 1000, 1000, 5000, 10], 4, 2, 3000), ([400] * 50, 10, 8, 2000), ([7000, 3000], 4, 2, 3000),
])
def test_cuts_move_to_row_group_starts_within_the_rows_per_partition(sizes, parts, full, most):
    """A run's cut moves to the row-group start next to it (the run then decodes whole groups,
    ``read_coded``) only where both runs beside it keep within ``most`` rows; the runs are as many
    as evenly spaced ones and in order."""
    rows = sum(sizes)
    even = [k * rows // parts for k in range(1, full + 1)]
    places = engine._group_places(sizes, parts, full, most)
    starts = set(itertools.accumulate(sizes[:-1]))
    bounds = [0, *places, (2 * full + 1) * rows // (2 * parts)]
    assert len(places) == len(even) and all(a < b for a, b in zip(bounds, bounds[1:]))
    assert all(p == e or (p in starts and p - a <= most and b - p <= most) for e, a, p, b in zip(even, bounds, bounds[1:], bounds[2:]))

    assert engine._group_places([1000] * 10, 8, 6, 2000) == [1000, 2000, 4000, 5000, 6000, 7000]  # evenly 1250, 2500, ...: all moved
    assert engine._group_places([7000, 3000], 4, 2, 3000) == [2500, 5000]  # a group larger than a run: nowhere to move


@pytest.mark.parametrize("coded", [False, True])
def test_read_rows_codes_claims_in_the_index_type_of_gathers(tmp_path, coded):
    """A row's claim code (its claim's place in the partition's ids) is a UInt32, polars' index
    type, as the partition gathers each claim's constants by it: never cast at each gather."""
    path = tmp_path / "payroll.parquet"
    pl.DataFrame({"claim_id": ["B", "A", "B", "Z"], "employee_id": ["e1", "e1", "e2", "e3"], "month": ["2004-01"] * 4,
                  "hours": ["160"] * 4}).write_parquet(path)
    looked, rows, orphans, with_rows = engine.read_rows(engine.PayrollSource(str(path), (f"{path.name} line ", ""), False, coded=coded), ["A", "B"])
    assert looked.typed.schema["claim_id"] == pl.UInt32
    assert looked.typed.get_column("claim_id").to_list() == [1, 0, 1]
    assert rows == 4 and orphans.to_list() == ["Z"] and sorted(with_rows.to_list()) == [0, 1]
