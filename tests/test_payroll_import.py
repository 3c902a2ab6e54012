"""Issue 13: payroll exports as payroll systems write them give the same determination as the
equivalent monthly table (FORMAT.md "The payroll table", "Who the employees are"), or one clear
message per distinct problem. The exports are generated here, from the shared examples."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

import qmcredit
from qmcredit import ClaimError
from qmcredit.imports import Settings
from qmcredit.imports.mapping import Mapping, from_dict, load, parse_columns, save
from qmcredit.imports.people import masked

from .conftest import EXAMPLES, load_doc

STATUS = {"permanent": "FT", "temporary": "Temp", "seasonal": "Seasonal"}
RELATION = {None: "", "spouse": "Spouse", "dependant": "Dependent", "ancestor": "Father", "descendant": "Son"}


def figures(det) -> dict:
    d = det.to_dict(explain=False)
    return {k: d[k] for k in ("eligible", "windows", "average_positions", "new_positions", "credit", "sustained_effort_ratio",
                              "periods", "refund", "carried_forward")}


def export_rows(doc: dict, month=lambda m: f"{m[5:]}/{m[:4]}", split_overtime: bool = True) -> list[dict]:
    """An example's employees as an export's rows: "Employee ID", "Pay Period" as MM/YYYY, hours
    split into regular and overtime (and a PTO column that is not counted), status codes, relation."""
    rows = []
    for k, e in enumerate(doc["employees"]):
        for m, h in e["hours"].items():
            h = Decimal(str(h))
            regular, overtime = (min(h, Decimal(160)), max(h - 160, Decimal(0))) if split_overtime else (h, Decimal(0))
            rows.append({
                "Employee ID": e["id"], "Employee Name": f"Person {e['id']}", "SSN": f"123-45-{k:04d}", "Pay Period": month(m),
                "Regular Hours": str(regular), "Overtime Hours": str(overtime), "PTO Hours": "8",
                "Emp Type": STATUS[e["basis"]], "Relationship": "Owner" if e["ownership_interest"] else RELATION[e["owner_relation"]],
            })
    return rows


def write_csv(path: Path, rows: list[dict], title: list[str] = ()) -> None:
    with path.open("w", newline="") as f:
        for t in title:
            f.write(t + "\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]), quoting=csv.QUOTE_ALL)
        w.writeheader()
        w.writerows(rows)


def header(tmp_path: Path, name: str, table: str) -> Path:
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    doc.pop("employees")
    doc["payroll"] = table
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(doc, default=str))
    return path


def monthly(name: str):
    return qmcredit.decide(qmcredit.load_claim(EXAMPLES / f"{name}.claim.json"))


@pytest.mark.parametrize("name", ["01-expansion-cap-carryforward", "02-refund-sustained-effort", "03-part-time-equivalents"])
def test_csv_export_decides_as_the_monthly_table(tmp_path, name):
    """Quoted headers, title rows, MM/YYYY months, hours in two columns (P2 counts hours worked,
    overtime included; PTO not: RULES.md open question "paid leave"), status and relation words (P1)."""
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    write_csv(tmp_path / "export.csv", export_rows(doc), title=["Acme Payroll - Hours by month", "Run 2026-01-05"])
    claim = qmcredit.load_claim(header(tmp_path, name, "export.csv"))
    assert figures(qmcredit.decide(claim)) == figures(monthly(name))
    people = claim.people.sort("employee_id")
    assert people.height == len(doc["employees"]) and people["name"][0].startswith("Person ")
    assert masked(people["ssn"][0]).startswith("XXX-XX-")


@pytest.mark.parametrize("written", ["UTF-16 .csv", "Excel's Unicode Text (.txt)", "tab-separated .tsv", "semicolons, CRLF"])
def test_delimited_text_as_exports_write_it(tmp_path, written):
    """The same export saved as spreadsheets save delimited text decides as the monthly table,
    through ``qmcredit compute``: UTF-16 with its byte-order mark (before: "no header row", the
    text read as code page 1252), Excel's "Unicode Text" (UTF-16, tabs, a .txt name), a .tsv
    (before: "unknown table kind"), semicolons and CRLF line ends."""
    import subprocess
    import sys

    name = "01-expansion-cap-carryforward"
    write_csv(tmp_path / "export.csv", export_rows(load_doc(EXAMPLES / f"{name}.claim.json")))
    text = (tmp_path / "export.csv").read_text()
    rows = list(csv.reader(io.StringIO(text)))
    delimited = lambda d, end: end.join(d.join(r) for r in rows) + end  # noqa: E731
    file, data = {
        "UTF-16 .csv": ("export16.csv", text.encode("utf-16")),
        "Excel's Unicode Text (.txt)": ("export.txt", delimited("\t", "\r\n").encode("utf-16-le").join([b"\xff\xfe", b""])),
        "tab-separated .tsv": ("export.tsv", delimited("\t", "\n").encode()),
        "semicolons, CRLF": ("export-semi.csv", delimited(";", "\r\n").encode()),
    }[written]
    (tmp_path / file).write_bytes(data)
    r = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "compute", "--json", "--no-explain", str(header(tmp_path, name, file))],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert {k: got[k] for k in figures(monthly(name))} == json.loads(json.dumps(figures(monthly(name)), default=str))


def test_month_forms_people_write(tmp_path):
    """`M/YYYY`, `Jan 2005`, `January 2005`, full dates: each column's format found once (the preview states it)."""
    name = "03-part-time-equivalents"
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    forms = {
        "M/YYYY": lambda m: f"{int(m[5:])}/{m[:4]}",
        "Mon YYYY": lambda m: f"{names[int(m[5:]) - 1][:3]} {m[:4]}",
        "Month YYYY": lambda m: f"{names[int(m[5:]) - 1]} {m[:4]}",
        "MM/DD/YYYY": lambda m: f"{m[5:]}/28/{m[:4]}",
    }
    for label, form in forms.items():
        write_csv(tmp_path / "export.csv", export_rows(doc, form))
        read = qmcredit.loaders.import_payroll(tmp_path / "export.csv")
        assert read.formats["month"] in ("MM/YYYY", "Mon YYYY", "MM/DD/YYYY"), label
        assert figures(qmcredit.decide(qmcredit.load_claim(header(tmp_path, name, "export.csv")))) == figures(monthly(name)), label


