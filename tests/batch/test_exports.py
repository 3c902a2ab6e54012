"""``qmcredit batch`` on payroll exports as preparers have them, through the command line: an
export's bad row refuses its claim, naming the row as the export counts it, not the run; Excel,
tab-separated and UTF-16 exports are read; and a claim refused once decided takes its return
with it (L6)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import openpyxl
import polars as pl
import pytest

from qmcredit.batch import synth

EXE = Path(sys.executable).parent / "qmcredit"
HEADERS = {"claim_id": "Client", "employee_id": "Emp #", "month": "Pay Month", "hours": "Hours Worked", "basis": "Status",
           "ownership_interest": "Owner %", "owner_relation": "Relation"}
COLUMNS = ",".join(f'{field}="{header}"' for field, header in HEADERS.items())


def run(command: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), command, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    found = synth.write(tmp_path_factory.mktemp("exports"), 40, 5, kind="csv", invalid_share=0)
    rows = pl.read_csv(found["payroll"], infer_schema=False)
    found["first"], found["second"] = rows.get_column("claim_id").unique(maintain_order=True).to_list()[:2]
    return found


@pytest.fixture(scope="module")
def plain(tables, tmp_path_factory) -> pl.DataFrame:
    """The claims as the payroll table itself decides them."""
    out = tmp_path_factory.mktemp("plain") / "out"
    r = run("batch", tables["claims"], tables["payroll"], "--periods", tables["periods"], "--out", out)
    assert r.returncode == 0, r.stderr
    return pl.read_parquet(out / "claims.parquet")


def from_export(tables: dict, export: Path, out: Path) -> tuple[pl.DataFrame, dict[str, list[dict]], dict]:
    """The batch run on ``export`` through ``COLUMNS``: its claims, those refused, its summary."""
    r = run("batch", tables["claims"], export, "--periods", tables["periods"], "--out", out, "--payroll-columns", COLUMNS)
    assert r.returncode == 0, r.stderr
    return *decided(out), json.loads(r.stdout)


def decided(out: Path) -> tuple[pl.DataFrame, dict[str, list[dict]]]:
    claims = pl.read_parquet(out / "claims.parquet")
    refused = {cid: json.loads(p) for cid, p in claims.filter(pl.col("status") == "invalid").select("claim_id", "problems").iter_rows()}
    return claims, refused


def test_an_exports_bad_rows_refuse_their_claims_not_the_run(tables, plain, tmp_path):
    """Issue 16's export path: a month not in the column's format, a status the mapping does not
    know and hours that read two ways (``1,60``) each refuse their own claim, named by the
    export's line; the other claims are decided as the table decides them, and the summary counts
    the rows. Before, the first such row refused the whole run (exit 2), and the hours' row was
    named by the line of a scratch table removed when the run ended."""
    rows = pl.read_csv(tables["payroll"], infer_schema=False)
    first, second = tables["first"], tables["second"]
    at = rows.with_row_index().group_by("claim_id").agg(pl.col("index").first())
    one, two = (dict(at.iter_rows())[cid] for cid in (first, second))
    bad = rows.with_row_index().with_columns(
        pl.when(pl.col("index") == one).then(pl.lit("1,60")).otherwise(pl.col("hours")).alias("hours"),
        pl.when(pl.col("index") == one + 1).then(pl.lit("2001-13")).otherwise(pl.col("month")).alias("month"),
        pl.when(pl.col("index") == two).then(pl.lit("Intern")).otherwise(pl.col("basis")).alias("basis"),
    ).drop("index").rename(HEADERS)
    export = tmp_path / "export.csv"
    bad.write_csv(export)
    out = tmp_path / "out"
    claims, refused, summary = from_export(tables, export, out)
    line = lambda k: f"export.csv line {k + 2}"  # noqa: E731 (the header is line 1)
    assert {cid: refused[cid] for cid in (first, second)} == {
        first: [{"location": line(one), "message": "hours: '1,60' is ambiguous: it could be read as 1.60 (comma as the decimal point) or as "
                                                   "160 (comma as a thousands separator); write hours with a point as the decimal point "
                                                   "and no other separator, e.g. 152.5"},
                {"location": line(one + 1), "message": "month: '2001-13' is not a month in the column's format YYYY-MM; correct it, "
                                                       "or choose the format with --date-format month=FORMAT"}],
        second: [{"location": line(two), "message": "basis: 'Intern' is not a known status; map it in the mapping file's values.basis "
                                                    "(e.g. 'Intern' = 'permanent')"}],
    }
    assert set(refused) - {first, second} == set(plain.filter(pl.col("status") == "invalid").get_column("claim_id"))
    others = pl.col("claim_id").is_in([first, second]).not_()
    assert claims.filter(others).equals(plain.filter(others))
    assert (summary["rows"], summary["bad_rows"]) == (rows.height, 3)
    manifest = json.loads((out / "manifest.json").read_text())  # how the export was read, as given
    assert manifest["inputs"]["payroll"]["path"] == str(export.resolve()) and manifest["options"]["payroll_columns"] == COLUMNS


def test_an_excel_export_with_title_rows_is_read_and_its_rows_named(tables, plain, tmp_path):
    """An Excel workbook (a notes sheet, the payroll on the second under a title) was refused by
    the batch as "unknown table kind"; it decides as the table, and a bad row is named by its
    sheet and row as Excel shows them."""
    rows = pl.read_csv(tables["payroll"], infer_schema=False)
    book = openpyxl.Workbook()
    book.active.title = "Notes"
    book.active["A1"] = "exported 2007-01-15"
    sheet = book.create_sheet("Payroll")
    sheet.append(["Payroll by client, 2001-2006"])
    sheet.append([])
    sheet.append(list(HEADERS.values()))
    for k, row in enumerate(rows.iter_rows()):
        sheet.append(["Temp agency" if k == 0 and c == 4 else v for c, v in enumerate(row)])
    export = tmp_path / "export.xlsx"
    book.save(export)
    claims, refused, _ = from_export(tables, export, tmp_path / "out")
    first = rows.get_column("claim_id")[0]
    assert [p["location"] for p in refused[first]] == ["export.xlsx sheet 'Payroll' row 4"]
    others = pl.col("claim_id") != first
    assert claims.filter(others).equals(plain.filter(others))


@pytest.mark.parametrize("kind", ["tsv", "utf-16"])
def test_tab_separated_and_utf16_payroll_tables_are_read(tables, plain, tmp_path, kind):
    """A payroll table saved tab-separated (``.tsv``) or as UTF-16 text (Excel's "Unicode Text")
    was refused by the batch (by its name, or as bytes that are not UTF-8); both decide as the table."""
    text = Path(tables["payroll"]).read_text(encoding="utf-8")
    table = tmp_path / ("payroll.tsv" if kind == "tsv" else "payroll.csv")
    if kind == "tsv":
        table.write_text(text.replace(",", "\t"), encoding="utf-8")
    else:
        table.write_text(text, encoding="utf-16")
    out = tmp_path / "out"
    r = run("batch", tables["claims"], table, "--periods", tables["periods"], "--out", out)
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(out / "claims.parquet").equals(plain)


def test_a_payroll_file_named_with_braces_is_named_in_its_problems(tables, tmp_path):
    """A file name with braces (``pay{2006}.csv``) was taken for a template of the rows' names:
    an internal error (exit 3) at the first bad row."""
    rows = pl.read_csv(tables["payroll"], infer_schema=False)
    table = tmp_path / "pay{2006}.csv"
    rows.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("1,60")).otherwise(pl.col("hours")).alias("hours")).write_csv(table)
    out = tmp_path / "out"
    r = run("batch", tables["claims"], table, "--periods", tables["periods"], "--out", out)
    assert r.returncode == 0, r.stderr
    _, refused = decided(out)
    assert [p["location"] for p in refused[rows.get_column("claim_id")[0]]] == ["pay{2006}.csv line 2"]


@pytest.mark.parametrize("command", ["batch", "reform"])
def test_a_location_refused_once_decided_takes_its_return_with_it(tables, tmp_path, command):
    """L6: a return is decided with all its locations or not at all. A location with no payroll
    row is refused once the partitions are decided; its return's other location was decided
    anyway, its credit applied under a room shared with a claim that is not decided."""
    first, second = tables["first"], tables["second"]
    claims = pl.read_csv(tables["claims"], infer_schema=False)
    shared = ("taxpayer_id", "taxpayer_name", "tax", "uez_benefit", "earlier_credit_period_start", "as_of", "options")
    theirs = claims.filter(pl.col("claim_id") == first).row(0, named=True)
    claims.with_columns(pl.when(pl.col("claim_id") == second).then(pl.lit(theirs[c])).otherwise(pl.col(c)).alias(c) for c in shared).write_csv(
        tmp_path / "claims.csv")
    periods = pl.read_csv(tables["periods"], infer_schema=False)
    pl.concat([periods.filter(pl.col("claim_id") != second),
               periods.filter(pl.col("claim_id") == first).with_columns(pl.lit(second).alias("claim_id"))]).write_csv(tmp_path / "periods.csv")
    pl.read_csv(tables["payroll"], infer_schema=False).filter(pl.col("claim_id") != second).write_csv(tmp_path / "payroll.csv")
    out = tmp_path / "out"
    extra = ["--reform", Path(__file__).parents[2] / "examples" / "reforms" / "double_amounts.toml"] if command == "reform" else []
    r = run(command, tmp_path / "claims.csv", tmp_path / "payroll.csv", "--periods", tmp_path / "periods.csv", "--out", out, *extra)
    assert r.returncode == 0, r.stderr
    scenarios = [out] if command == "batch" else [out / "scenarios" / "baseline", out / "scenarios" / "double_amounts"]
    for folder in scenarios:
        _, refused = decided(folder)
        assert refused[second][0]["message"].startswith(f"no row of the payroll table has claim_id {second!r}")
        assert refused[first] == [{"location": "claim_id", "message": f"{second} of the same return (taxpayer {theirs['taxpayer_id']!r}, L6) "
                                   "cannot be decided; a return is decided with all its locations: correct it, and this claim is decided with it"}]
        assert pl.read_parquet(folder / "ledger.parquet").filter(pl.col("claim_id").is_in([first, second])).is_empty()


def test_reading_an_export_is_shown_on_a_terminal(tables, tmp_path):
    """An export is read whole before any claim is decided (15 s for a million rows of CSV, more
    for Excel), where the progress bar had not started: on a terminal, a line says what is read."""
    import os
    import pty

    rows = pl.read_csv(tables["payroll"], infer_schema=False).rename(HEADERS)
    export = tmp_path / "export.csv"
    rows.write_csv(export)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(EXE), "batch", str(tables["claims"]), str(export), "--periods", str(tables["periods"]), "--out",
                             str(tmp_path / "out"), "--payroll-columns", COLUMNS], stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the command
            break
        if not chunk:
            break
        shown += chunk
    assert proc.wait(timeout=300) == 0 and json.loads(proc.stdout.read())["claims"] == 40
    assert b"reading the export export.csv through its columns' mapping" in shown


def test_the_reform_reads_an_export_as_the_batch_does(tables, tmp_path):
    """``qmcredit reform`` took the payroll table only; an analyst's export is read as the batch
    reads it, its bad row refusing its claim by the export's line, in every scenario."""
    rows = pl.read_csv(tables["payroll"], infer_schema=False)
    export = tmp_path / "export.csv"
    rows.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("Intern")).otherwise(pl.col("basis")).alias("basis")).rename(
        HEADERS).write_csv(export)
    batch, _, _ = from_export(tables, export, tmp_path / "batch")
    out = tmp_path / "reform"
    r = run("reform", tables["claims"], export, "--periods", tables["periods"], "--out", out, "--payroll-columns", COLUMNS,
            "--reform", Path(__file__).parents[2] / "examples" / "reforms" / "double_amounts.toml")
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(out / "scenarios" / "baseline" / "claims.parquet").equals(batch)
    _, refused = decided(out / "scenarios" / "double_amounts")
    assert refused[rows.get_column("claim_id")[0]][0]["location"] == "export.csv line 2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch", "export.csv", "reform"]  # no scratch table left


