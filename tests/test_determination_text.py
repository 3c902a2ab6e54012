"""B1 (issue 18): ``compute --json`` writes each determination's text with its employee-months
made in one columnar pass (``determination.employee_month_jsons``); that text must be the very
``json.dumps`` of ``Determination.to_dict``, whether or not an employee id needs JSON escapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from qmcredit.core import decide_many
from qmcredit.loaders import load_claim

from .conftest import EXAMPLES

IDS = {"plain": None, "escaped": 'Zoë "the baker" \\ 1\t\u0001', "non-ascii": "Zoë Ñúñez 1"}


def test_B1_compute_json_text_is_the_dumped_determination(tmp_path):
    paths = []
    for name, emp_id in IDS.items():
        doc = json.loads((EXAMPLES / "03-part-time-equivalents.claim.json").read_text())
        if emp_id is not None:
            doc["employees"][0]["id"] = emp_id
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    ran = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "compute", "--json", *paths], capture_output=True, text=True, encoding="utf-8")
    assert ran.returncode == 0, ran.stderr
    for path, line in zip(paths, ran.stdout.splitlines()):
        det = decide_many([load_claim(path)])[0]
        assert line == json.dumps(det.to_dict(), ensure_ascii=False), path.name
        assert line == json.dumps(json.loads(line), ensure_ascii=False)


def test_B1_employee_months_in_any_order_make_the_one_sorted_table():
    """``employee_month_table``: rows already by claim, employee and month are not sorted again
    (``_sorted_by``); rows in any other order are, and both give the same table."""
    import polars as pl

    from qmcredit.core import prepare, with_claim_columns
    from qmcredit.determination import _sorted_by, employee_month_table
    from qmcredit.law.positions import classify

    claims = [load_claim(p) for p in sorted(EXAMPLES.glob("0[1-5]-*.claim.json"))]
    preps = [prepare(c.header, c.source) for c in claims]
    classified = classify(with_claim_columns([c.payroll for c in claims], [p.constants.columns for p in preps])).collect()
    keys = ("claim_id", "employee_id", "month_idx")
    ordered = classified.sort(*keys)
    assert _sorted_by(ordered, keys) and not _sorted_by(ordered.reverse(), keys)
    assert not _sorted_by(ordered.with_columns(pl.lit(None, dtype=pl.Utf8).alias("employee_id")), keys)
    expected = employee_month_table(ordered)
    assert expected.select(pl.col("equivalents").is_not_null().any()).item()
    for rows in (ordered.reverse(), ordered.sample(fraction=1.0, shuffle=True, seed=313)):
        assert employee_month_table(rows).equals(expected)


def test_B1_each_claims_employee_months_are_its_rows_and_their_text():
    """``employee_months_by_claim``: each claim's rows of the one table, as a partition by claim
    gives them; ``employee_month_jsons``: each table's text as ``employee_month_rows`` dumped,
    an empty table's ``[]`` among the others'."""
    from qmcredit.core import prepare, with_claim_columns
    from qmcredit.determination import employee_month_jsons, employee_month_table, employee_months_by_claim
    from qmcredit.law.positions import classify

    claims = [load_claim(p) for p in sorted(EXAMPLES.glob("0[1-5]-*.claim.json"))]
    preps = [prepare(c.header, c.source) for c in claims]
    classified = classify(with_claim_columns([c.payroll for c in claims], [p.constants.columns for p in preps])).collect()
    by_claim = employee_months_by_claim(classified)
    expected = employee_month_table(classified).partition_by("claim_id", as_dict=True, include_key=False, maintain_order=True)
    assert list(by_claim) == list(expected) and len(by_claim) == len(claims)
    assert all(by_claim[k].equals(expected[k]) for k in expected)
    tables = [*by_claim.values()]
    tables.insert(1, tables[0].clear())
    for table, text in zip(tables, employee_month_jsons(tables), strict=True):
        rows = [{k: v for k, v in r.items() if v is not None or k not in ("equivalents", "counted_hours")} for r in table.iter_rows(named=True)]
        assert json.loads(text) == rows and text == json.dumps(rows, ensure_ascii=False)
    assert employee_month_jsons([]) == []