def test_ambiguous_dates_are_refused_until_chosen(tmp_path):
    doc = load_doc(EXAMPLES / "03-part-time-equivalents.claim.json")
    write_csv(tmp_path / "export.csv", export_rows(doc, lambda m: f"01/{m[5:]}/{m[:4]}"))
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(header(tmp_path, "03-part-time-equivalents", "export.csv"))
    (p,) = e.value.problems
    assert "MM/DD/YYYY and DD/MM/YYYY" in p.message and "--date-format" in p.message
    chosen = Settings(Mapping(date_format={"month": "DD/MM/YYYY"}))
    claim = qmcredit.load_claim(header(tmp_path, "03-part-time-equivalents", "export.csv"), chosen)
    assert figures(qmcredit.decide(claim)) == figures(monthly("03-part-time-equivalents"))


def _workbook(doc: dict, totals: bool) -> bytes:
    """An Excel export: a summary sheet first, the data on the second below two title rows, months
    as date cells, an empty column, hours as numbers, and (``totals``) a totals row at the bottom."""
    wb = openpyxl.Workbook()
    first = wb.active
    first.title = "Summary"
    first.append(["Department", "Total"])
    first.append(["Bakery", 1234])
    ws = wb.create_sheet("Hours")
    ws.append(["Ferry Avenue Bakery Corp."])
    ws.append(["Hours worked by month"])
    ws.append(["Emp No", "Name", None, "Month", "Hours Worked", "Status", "Relation to owner"])
    total = Decimal(0)
    for e in doc["employees"]:
        for m, h in e["hours"].items():
            total += Decimal(str(h))
            ws.append([e["id"], f"Person {e['id']}", None, date(int(m[:4]), int(m[5:]), 1), float(Decimal(str(h))),
                       STATUS[e["basis"]], "Owner" if e["ownership_interest"] else RELATION[e["owner_relation"]]])
    if totals:
        ws.append([None, "Total", None, None, float(total), None, None])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


