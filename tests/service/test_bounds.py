"""Issue 14, item 2: one upload must not take the server's memory. A payroll table is bounded in
rows, columns and (an .xlsx) unpacked size, refused before it is read; a long determination is
stored compressed and read back exactly as the engine wrote it. Over HTTP, SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest
from sqlalchemy import text

import qmcredit
from qmcredit.service import evaluate

from .conftest import example


def _header() -> str:
    doc = json.loads(example("01"))
    doc.pop("employees")
    doc["payroll"] = "payroll"
    return json.dumps(doc)


def _csv(employees: int) -> bytes:
    doc = json.loads(example("01"))
    months = list(doc["employees"][0]["hours"])
    lines = ["employee_id,month,hours,basis,ownership_interest,owner_relation"]
    lines += [f"E{e},{m},160,permanent,false," for e in range(employees) for m in months]
    return ("\n".join(lines) + "\n").encode()


def _post(office, name: str, content: bytes, media: str = "text/csv"):
    return office.client.post("/api/v1/claims", headers=office.auth("preparer"),
                              files={"claim": ("claim.json", _header(), "application/json"), "payroll": (name, content, media)})


def test_a_csv_of_too_many_rows_is_refused_before_it_is_read(office, monkeypatch):
    monkeypatch.setattr(evaluate, "MAX_PAYROLL_ROWS", 1_000)
    started = time.monotonic()
    r = _post(office, "payroll.csv", _csv(100))  # 100 employees x 36 months
    assert r.status_code == 422, r.text
    assert "3,600 rows; the office reads at most 1,000 rows" in r.json()["problems"][0]["message"]
    assert time.monotonic() - started < 5


def test_a_zip_bomb_xlsx_is_refused_from_its_declared_sizes(office, monkeypatch):
    monkeypatch.setattr(evaluate, "MAX_UNPACKED_BYTES", 1024 * 1024)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/worksheets/sheet1.xml", " " * (8 * 1024 * 1024))
    assert len(bomb.getvalue()) < 100_000
    r = _post(office, "payroll.xlsx", bomb.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert r.status_code == 422, r.text
    assert "bytes unpacked" in r.json()["problems"][0]["message"]


def test_a_parquet_table_is_counted_from_its_footer(office, monkeypatch):
    monkeypatch.setattr(evaluate, "MAX_PAYROLL_ROWS", 1_000)
    table = qmcredit.read_payroll(_csv(100), kind="csv", name="p.csv").drop("source")
    out = io.BytesIO()
    table.write_parquet(out)
    r = _post(office, "payroll.parquet", out.getvalue(), "application/octet-stream")
    assert r.status_code == 422 and "3,600 rows" in r.text, r.text


def test_embedded_employees_are_bounded_too(office, monkeypatch):
    monkeypatch.setattr(evaluate, "MAX_PAYROLL_ROWS", 10)
    r = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer"))
    assert r.status_code == 422 and r.json()["problems"][0]["location"] == "employees", r.text


def test_a_long_determination_is_stored_compressed_and_served_exactly(office):
    """B1: the explanation trace is kept (every employee-month), compactly."""
    r = _post(office, "payroll.csv", _csv(120))
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    served = office.client.get(f"/api/v1/claims/{cid}/determination", headers=office.auth("preparer"))
    assert served.status_code == 200
    with office.db.engine.connect() as conn:
        raw = conn.execute(text("SELECT determination FROM revisions WHERE claim_id = :c"), {"c": cid}).scalar_one()
    assert raw.startswith("zlib:") and len(raw) * 5 < len(served.content)
    rows = next(e for e in served.json()["explanation"] if e["figure"] == "employee_months")["rows"]
    assert len({row["employee_id"] for row in rows}) == 120
