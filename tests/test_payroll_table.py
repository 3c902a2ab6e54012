"""The header-plus-payroll-table form of FORMAT.md: CSV, Parquet and Excel, per-row basis (a
temporary hire made permanent), errors located at the table's row."""

from __future__ import annotations

import json

import polars as pl
import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import EXAMPLES, load_doc


def example_as_table(name: str) -> tuple[dict, pl.DataFrame]:
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    rows = []
    for e in doc.pop("employees"):
        for m, h in e["hours"].items():
            rows.append({"employee_id": e["id"], "month": m, "hours": str(h), "basis": e["basis"],
                         "ownership_interest": str(e["ownership_interest"]).lower(), "owner_relation": e["owner_relation"] or ""})
    return doc, pl.DataFrame(rows)


def write_header(tmp_path, doc, table_name):
    doc = {**doc, "payroll": table_name}
    p = tmp_path / "claim.json"
    p.write_text(json.dumps(doc, default=str))
    return p


@pytest.mark.parametrize("kind", ["csv", "parquet", "xlsx"])
def test_table_forms_give_the_same_determination(tmp_path, kind):
    name = "03-part-time-equivalents"
    doc, table = example_as_table(name)
    path = tmp_path / f"payroll.{kind}"
    if kind == "csv":
        table.write_csv(path)
    elif kind == "parquet":
        table.with_columns(pl.col("hours").cast(pl.Float64)).write_parquet(path)  # numbers as a real export has them
    else:
        from openpyxl import Workbook

        wb = Workbook()
        ws = wb.active
        ws.append(table.columns)
        for row in table.iter_rows():
            ws.append([float(v) if c == "hours" else v for c, v in zip(table.columns, row)])
        wb.save(path)
    header = write_header(tmp_path, doc, path.name)
    got = qmcredit.decide(qmcredit.load_claim(header)).to_dict(explain=False)
    want = qmcredit.decide(qmcredit.load_claim(EXAMPLES / f"{name}.claim.json")).to_dict(explain=False)
    for k in ("average_positions", "credit", "periods", "carried_forward"):
        assert got[k] == want[k]


def test_per_row_basis_temporary_made_permanent(tmp_path):
    doc, _ = example_as_table("01-expansion-cap-carryforward")
    rows = "employee_id,month,hours,basis\n" + "".join(
        f"T,{m},160,{'temporary' if i < 3 else 'permanent'}\n" for i, m in enumerate(["2004-04", "2004-05", "2004-06", "2004-07", "2004-08"]))
    (tmp_path / "p.csv").write_text(rows)
    det = qmcredit.decide(qmcredit.load_claim(write_header(tmp_path, doc, "p.csv")))
    statuses = [r["status"] for r in det.employee_month_rows()]
    assert statuses == ["part_time_equivalent"] * 3 + ["full_time"] * 2


def test_table_errors_name_the_csv_line(tmp_path):
    doc, _ = example_as_table("01-expansion-cap-carryforward")
    (tmp_path / "p.csv").write_text("employee_id,month,hours\nA,2004-04,160\nA,2004-04,100\nB,2004-31,5\n,2004-05,1\n")
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(write_header(tmp_path, doc, "p.csv"))
    found = [(p.location, p.message.split(":")[0]) for p in e.value.problems]
    assert found == [("p.csv line 3", "employee A has more than one row for 2004-04 (first at p.csv line 2); give one row per employee and month"),
                     ("p.csv line 4", "month"), ("p.csv line 5", "employee_id")]


def test_missing_table_and_missing_columns(tmp_path):
    doc, _ = example_as_table("01-expansion-cap-carryforward")
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(write_header(tmp_path, doc, "nope.csv"))
    assert "not found" in e.value.problems[0].message
    (tmp_path / "p.csv").write_text("employee,month,hrs\n")
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(write_header(tmp_path, doc, "p.csv"))
    assert "missing column(s) employee_id;" in e.value.problems[0].message  # issue 13: 'hrs' is read as hours
    (tmp_path / "p.parquet").write_bytes(b"not parquet")
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(write_header(tmp_path, doc, "p.parquet"))
    assert "cannot be read as parquet" in e.value.problems[0].message


@pytest.mark.parametrize("categorical", [False, True])
def test_typed_columns_are_gathered_alike_by_either_engine(categorical):
    """``lookup`` gathers every row's typed values by the streaming engine, ``check`` its few rows'
    by the in-memory one: the same values, nulls and bad values included."""
    from qmcredit.payroll import _lookup, _typed, _with_raw_columns

    raw = pl.DataFrame({
        "employee_id": [" e1", "e2", None, "e1 "], "month": ["2004-01", "bad", None, "2004-02"], "hours": ["1", "x", None, "2.5"],
        "basis": ["", "temporary", None, "weird"], "ownership_interest": ["yes", "", None, "maybe"], "owner_relation": ["", "spouse", None, "cousin"],
    })
    index, tables = _lookup(_with_raw_columns(pl.concat([raw] * 3)))
    names = {n for t in tables.values() for n in t.columns} - {"_bad"}  # each table's own, as check gathers them
    as_text = lambda cols: pl.DataFrame(cols).with_columns(pl.col(pl.Categorical).cast(pl.Utf8))  # noqa: E731 (each call has categories of its own)
    assert as_text(_typed(index, tables, names, categorical)).equals(as_text(_typed(index, tables, names, categorical, engine="streaming")))