@pytest.mark.parametrize("name", ["01-expansion-cap-carryforward", "02-refund-sustained-effort"])
def test_excel_export_decides_as_the_monthly_table(tmp_path, name):
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    (tmp_path / "export.xlsx").write_bytes(_workbook(doc, totals=False))
    read = qmcredit.loaders.import_payroll(tmp_path / "export.xlsx")
    assert read.formats["month"] == "Excel date cells"
    assert any("sheet 'Hours'" in n for n in read.notes) and any("below 2 title row" in n for n in read.notes)
    assert figures(qmcredit.decide(qmcredit.load_claim(header(tmp_path, name, "export.xlsx")))) == figures(monthly(name))


def test_excel_totals_row_and_sheet_choice(tmp_path):
    doc = load_doc(EXAMPLES / "02-refund-sustained-effort.claim.json")
    (tmp_path / "export.xlsx").write_bytes(_workbook(doc, totals=True))
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(header(tmp_path, "02-refund-sustained-effort", "export.xlsx"))
    (p,) = e.value.problems
    rows = sum(len(x["hours"]) for x in doc["employees"])
    assert p.location == f"export.xlsx sheet 'Hours' row {rows + 4}" and "'Total' looks like a totals row" in p.message
    with pytest.raises(ClaimError) as e:
        qmcredit.loaders.import_payroll(tmp_path / "export.xlsx", mapping=Mapping(sheet="Summary"))
    assert "its sheets: 1 'Summary', 2 'Hours'" in e.value.problems[0].message
    read = qmcredit.loaders.import_payroll(tmp_path / "export.xlsx", mapping=Mapping(sheet="2"))
    assert read.columns["employee_id"] == ["Emp No"]


def test_problems_are_grouped_by_column_and_kind(tmp_path):
    """One message per column and kind, with the count and the first rows; every distinct problem at once."""
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    rows = export_rows(doc, month=lambda m: m)
    for r in rows[:3]:
        r["Emp Type"] = "Intern"
    rows[10]["Regular Hours"] = "lots"
    rows[20]["Pay Period"] = "TBD"
    write_csv(tmp_path / "export.csv", rows)
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(header(tmp_path, "01-expansion-cap-carryforward", "export.csv"))
    messages = [str(p) for p in e.value.problems]
    assert len(messages) == 3, messages
    assert any(m.startswith("export.csv lines 2, 3, 4: basis: 3 rows like this: 'Intern' is not a known status") for m in messages)
    assert any("hours: 'lots (Regular Hours)' is not a number" in m for m in messages)
    assert any(m.startswith("export.csv line 22: month: 'TBD'") for m in messages)


def test_many_rows_of_one_problem_are_one_message(tmp_path):
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    rows = export_rows(doc, month=lambda m: m)
    for r in rows:
        r["Emp Type"] = "Casual"
    write_csv(tmp_path / "export.csv", rows)
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(header(tmp_path, "01-expansion-cap-carryforward", "export.csv"))
    (p,) = e.value.problems
    assert f"basis: {len(rows)} rows like this: 'Casual'" in p.message and p.location.endswith(f"and {len(rows) - 5} more")