def test_months_saved_as_excel_day_numbers_are_named_as_such_in_a_payroll_table(tables, tmp_path):
    """The payroll table's own path (its own headers) refused each month written as an Excel day
    number (``38718``) with "write YYYY-MM" alone, where an export's path says what the numbers
    look like. Each such row now says so too, with the date it would be; a month that is no day
    number is told nothing more."""
    rows = pl.read_csv(tables["payroll"], infer_schema=False)
    first = tables["first"]
    day = (pl.col("month") + "-01").str.to_date() - pl.lit(date(1899, 12, 30))
    rows = rows.with_columns(pl.when(pl.col("claim_id") == first).then(day.dt.total_days().cast(pl.String)).otherwise(pl.col("month")).alias("month"))
    rows = rows.with_columns(pl.when((pl.col("claim_id") == tables["second"]) & (pl.int_range(pl.len()) == pl.int_range(pl.len()).filter(
        pl.col("claim_id") == tables["second"]).first())).then(pl.lit("2006-13")).otherwise(pl.col("month")).alias("month"))
    payroll = tmp_path / "payroll.csv"
    rows.write_csv(payroll)
    _, refused = decided_run(tables, payroll, tmp_path / "out")
    months = rows.filter(pl.col("claim_id") == first).get_column("month").to_list()
    said = [p["message"] for p in refused[first] if p["message"].startswith("month:")]
    assert said == [f"month: '{m}' is not a calendar month; write YYYY-MM, e.g. 2004-05; it looks like an Excel day number ('{m}' would be "
                    f"'{(date(1899, 12, 30) + timedelta(days=int(m))).isoformat()}'): format the column as dates in Excel and save the table again"
                    for m in months]
    (other,) = [p for p in refused[tables["second"]] if p["message"].startswith("month:")]
    assert other["message"] == "month: '2006-13' is not a calendar month; write YYYY-MM, e.g. 2004-05", other


