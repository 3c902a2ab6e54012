"""Issue 11: every claim read as its writer meant it, through the doors users use: JSON text
(``claim_from_json``), ``qmcredit compute --json`` and ``qmcredit batch`` as processes, and the
service's POST. Whole numbers as JSON integers, integral numbers or text; flags as true/false;
null as "not given"; money as JSON numbers or text; the comma rule of docs/format.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

import qmcredit
from qmcredit import ClaimError

from .conftest import base_claim, employee, months

EXE = Path(sys.executable).parent / "qmcredit"


def text(options: str = "{}", period: str | None = None, hours: str | None = None) -> str:
    """A claim as JSON text, with ``options`` (and a first period's extra fields, one employee's
    May 2004 hours) spliced in exactly as written."""
    doc = base_claim([employee("A", {m: 160 for m in months("2003-04", 36)}), employee("B", {m: 100 for m in months("2003-04", 36)})],
                     periods=[{"start": f"{y}-01-01", "end": f"{y}-12-31", "liability": "1000.00", "minimum_tax": "500.00"} for y in range(2004, 2013)])
    doc["employees"].append(employee("N", {m: 160 for m in months("2004-04", 24)}))
    doc["options"] = "@OPTIONS@"
    out = json.dumps(doc).replace('"@OPTIONS@"', options)
    if period is not None:
        out = out.replace('"minimum_tax": "500.00"}', '"minimum_tax": "500.00", ' + period + "}", 1)
    if hours is not None:
        out = out.replace('"2004-05": 100', f'"2004-05": {hours}', 1)
    return out


def decided(t: str) -> dict:
    return qmcredit.decide(qmcredit.claim_from_json(t)).to_dict(explain=False)


def refused(t: str) -> list[tuple[str, str]]:
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_json(t)
    return [(p.location, p.message) for p in e.value.problems]


# L5: carryforward_periods as a user writes it
@pytest.mark.parametrize("written,limit", [("3", 3), ("3.0", 3), ('"3"', 3), ('" 3 "', 3), ("0", 0), ('"form_313"', "form_313"), ("null", None)])
def test_L5_carryforward_periods_in_every_form_of_a_whole_number(written, limit):
    claim = qmcredit.claim_from_json(text('{"carryforward_periods": %s}' % written))
    assert claim.options.carryforward_periods == limit
    assert decided(text('{"carryforward_periods": %s}' % written)) == qmcredit.decide(
        qmcredit.claim_from_dict(json.loads(text("{}")) | {"options": {"carryforward_periods": limit}})).to_dict(explain=False)


def test_L5_a_json_integer_limit_forfeits_after_that_many_periods():
    d = decided(text('{"carryforward_periods": 1}'))
    assert any(Decimal(p["forfeited"]) > 0 for p in d["periods"])
    assert decided(text('{"carryforward_periods": 1}')) != decided(text('{"carryforward_periods": null}'))


@pytest.mark.parametrize("written,words", [("3.5", "whole number"), ("-1", "whole number"), ("true", "whole number"), ('"three"', "whole number"),
                                           ("1e400", "too large")])
def test_L5_carryforward_periods_refused_with_a_clear_message(written, words):
    (problem,) = refused(text('{"carryforward_periods": %s}' % written))
    assert problem[0] == "options.carryforward_periods" and words in problem[1], problem


@pytest.mark.parametrize("option", ["whole_positions", "part_time_excludes_temporary", "refund"])
@pytest.mark.parametrize("written", ["1", '"true"', '"yes"', "0"])
def test_flags_are_true_or_false_not_numbers_or_words(option, written):
    (problem,) = refused(text('{"%s": %s}' % (option, written)))
    assert problem[0] == f"options.{option}" and "true or false" in problem[1]


def test_null_option_is_not_given():
    assert decided(text('{"refund": null, "whole_positions": null, "year_one_start": null}')) == decided(text("{}"))


@pytest.mark.parametrize("written", ["140", "140.0", '"140"'])
def test_P4a_equivalent_hours_cap_as_a_whole_number(written):
    assert qmcredit.claim_from_json(text('{"equivalent_hours_cap": %s}' % written)).options.equivalent_hours_cap == 140


@pytest.mark.parametrize("written", ["0", "139.5", "false", '"full"'])
def test_P4a_equivalent_hours_cap_refused(written):
    (problem,) = refused(text('{"equivalent_hours_cap": %s}' % written))
    assert problem[0] == "options.equivalent_hours_cap"


def test_L2c_s_corporation_group_minimum_words():
    assert qmcredit.claim_from_json(text('{"s_corporation_group_minimum": "FULL"}')).options.s_corporation_group_minimum == "full"
    (problem,) = refused(text('{"s_corporation_group_minimum": "half"}'))
    assert problem[0] == "options.s_corporation_group_minimum"


# the period's optional fields: money as JSON numbers or text, flags, null
@pytest.mark.parametrize("written", ["5000000", "5000000.00", '"5000000"', '"5,000,000.00"', '"$5,000,000"'])
def test_L2c_group_payroll_as_json_number_or_text(written):
    t = text(period=f'"group_payroll": {written}').replace('"minimum_tax": "500.00", "group_payroll"', '"nj_gross_receipts": 10, "group_payroll"', 1)
    claim = qmcredit.claim_from_json(t)
    assert claim.periods[0].group_payroll == Decimal("5000000.00")
    mt = next(e for e in qmcredit.decide(claim).explanation if e["figure"] == "periods[0].room")["inputs"]["minimum_tax"]
    assert mt["value"] == "2000.00", mt


def test_null_period_fields_are_not_given():
    t = text(period='"s_corporation": null, "group_payroll_5m": null, "combined_group_member": null, "alternative_minimum_assessment": null, "group_payroll": null')
    assert decided(t) == decided(text())


def test_money_as_json_numbers():
    a = text().replace('"liability": "1000.00"', '"liability": 1000', 1)
    assert decided(a) == decided(text())
    (problem,) = refused(text().replace('"liability": "1000.00"', '"liability": true', 1))
    assert problem[0] == "periods[0].liability"


@pytest.mark.parametrize("written,readings", [('"1,60"', ("1.60", "160")), ('"1.234,5"', ("1234.5", "1.2345")), ('"1,2345"', ("1.2345", "12345"))])
def test_ambiguous_money_is_refused_naming_both_readings(written, readings):
    (problem,) = refused(text().replace('"liability": "1000.00"', f'"liability": {written}', 1))
    assert problem[0] == "periods[0].liability" and "ambiguous" in problem[1]
    assert all(r in problem[1] for r in readings), problem


@pytest.mark.parametrize("written,readings", [('"1,60"', ("1.60", "160")), ('"1.234,5"', ("1234.5", "1.2345")), ('"1,2345"', ("1.2345", "12345")),
                                              ('"0,5"', ("0.5", "05"))])
def test_ambiguous_hours_are_refused_naming_the_row_and_both_readings(written, readings):
    (problem,) = refused(text(hours=written))
    assert problem[0] == "employees[1].hours.2004-05" and "ambiguous" in problem[1]
    assert all(r in problem[1] for r in readings), problem


def test_hours_with_a_thousands_separator_are_read_by_the_rule():
    (problem,) = refused(text(hours='"1,234.5"'))  # read as 1234.5 hours: more than May has
    assert "'1234.5' is more than the 744 hours" in problem[1]
    assert decided(text(hours='"100.0"')) == decided(text())


def test_ambiguous_hours_in_csv_and_excel_tables(tmp_path):
    import polars as pl

    rows = {"employee_id": ["A", "A", "B"], "month": ["2004-04", "2004-05", "2004-04"], "hours": ["160", "1,60", "1.234,5"]}
    header = json.loads(text())
    del header["employees"]
    for kind in ("csv", "xlsx"):
        path = tmp_path / f"payroll.{kind}"
        if kind == "csv":
            pl.DataFrame(rows).write_csv(path)
        else:
            from openpyxl import Workbook

            wb = Workbook()
            wb.active.append(list(rows))
            for r in zip(*rows.values()):
                wb.active.append(list(r))
            wb.save(path)
        header["payroll"] = path.name
        (tmp_path / "claim.json").write_text(json.dumps(header))
        with pytest.raises(ClaimError) as e:
            qmcredit.load_claim(tmp_path / "claim.json")
        # one message for the column's ambiguous values (issue 13: problems grouped), naming both rows
        # and the two readings of the first
        (problem,) = e.value.problems
        assert problem.location == f"payroll.{kind} {'lines' if kind == 'csv' else 'sheet rows'} 3, 4"
        assert "2 rows" in problem.message and "ambiguous" in problem.message
        assert "1.60" in problem.message and "160" in problem.message


PAY_PERIODS = Path(__file__).resolve().parents[1] / "examples" / "08-pay-periods"


@pytest.mark.parametrize("layout", ["pay periods", "hours summed over two columns"])
@pytest.mark.parametrize("written,readings", [("1,60", ("1.60", "160")), ("80,5", ("80.5", "805"))])
def test_ambiguous_hours_of_pay_periods_and_summed_columns_are_refused(tmp_path, layout, written, readings):
    """P6 and docs/payroll.md: a pay period's hours, and hours summed over several columns, are
    read by the same comma rule as a month's. Before, every comma was dropped: "1,60" was read
    as 160 hours, silently, through ``qmcredit compute``."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(Path(f"{PAY_PERIODS}.payroll.csv").read_text())))
    at = rows[0].index("hours")
    if layout == "pay periods":
        rows[1][at] = written
    else:
        rows = [[*r[:at], *(["Regular Hours", "Overtime Hours"] if i == 0 else [r[at], written if i == 1 else "0"]), *r[at + 1:]]
                for i, r in enumerate(rows)]
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    (tmp_path / "payroll.csv").write_text(out.getvalue())
    claim = json.loads(Path(f"{PAY_PERIODS}.claim.json").read_text()) | {"payroll": "payroll.csv"}
    (tmp_path / "claim.json").write_text(json.dumps(claim))
    r = _run("compute", "--json", tmp_path / "claim.json")
    assert r.returncode == 1 and json.loads(r.stdout)["error"] == "invalid claim", r.stdout[:200]
    (line,) = [line for line in r.stderr.splitlines() if "payroll.csv line 2" in line]
    if layout == "pay periods":
        assert f"hours: '{written}' is ambiguous: it could be read as {readings[0]} (comma as the decimal point) or as {readings[1]}" in line
    else:
        assert f"hours: '{written} (Overtime Hours)' is not a number of hours" in line