def test_columns_and_value_maps_from_a_mapping_file(tmp_path):
    """Headers no guess knows, mapped by --columns or a saved mapping file (TOML or JSON), with
    value maps over the defaults."""
    doc = load_doc(EXAMPLES / "02-refund-sustained-effort.claim.json")
    rows = [{"Worker Ref": r["Employee ID"], "Per": r["Pay Period"], "Wrk": r["Regular Hours"], "OT": r["Overtime Hours"],
             "Kind": {"FT": "Regular Staff"}.get(r["Emp Type"], r["Emp Type"]), "Fam": {"Spouse": "Wife"}.get(r["Relationship"], r["Relationship"])}
            for r in export_rows(doc)]
    write_csv(tmp_path / "export.csv", rows)
    m = parse_columns('employee_id="Worker Ref",month=Per,hours=Wrk+OT,basis=Kind,relation=Fam')
    m.values = {"basis": {"Regular Staff": "permanent"}}
    for suffix in ("toml", "json"):
        save(m, tmp_path / f"m.{suffix}")
        again = load(tmp_path / f"m.{suffix}")
        assert again.columns["hours"] == ["Wrk", "OT"] and again.values["basis"] == {"Regular Staff": "permanent"}
        claim = qmcredit.load_claim(header(tmp_path, "02-refund-sustained-effort", "export.csv"), Settings(again))
        assert figures(qmcredit.decide(claim)) == figures(monthly("02-refund-sustained-effort"))
    with pytest.raises(ClaimError) as e:
        from_dict({"columns": {"hourz": "Wrk"}, "values": {"basis": {"X": "fulltime"}}})
    assert [p.location for p in e.value.problems] == ["mapping.columns.hourz", "mapping.values.basis"]


def test_roster_joined_by_employee_id(tmp_path):
    """FORMAT.md "Who the employees are": names, SSNs and dates from a roster; status and relation
    from it when the hours export has none."""
    name = "02-refund-sustained-effort"
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    hours = [{"EE #": r["Employee ID"], "Month": r["Pay Period"], "Hours": str(Decimal(r["Regular Hours"]) + Decimal(r["Overtime Hours"]))}
             for r in export_rows(doc)]
    write_csv(tmp_path / "export.csv", hours)
    roster = [{"Employee Number": e["id"], "Full Name": f"Person {e['id']}", "SSN": f"98765{k:04d}", "Hire Date": "03/15/2001",
               "Status": STATUS[e["basis"]], "Relationship": "Owner" if e["ownership_interest"] else RELATION[e["owner_relation"]]}
              for k, e in enumerate(doc["employees"])]
    write_csv(tmp_path / "roster.csv", roster)
    claim = qmcredit.load_claim(header(tmp_path, name, "export.csv"), Settings(roster=tmp_path / "roster.csv"))
    assert figures(qmcredit.decide(claim)) == figures(monthly(name))
    first = claim.people.sort("employee_id").row(0, named=True)
    assert first["name"].startswith("Person ") and first["hired"] == date(2001, 3, 15) and len(first["ssn"]) == 9


def test_embedded_employees_carry_who_they_are():
    doc = load_doc(EXAMPLES / "02-refund-sustained-effort.claim.json")
    doc["employees"][0].update(name="Ann Smith", ssn="123-45-6789", hired="2001-03-15")
    claim = qmcredit.claim_from_dict(doc)
    assert claim.people.row(0, named=True) == {"employee_id": doc["employees"][0]["id"], "name": "Ann Smith", "ssn": "123456789",
                                               "hired": date(2001, 3, 15), "separated": None}
    doc["employees"][1]["ssn"] = "12345"
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_dict(doc)
    assert e.value.problems[0].location == "employees[1].ssn"


def test_cli_from_export_to_form_313_in_three_commands(tmp_path):
    """Issue 13: from an Excel export (title rows, second sheet, date cells, status words) to the
    Form 313 PDF in three commands, no script: preview and save the mapping, validate, form313."""
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "qmcredit"
    run = lambda *a: subprocess.run([str(exe), *map(str, a)], capture_output=True, text=True, cwd=tmp_path, timeout=120)  # noqa: E731
    name = "01-expansion-cap-carryforward"
    (tmp_path / "export.xlsx").write_bytes(_workbook(load_doc(EXAMPLES / f"{name}.claim.json"), totals=False))
    header(tmp_path, name, "export.xlsx")
    shown = run("columns", "export.xlsx", "--sheet", "Hours", "--save-mapping", "payroll-mapping.toml")
    assert shown.returncode == 0, shown.stderr
    assert "'Month'" in shown.stdout and "Excel date cells" in shown.stdout and "'FT' -> permanent" in shown.stdout
    checked = run("validate", "claim.json", "--mapping", "payroll-mapping.toml")
    assert checked.returncode == 0, checked.stderr
    made = run("form313", "claim.json", "--mapping", "payroll-mapping.toml", "--period", "1", "--out", "form313.pdf")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "form313.pdf").read_bytes()[:5] == b"%PDF-"
    wrong = run("validate", "claim.json", "--columns", 'hours="Hours Paid"')
    assert wrong.returncode == 1 and "'Hours Paid' is not a column of the table" in " ".join(wrong.stderr.split())