def decided_run(tables: dict, payroll: Path, out: Path) -> tuple[pl.DataFrame, dict[str, list[dict]]]:
    r = run("batch", tables["claims"], payroll, "--periods", tables["periods"], "--out", out)
    assert r.returncode == 0, r.stderr
    return decided(out)


@pytest.mark.parametrize("command", ["batch", "reform"])
def test_a_claims_table_of_numeric_ids_beside_an_export_is_told_to_give_them_as_text(tables, tmp_path, command):
    """An export's every value is read as text, its claim ids too; beside a claims table whose
    claim_id is a number, every claim is refused (no row can be trusted to match), and the problem
    said the export had type String, which was the scratch table's, not the export's (an export
    of numbers said it held text). It now names the claims table's type and what to change."""
    number = pl.col("claim_id").str.strip_prefix("C").cast(pl.Int64)
    claims = tmp_path / "claims.parquet"
    pl.read_csv(tables["claims"], infer_schema=False).with_columns(number).write_parquet(claims)
    periods = tmp_path / "periods.parquet"
    pl.read_csv(tables["periods"], infer_schema=False).with_columns(number).write_parquet(periods)
    export = tmp_path / "export.parquet"
    pl.read_csv(tables["payroll"], infer_schema=False).with_columns(number).rename(HEADERS).write_parquet(export)
    out = tmp_path / "out"
    extra = ["--reform", Path(__file__).parents[2] / "examples" / "reforms" / "double_amounts.toml"] if command == "reform" else []
    r = run(command, claims, export, "--periods", periods, "--out", out, "--payroll-columns", COLUMNS, *extra)
    assert r.returncode == 0, r.stderr
    for folder in [out] if command == "batch" else [out / "scenarios" / "baseline", out / "scenarios" / "double_amounts"]:
        claims_out, refused = decided(folder)
        said = {p["message"] for ps in refused.values() for p in ps if p["location"] == "claim_id"}
        assert said == {"claims.parquet has claim_id of type Int64, and the claim ids of export.parquet are read as text: give the claims "
                        "table's claim_id as text, so that payroll rows match their claims"}, said
        assert claims_out.get_column("status").unique().to_list() == ["invalid"]
