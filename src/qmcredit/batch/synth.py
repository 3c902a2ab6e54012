"""A synthetic statewide data set for the batch engine, its tests and its benchmark.

Firms follow a Pareto law of sizes (most have a handful of employees, a few have thousands);
staff are hired and separate, work full time, part time or a few hours, some temporary or
seasonal (summer months only); small firms have working owners and relatives; returns follow
calendar or fiscal years, with liabilities, minimum taxes, AMAs and other credits; a few claims
are ineligible, undecidable (missing minimum tax) or carry bad data, header or payroll. Nothing is
tuned to the engine: the figures come from the law of the data, not from the rules.

Claims are drawn one by one with ``random.Random(seed)``; employees and employee-months are drawn
column-wise with seeded hashes in polars, so any size streams to disk in chunks of claims.
Reproducible for a given seed and polars version.
"""

from __future__ import annotations

import calendar
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from .tables import CLAIM_FIELDS, PAYROLL_COLUMNS, PERIOD_FIELDS

PAYROLL_HEADER_INVALID = ("bad_date", "missing_tax", "overlap", "unknown_option", "fraction_cent", "bad_flag")
ROW_INVALID = ("hours_text", "negative", "bad_month", "duplicate", "too_precise", "too_many", "bad_basis", "bad_owner", "no_employee")
_U64 = float(2**64)


@dataclass(frozen=True)
class Firm:
    no: int
    claim_id: str
    base_idx: int   # first month of the base period (W3), as a month index
    size: int       # staff before credit year one
    hires: int      # hired during the credit years
    cut: int        # first month not written (as_of), or past the data
    corrupt: str | None


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _amount(rng: random.Random, hi: int) -> str:
    return f"{rng.randrange(0, hi)}.{rng.randrange(100):02d}"


def _periods(rng: random.Random, y1_start: date, tax: str) -> list[dict]:
    fy_end = rng.choices((12, 6, 3, 9), (70, 12, 9, 9))[0]
    year = y1_start.year - 1
    out = []
    for y in range(year, year + rng.randint(4, 9)):
        start = date(y, 1, 1) if fy_end == 12 else date(y - 1, fy_end + 1, 1)
        p = {"start": start.isoformat(), "end": _month_end(y, fy_end).isoformat(),
             "liability": _amount(rng, rng.choice((2_000, 40_000, 400_000)))}
        if tax == "cbt":
            if rng.random() < 0.9 or start.year < 2002:
                p["minimum_tax"] = rng.choice(("500.00", "750.00", "1500.00", "2000.00"))
            elif rng.random() < 0.97:  # else neither: the claim cannot be decided (L2)
                p["nj_gross_receipts"] = _amount(rng, 5_000_000)
                p["s_corporation"] = rng.random() < 0.3
            if 2002 <= start.year <= 2006 and rng.random() < 0.2 and not p.get("s_corporation"):  # L2b: no AMA for an S corporation
                p["alternative_minimum_assessment"] = _amount(rng, 20_000)
        if rng.random() < 0.2:
            p["other_credits"] = [{"name": rng.choice(("Research and development", "Urban transit hub", "Manufacturing equipment")),
                                   "amount": _amount(rng, 10_000), "order": rng.choice(("before", "after"))}]
        out.append(p)
    return out