def test_a_canonical_header_with_months_written_otherwise(tmp_path):
    """The payroll table's own column names, months as an export writes them (issue 13: not 288
    identical errors): the format is found for the column."""
    doc = load_doc(EXAMPLES / "03-part-time-equivalents.claim.json")
    lines = ["employee_id,month,hours,basis"] + [f"{e['id']},{m[5:]}/{m[:4]},{h},{e['basis']}" for e in doc["employees"] for m, h in e["hours"].items()]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    claim = qmcredit.load_claim(header(tmp_path, "03-part-time-equivalents", "p.csv"))
    assert figures(qmcredit.decide(claim)) == figures(monthly("03-part-time-equivalents"))


def test_part_two_and_the_excluded_people(tmp_path):
    """FORMAT.md "Who the employees are": the owners and relatives named, with P1, SSNs as last four digits."""
    from qmcredit.imports.people import listed

    name = "02-refund-sustained-effort"
    doc = load_doc(EXAMPLES / f"{name}.claim.json")
    write_csv(tmp_path / "export.csv", export_rows(doc))
    claim = qmcredit.load_claim(header(tmp_path, name, "export.csv"))
    employees, excluded = listed(claim.payroll, claim.people)
    spouse = next(k for k, e in enumerate(doc["employees"]) if e["owner_relation"] == "spouse")
    assert [(x["employee_id"], x["reason"], x["rule"], x["ssn"]) for x in excluded] == [
        (doc["employees"][spouse]["id"], "spouse of an owner", "P1", f"XXX-XX-{spouse:04d}")]
    assert len(employees) == len(doc["employees"]) - 1 and all(e["ssn"].startswith("XXX-XX-") for e in employees)