def test_large_tables_read_hours_by_the_same_rule():
    import polars as pl

    from qmcredit.payroll import LOOKUP_FROM_ROWS, normalize

    n = LOOKUP_FROM_ROWS
    raw = pl.DataFrame({"employee_id": [f"E{i}" for i in range(n)], "month": ["2004-05"] * n,
                        "hours": ["1,60" if i == 7 else "1,234.5" if i == 8 else "152.5" for i in range(n)]})
    small = normalize(raw.head(20).lazy()).collect()
    large = normalize(raw.lazy()).collect()
    assert large.head(20).get_column("problem").to_list() == small.get_column("problem").to_list()
    assert "ambiguous" in small["problem"][7] and "744" in small["problem"][8]


def _run(*args):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "80"})


def test_compute_json_reads_json_integer_options(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(text('{"carryforward_periods": 1, "equivalent_hours_cap": 140}'))
    r = _run("compute", "--json", "--no-explain", path)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    got.pop("claim_id")
    want = qmcredit.decide(qmcredit.claim_from_dict(json.loads(text()) | {"options": {"carryforward_periods": 1, "equivalent_hours_cap": 140}})).to_dict(explain=False)
    want.pop("claim_id")
    assert got == want


def test_batch_reads_json_integer_options_and_the_new_period_fields(tmp_path):
    import polars as pl

    doc = json.loads(text())
    periods = [{k: str(v) for k, v in p.items()} for p in doc["periods"]]
    periods[0] = {"start": "2004-01-01", "end": "2004-12-31", "liability": "1000.00", "nj_gross_receipts": "10",
                  "group_payroll": "5,000,000.00", "combined_group_member": False}
    claims = pl.DataFrame({"claim_id": ["C1"], "taxpayer_id": ["22-0000001"], "tax": ["cbt"], "municipality": ["City of Camden"],
                           "operations_began": ["2004-03-15"], "options": ['{"carryforward_periods": 1, "equivalent_hours_cap": 140}'],
                           "periods": [json.dumps(periods)]})
    payroll = pl.DataFrame([{"claim_id": "C1", "employee_id": e["id"], "month": m, "hours": str(h), "basis": "permanent"} for e in doc["employees"] for m, h in e["hours"].items()])
    claims.write_csv(tmp_path / "claims.csv")
    payroll.write_csv(tmp_path / "payroll.csv")
    r = _run("batch", tmp_path / "claims.csv", tmp_path / "payroll.csv", "--out", tmp_path / "out", "--jsonl", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    got = json.loads((tmp_path / "out" / "determinations.jsonl").read_text().splitlines()[0])
    single = dict(doc, periods=[dict(periods[0], group_payroll="5000000.00", combined_group_member=False), *doc["periods"][1:]],
                  options={"carryforward_periods": 1, "equivalent_hours_cap": 140})
    single["location"]["municipality"] = "City of Camden"
    want = qmcredit.decide(qmcredit.claim_from_json(json.dumps(single))).to_dict(explain=False)
    for d in (got, want):
        d.pop("claim_id")
    assert got == want
    assert got["eligible"]  # E2: "City of Camden" is Camden
    assert any(Decimal(p["forfeited"]) > 0 for p in got["periods"])


def test_service_post_reads_json_integer_options(tmp_path):
    from .service.conftest import fresh_database, make_office

    with fresh_database("sqlite", tmp_path) as url:
        office = make_office(url)
        with office.client:
            r = office.client.post("/api/v1/claims", content=text('{"carryforward_periods": 1}').encode(),
                                   headers={**office.auth("preparer"), "content-type": "application/json"})
            assert r.status_code == 201, r.text
            assert r.json()["determination"]["periods"] == decided(text('{"carryforward_periods": 1}'))["periods"]
            r = office.client.post("/api/v1/claims", content=text('{"carryforward_periods": 2.5}').encode(),
                                   headers={**office.auth("preparer"), "content-type": "application/json"})
            assert r.status_code == 422 and r.json()["problems"][0]["location"] == "options.carryforward_periods"
        office.db.dispose()


def test_null_for_every_optional_header_field_is_not_given():
    doc = json.loads(text())
    doc["taxpayer"].update(name=None, uez_benefit=None, earlier_credit_period_start=None)
    doc["location"].update(address=None, operations_source=None)
    doc["employees"][0].update(ownership_interest=None, owner_relation=None, basis=None, name=None)
    doc.update(format=None, as_of=None)
    doc["periods"][0].update(other_credits=None, nj_gross_receipts=None)
    assert decided(json.dumps(doc)) == decided(text())
    doc["taxpayer"]["id"] = None
    assert refused(json.dumps(doc)) == [("taxpayer.id", "is required but missing")]