def _firm(no: int, rng: random.Random, invalid_share: float) -> tuple[Firm, dict]:
    """One claim: the firm's shape and its FORMAT.md header document."""
    size = min(5000, int(2.5 * (1 - rng.random()) ** (-1 / 1.15)))
    began = date(rng.randint(2001, 2011), rng.randint(1, 12), rng.choice((1, rng.randint(2, 28))))
    options = {}
    if rng.random() < 0.15:
        options = rng.choice(({"whole_positions": True}, {"part_time_excludes_temporary": True},
                              {"year_one_start": "same_month_if_first_day"}, {"refund": False},
                              {"carryforward_periods": None}, {"insurer_limits": "cbt"}))
    tax = rng.choices(("cbt", "insurance_premiums", "gross_income_tax"), (85, 12, 3))[0]
    y1 = began.year * 12 + began.month - 1 + (0 if options.get("year_one_start") and began.day == 1 else 1)
    y1_start = date(y1 // 12, y1 % 12 + 1, 1)
    doc: dict = {
        "taxpayer": {"id": f"22-{no:07d}", "name": f"Firm {no}", "tax": tax, "uez_benefit": rng.random() < 0.03},
        "location": {"municipality": rng.choices(("Camden", "Camden City", "camden", "Trenton"), (85, 6, 5, 4))[0],
                     "address": f"{rng.randint(1, 2000)} Market St", "operations_began": began.isoformat(),
                     "operations_source": "certificate of occupancy"},
        "periods": _periods(rng, y1_start, tax),
    }
    if rng.random() < 0.03:
        doc["taxpayer"]["earlier_credit_period_start"] = f"{y1 // 12 - rng.randint(1, 5):04d}-{y1 % 12 + 1:02d}"
    if options:
        doc["options"] = options
    cut = y1 + 40
    if rng.random() < 0.05:  # decided before the data is complete: months from as_of on are unknown
        cut = y1 + rng.randint(14, 23)
        last = cut - 1
        doc["as_of"] = _month_end(last // 12, last % 12 + 1).isoformat()
    corrupt = None
    if rng.random() < invalid_share:
        corrupt = rng.choice(PAYROLL_HEADER_INVALID + ROW_INVALID)
        if corrupt == "bad_date":
            doc["location"]["operations_began"] = f"{began.year}-02-30"
        elif corrupt == "missing_tax":
            del doc["taxpayer"]["tax"]
        elif corrupt == "overlap":
            doc["periods"].insert(1, dict(doc["periods"][0]))
        elif corrupt == "unknown_option":
            doc["options"] = {"whole_position": True}
        elif corrupt == "fraction_cent":
            doc["periods"][0]["liability"] = "1200.125"
        elif corrupt == "bad_flag":
            doc["taxpayer"]["uez_benefit"] = "maybe"
    hires = int(size * rng.choice((0, 0.1, 0.3, 0.6))) + (rng.random() < 0.5)
    return Firm(no, f"C{no:08d}", y1 - 12, size, hires, cut, corrupt), doc


def _u(key: pl.Expr, k: int, seed: int) -> pl.Expr:
    """A uniform draw in [0, 1) from a seeded hash (column-wise randomness)."""
    return key.hash(seed=seed * 7919 + k).cast(pl.Float64) / _U64


def _payroll(firms: list[Firm], seed: int) -> pl.DataFrame:
    """The employee-month rows of some firms (text columns, as a payroll export has them)."""
    f = pl.DataFrame({
        "no": [x.no for x in firms], "claim_id": [x.claim_id for x in firms], "base_idx": [x.base_idx for x in firms],
        "size": [x.size for x in firms], "hires": [x.hires for x in firms], "cut": [x.cut for x in firms],
    }, schema={"no": pl.Int64, "claim_id": pl.Utf8, "base_idx": pl.Int64, "size": pl.Int64, "hires": pl.Int64, "cut": pl.Int64})
    e = f.with_columns(pl.int_ranges(0, pl.col("size") + pl.col("hires")).alias("emp")).explode("emp", empty_as_null=False)
    key = pl.col("no") * 1_048_576 + pl.col("emp")
    small = pl.col("size") <= 20
    owner = (pl.col("emp") == 0) & small & (_u(key, 1, seed) < 0.5)
    relative = (pl.col("emp") == 1) & small & (_u(key, 1, seed) < 0.25)
    u2, u3, u4, u5, u6 = (_u(key, k, seed) for k in (2, 3, 4, 5, 6))
    e = e.with_columns(
        owner.alias("owner"),
        pl.when(relative).then(pl.when(u2 < 0.5).then(pl.lit("spouse")).otherwise(pl.lit("descendant"))).alias("relation"),
        pl.when(u2 < 0.05).then(pl.lit("temporary")).when(u2 < 0.10).then(pl.lit("seasonal")).otherwise(pl.lit("permanent")).alias("basis"),
        pl.when(u3 < 0.68).then(0).when(u3 < 0.93).then(1).otherwise(2).alias("schedule"),
        pl.when(pl.col("emp") < pl.col("size"))
        .then(pl.col("base_idx") - 12 + (u4 * pl.when(u5 < 0.85).then(12).otherwise(30)).cast(pl.Int64))
        .otherwise(pl.col("base_idx") + 12 + (u4 * 24).cast(pl.Int64)).alias("start"),
    ).with_columns(
        pl.when(u6 < 0.25).then(pl.col("start") + 1 + (u5 * 36).cast(pl.Int64)).otherwise(pl.col("cut")).alias("end"),
    )
    lo = pl.max_horizontal(pl.col("start"), pl.col("base_idx") - 1)
    hi = pl.min_horizontal(pl.col("end"), pl.col("base_idx") + 37, pl.col("cut"))
    r = e.with_columns(pl.int_ranges(lo, pl.max_horizontal(lo, hi)).alias("idx")).explode("idx", empty_as_null=False)
    r = r.filter((pl.col("basis") != "seasonal") | pl.col("idx").mod(12).is_between(4, 7))
    ur = _u(key * 64 + pl.col("idx") - pl.col("base_idx") + 1, 9, seed)
    quarters = (
        pl.when(pl.col("schedule") == 0).then(4 * 135 + (ur * 4 * 55).cast(pl.Int64))
        .when(pl.col("schedule") == 1).then(4 * 60 + (ur * 4 * 70).cast(pl.Int64))
        .otherwise(4 * 5 + (ur * 4 * 55).cast(pl.Int64))
    )
    frac = quarters.mod(4)
    hours = (quarters // 4).cast(pl.Utf8) + pl.when(frac == 0).then(pl.lit("")).when(frac == 1).then(pl.lit(".25")).when(frac == 2).then(pl.lit(".5")).otherwise(pl.lit(".75"))
    month = pl.format("{}-{}", (pl.col("idx") // 12).cast(pl.Utf8).str.zfill(4), (pl.col("idx").mod(12) + 1).cast(pl.Utf8).str.zfill(2))
    return r.select(
        "claim_id", pl.format("E{}", pl.col("emp")).alias("employee_id"), month.alias("month"), hours.alias("hours"),
        "basis", pl.when(pl.col("owner")).then(pl.lit("true")).otherwise(pl.lit("false")).alias("ownership_interest"),
        pl.col("relation").alias("owner_relation"),
    )


_ROW_FIX = {
    "hours_text": ("hours", "about 40"), "negative": ("hours", "-8"), "bad_month": ("month", "2004-13"),
    "too_precise": ("hours", "12.1234567"), "too_many": ("hours", "800"), "bad_basis": ("basis", "contract"),
    "bad_owner": ("ownership_interest", "maybe"), "no_employee": ("employee_id", " "),
}


def _corrupt_rows(rows: pl.DataFrame, firms: list[Firm]) -> pl.DataFrame:
    """Bad payroll data for the firms drawn to have it: one bad value, or a duplicated row."""
    for firm in firms:
        if firm.corrupt not in ROW_INVALID:
            continue
        idx = rows.with_row_index("_i").filter(pl.col("claim_id") == firm.claim_id).get_column("_i")
        if idx.len() == 0:
            continue
        i = idx[idx.len() // 2]
        if firm.corrupt == "duplicate":
            rows = pl.concat([rows[: i + 1], rows[i : i + 1], rows[i + 1 :]])
        else:
            col, value = _ROW_FIX[firm.corrupt]
            rows = rows.with_columns(rows.get_column(col).scatter(i, value))
    return rows


def claim_rows(no_docs: list[tuple[Firm, dict]]) -> tuple[list[dict], list[dict]]:
    """Header documents -> claims-table rows and periods-table rows (docs/batch.md), all text."""
    claims, periods = [], []
    flag = lambda v: None if v is None else (("true" if v else "false") if isinstance(v, bool) else str(v))  # noqa: E731
    for firm, doc in no_docs:
        row = {"claim_id": firm.claim_id}
        for column, (obj, fld) in CLAIM_FIELDS.items():
            row[column] = flag((doc[obj] if obj else doc).get(fld))
        row["options"] = json.dumps(doc["options"]) if "options" in doc else None
        claims.append(row)
        for p in doc.get("periods", []):
            prow = {"claim_id": firm.claim_id, **{k: flag(p.get(k)) for k in PERIOD_FIELDS}}
            prow["other_credits"] = json.dumps(p["other_credits"]) if "other_credits" in p else None
            periods.append(prow)
    return claims, periods


def generate(claims: int, seed: int, invalid_share: float = 0.03, chunk: int = 5000) -> Iterator[tuple[list[tuple[Firm, dict]], pl.DataFrame]]:
    """Chunks of (firms with their header documents, payroll rows), ``claims`` in all."""
    rng = random.Random(seed)
    for lo in range(0, claims, chunk):
        firms = [_firm(no, rng, invalid_share) for no in range(lo, min(claims, lo + chunk))]
        rows = _corrupt_rows(_payroll([f for f, _ in firms], seed), [f for f, _ in firms])
        yield firms, rows


def write(out: Path, claims: int, seed: int, *, kind: str = "parquet", invalid_share: float = 0.03,
          on_chunk=None) -> dict[str, Path]:
    """Write ``claims.<kind>``, ``periods.<kind>`` and ``payroll.<kind>`` into ``out``; returns
    their paths. ``on_chunk(claims, rows)`` is told as each chunk is written."""
    import pyarrow.parquet as pq  # here: the batch command, which imports this module, does not need it

    out.mkdir(parents=True, exist_ok=True)
    paths = {n: out / f"{n}.{kind}" for n in ("claims", "periods", "payroll")}
    all_claims, all_periods = [], []
    writer = None
    text = {c: pl.Utf8 for c in PAYROLL_COLUMNS}
    with open(paths["payroll"], "wb") as sink:
        for i, (firms, rows) in enumerate(generate(claims, seed, invalid_share)):
            c, p = claim_rows(firms)
            all_claims += c
            all_periods += p
            rows = rows.cast(text)
            if kind == "csv":
                rows.write_csv(sink, include_header=i == 0)
            else:
                table = rows.to_arrow()
                writer = writer or pq.ParquetWriter(sink, table.schema, compression="zstd")
                writer.write_table(table)
            if on_chunk:
                on_chunk(len(firms), rows.height)
        if writer is not None:
            writer.close()
    cschema = {"claim_id": pl.Utf8, **{c: pl.Utf8 for c in CLAIM_FIELDS}, "options": pl.Utf8}
    pschema = {"claim_id": pl.Utf8, **{c: pl.Utf8 for c in PERIOD_FIELDS}, "other_credits": pl.Utf8}
    for name, rows, schema in (("claims", all_claims, cschema), ("periods", all_periods, pschema)):
        df = pl.DataFrame(rows, schema=schema)
        df.write_csv(paths[name]) if kind == "csv" else df.write_parquet(paths[name])
    return paths


def documents(claims: int, seed: int, invalid_share: float = 0.03) -> Iterator[tuple[str, dict]]:
    """(claim id, header document) of each generated claim, as ``write`` puts it in the tables:
    for ``qmcredit.decide`` to check the batch against."""
    rng = random.Random(seed)
    for no in range(claims):
        firm, doc = _firm(no, rng, invalid_share)
        yield firm.claim_id, doc