def test_cli_columns_shows_what_was_found_when_a_field_is_missing(tmp_path):
    """Issue 13: not "missing column(s)" alone, but each column with what it was read as, and how to map the rest."""
    import subprocess
    import sys

    (tmp_path / "t.csv").write_text('"Emp #","Period","Qty","Type"\n"E1","01/2005","160","FT"\n')
    exe = Path(sys.executable).parent / "qmcredit"
    r = subprocess.run([str(exe), "columns", "t.csv"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 1
    assert "'Emp #'           employee_id" in r.stdout or "employee_id" in r.stdout
    assert "missing column(s) hours" in r.stdout and 'map one with --columns hours="Header"' in r.stdout
    r = subprocess.run([str(exe), "columns", "t.csv", "--columns", "hours=Qty"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "1 row(s) read, no problems" in r.stdout and "format MM/YYYY" in r.stdout


def test_columns_refuses_a_mapping_file_it_cannot_write_and_names_a_folder_given_as_table(tmp_path):
    """``qmcredit columns TABLE --save-mapping FILE``: a FILE that is a folder, in a missing folder,
    or of another kind than .toml/.json is refused before the table is read (exit 2; a folder or a
    missing one ended in an internal error, and m.yaml was written as JSON under that name); a
    folder or a device given as TABLE is said to be one (it was "not found")."""
    import subprocess
    import sys

    exe = str(Path(sys.executable).parent / "qmcredit")
    name = "01-expansion-cap-carryforward"
    write_csv(tmp_path / "export.csv", export_rows(load_doc(EXAMPLES / f"{name}.claim.json")))
    for target, said in ((tmp_path, "must end in .toml or .json"), (tmp_path / "m.yaml", "must end in .toml or .json"),
                         (tmp_path / "missing" / "m.toml", "does not exist"), (tmp_path / "dir.toml", "is a folder")):
        if target.name == "dir.toml":
            target.mkdir()
        r = subprocess.run([exe, "columns", str(tmp_path / "export.csv"), "--save-mapping", str(target)], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith("qmcredit columns: --save-mapping: ") and said in r.stderr, r.stderr
    r = subprocess.run([exe, "columns", str(tmp_path / "export.csv"), "--save-mapping", str(tmp_path / "m.toml")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and load(tmp_path / "m.toml").columns["employee_id"] == ["Employee ID"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.toml", "export.csv", "m.toml"]
    for table, said in ((tmp_path, "is a folder, not a table"), (Path("/dev/null"), "is not a regular file")):
        r = subprocess.run([exe, "columns", str(table)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and said in r.stderr, r.stderr


def test_a_missing_roster_is_named_as_the_roster(tmp_path):
    """``--roster`` naming no file: the problem is the roster's (it was reported as the payroll's)."""
    import subprocess
    import sys

    r = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "compute", "--json", "--roster", str(tmp_path / "people.csv"),
                        str(EXAMPLES / "01-expansion-cap-carryforward.claim.json")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and f"roster: table '{tmp_path / 'people.csv'}' not found" in r.stderr, r.stderr


def test_a_column_of_excel_day_numbers_is_named_as_such(tmp_path):
    """A month column saved from Excel as numbers (``38718``: a date cell formatted General) read
    as no month at all: every row was refused with "is not a month in the column's format
    YYYY-MM", no hint of why. The column is refused once, its values named as Excel day numbers
    with the date the first would be, not read as dates (nothing says that is what they are)."""
    import subprocess
    import sys

    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    day = lambda m: str(date(int(m[:4]), int(m[5:]), 1).toordinal() - date(1899, 12, 30).toordinal())  # noqa: E731 (Excel's day number)
    day_of = lambda n: date.fromordinal(date(1899, 12, 30).toordinal() + int(n)).isoformat()  # noqa: E731
    rows = export_rows(doc, month=day)
    write_csv(tmp_path / "export.csv", rows)
    claim = header(tmp_path, "01-expansion-cap-carryforward", "export.csv")
    r = subprocess.run([sys.executable, "-m", "qmcredit", "compute", "--json", str(claim)], capture_output=True, text=True, timeout=120)
    (problem,) = json.loads(r.stdout)["problems"]
    example = min(x["Pay Period"] for x in rows)  # the column's distinct values, in order: the first named
    assert (r.returncode, problem["location"]) == (1, "export.csv")
    assert problem["message"].startswith("month ('Pay Period'): no value reads as a month in any format") and problem["message"].endswith(
        f"these look like Excel day numbers ({example} would be {day_of(example)}); format the column as dates in Excel and save the "
        "export again"), problem
    assert day_of(example)[:7] == min(m for e in doc["employees"] for m in e["hours"])


def test_a_contract_status_is_not_taken_for_a_temporary_employee(tmp_path):
    """"Contract" was read as ``temporary`` by default, so an independent contractor's hours
    counted as a temporary employee's part-time equivalent and raised the credit. It reads two
    ways: the problem says both, and the mapping file's ``values.basis`` decides."""
    doc = load_doc(EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    rows = export_rows(doc, month=lambda m: m)
    temps = {r["Employee ID"] for r in rows if r["Emp Type"] == "Temp"}
    for r in rows:
        if r["Employee ID"] in temps:
            r["Emp Type"] = "Contract"
    write_csv(tmp_path / "export.csv", rows)
    claim = header(tmp_path, "01-expansion-cap-carryforward", "export.csv")
    with pytest.raises(ClaimError) as e:
        qmcredit.load_claim(claim)
    (p,) = e.value.problems
    assert p.message.endswith("rows like this: 'Contract' is not a known status: a contract employee is temporary, but an independent "
                              "contractor is not an employee and their rows leave the payroll; say which in the mapping file's "
                              "values.basis (e.g. 'Contract' = 'temporary')"), p.message
    said = Mapping(values={"basis": {"Contract": "temporary"}})
    assert figures(qmcredit.decide(qmcredit.load_claim(claim, Settings(said)))) == figures(monthly("01-expansion-cap-carryforward"))
