"""``qmcredit cost`` over a batch's outputs: the totals by fiscal year add up to the claims'
ledgers, every group adds up to the totals, and the files open as they should (issue 17)."""

from __future__ import annotations

import re
import zipfile
from datetime import date
from decimal import Decimal

import polars as pl
import pytest

from qmcredit.analysis.cost import fiscal_year, size_band

from .conftest import qmcredit

MONEY = ("allowed", "applied", "refunded", "forfeited", "cost")


@pytest.fixture(scope="module")
def cost(data):
    qmcredit("cost", str(data / "batch"), "--claims", str(data / "in/claims.parquet"), "--out", str(data / "cost"))
    return data / "cost"


def _sum(values) -> Decimal:
    return sum((Decimal(v) for v in values if v is not None), Decimal("0.00"))


def test_fiscal_year_runs_july_to_june_named_by_its_june():
    assert fiscal_year(date(2008, 6, 30)) == 2008
    assert fiscal_year(date(2008, 7, 1)) == 2009
    assert fiscal_year(date(2008, 12, 31)) == 2009


def test_firm_size_is_the_base_average_rounded_up_to_employees():
    assert [size_band(Decimal(x)) for x in ("0", "0.000001", "9", "9.000001", "49.5", "249", "249.1", "250", "1800")] == [
        "0", "1-9", "1-9", "10-49", "50-249", "50-249", "250+", "250+", "250+"]


def test_totals_by_fiscal_year_add_up_to_the_ledgers(data, cost):
    """L4, R1, L5: every decided ledger line lands in one fiscal year, by the end of its period."""
    ledger = pl.read_parquet(data / "batch/ledger.parquet")
    fy = pl.read_parquet(cost / "by_fiscal_year.parquet")
    for ours, theirs in (("allowed", "allowed"), ("applied", "applied"), ("refunded", "refund"), ("forfeited", "forfeited")):
        assert _sum(fy.get_column(ours)) == _sum(ledger.get_column(theirs)), ours
    by_end = {}
    for end, applied in ledger.select("end", "applied").iter_rows():
        if applied is not None:
            by_end[fiscal_year(end)] = by_end.get(fiscal_year(end), Decimal("0.00")) + Decimal(applied)
    assert {y: Decimal(a) for y, a in fy.select("fiscal_year", "applied").iter_rows()} == by_end
    totals = pl.read_parquet(cost / "totals.parquet").row(0, named=True)
    for k in MONEY:
        assert Decimal(totals[k]) == _sum(fy.get_column(k)), k
    assert Decimal(totals["cost"]) == Decimal(totals["applied"]) + Decimal(totals["refunded"])


TOTALS = ("allowed", "applied", "refunded", "forfeited", "carried_forward", "cost")


def test_every_total_of_the_issue_is_in_every_breakdown_and_adds_up(cost):
    """Issue 17 item 2: allowed, applied, refunded, forfeited and carried at the end (and the cost),
    by fiscal year, tax, firm size and credit year; each breakdown sums to the totals."""
    totals = pl.read_parquet(cost / "totals.parquet").row(0, named=True)
    for table in ("by_fiscal_year", "by_tax", "by_firm_size", "by_credit_year"):
        df = pl.read_parquet(cost / f"{table}.parquet")
        for k in TOTALS:
            assert _sum(df.get_column(k)) == Decimal(totals[k]), (table, k)


def _last_lines(ledger: pl.DataFrame) -> pl.DataFrame:
    return ledger.filter(pl.col("applied").is_not_null()).group_by("claim_id").agg(pl.all().sort_by("period").last())


def test_carried_at_the_end_falls_in_the_fiscal_year_of_the_last_period_decided(data, cost):
    """L4: the balance carried out of a claim's last decided period, in that period's fiscal year."""
    want: dict[int, Decimal] = {}
    for end, carried in _last_lines(pl.read_parquet(data / "batch/ledger.parquet")).select("end", "carried_forward").iter_rows():
        want[fiscal_year(end)] = want.get(fiscal_year(end), Decimal("0.00")) + Decimal(carried)
    fy = pl.read_parquet(cost / "by_fiscal_year.parquet")
    assert {y: Decimal(c) for y, c in fy.select("fiscal_year", "carried_forward").iter_rows() if Decimal(c) or y in want} == want


def test_totals_by_credit_year_add_up_to_the_ledgers(data, cost):
    """L4 (each year of origin tracked apart, Form 313 Part V), R1 (year one's refund), L5: the
    ledger's year-one columns summed are year one's row, the rest year two's; within each year,
    what was allowed ends applied, refunded, forfeited or carried."""
    ledger = pl.read_parquet(data / "batch/ledger.parquet").filter(pl.col("applied").is_not_null())
    decided = pl.read_parquet(data / "batch/claims.parquet").filter(pl.col("status") == "decided")
    last = _last_lines(ledger)
    one = {k: _sum(ledger.get_column(f"{k}_year_one")) for k in ("allowed", "applied", "forfeited")}
    one["carried_forward"] = _sum(last.get_column("carried_forward_year_one"))
    one["refunded"] = _sum(ledger.get_column("refund"))
    one["credit"] = _sum(decided.get_column("credit_year_one"))
    whole = {k: _sum(ledger.get_column(k)) for k in ("allowed", "applied", "forfeited")}
    whole["carried_forward"] = _sum(last.get_column("carried_forward"))
    two = {**{k: whole[k] - one[k] for k in whole}, "refunded": Decimal("0.00"), "credit": _sum(decided.get_column("credit_year_two"))}
    years = {r["credit_year"]: r for r in pl.read_parquet(cost / "by_credit_year.parquet").iter_rows(named=True)}
    for name, want in (("year_one", one), ("year_two", two)):
        assert {k: Decimal(years[name][k]) for k in want} == want, name
        assert Decimal(years[name]["cost"]) == want["applied"] + want["refunded"]
        assert want["allowed"] == want["applied"] + want["refunded"] + want["forfeited"] + want["carried_forward"], name
    assert one["applied"] > 0 and two["applied"] > 0 and one["refunded"] > 0


def test_every_credit_ends_applied_refunded_forfeited_or_carried(cost):
    claims = pl.read_parquet(cost / "claims.parquet").filter(pl.col("status") == "decided")
    for row in claims.iter_rows(named=True):
        assert Decimal(row["allowed"]) == sum(Decimal(row[k]) for k in ("applied", "refunded", "forfeited", "carried_forward")) or row["claim_id"]


def test_groups_add_up_to_the_totals(cost):
    totals = pl.read_parquet(cost / "totals.parquet").row(0, named=True)
    for table in ("by_tax", "by_firm_size"):
        df = pl.read_parquet(cost / f"{table}.parquet")
        assert df.get_column("claims").sum() == totals["decided"]
        for k in (*MONEY, "credit", "carried_forward", "new_positions"):
            assert _sum(df.get_column(k)) == Decimal(totals[k]), (table, k)
    years = pl.read_parquet(cost / "by_credit_year.parquet")
    assert _sum(years.get_column("credit")) == Decimal(totals["credit"])
    assert _sum(years.get_column("refunded")) == Decimal(totals["refunded"])
    batch_totals = pl.read_parquet(cost / "by_credit_year.parquet").get_column("credit").to_list()
    assert all(re.fullmatch(r"\d+\.\d\d", v) for v in batch_totals)


def test_csv_and_workbook_hold_the_same_tables(cost):
    from openpyxl import load_workbook

    wb = load_workbook(cost / "analysis.xlsx")
    for name in ("totals", "by_fiscal_year", "by_tax", "by_firm_size", "by_credit_year", "claims"):
        df = pl.read_parquet(cost / f"{name}.parquet")
        assert pl.read_csv(cost / f"{name}.csv", infer_schema=False).rows() == df.cast(pl.Utf8).rows()
        ws = wb[name]
        assert [c.value for c in ws[1]] == df.columns
        assert ws.max_row == df.height + 1
    fy = wb["by_fiscal_year"]
    cost_col = [c.value for c in fy[1]].index("cost")
    assert sum(Decimal(str(r[cost_col].value)) for r in fy.iter_rows(min_row=2)) == Decimal(
        pl.read_parquet(cost / "totals.parquet").get_column("cost").item())


def test_the_report_reads_offline(cost):
    html = (cost / "report.html").read_text()
    assert re.findall(r"(?:https?:)?//[^\s\"'<>]+", html) == ["http://www.w3.org/2000/svg"] * html.count("<svg ")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert html.count("<svg ") == 3


def test_workbook_numbers_are_the_tables_decimal_text(cost):
    """Each number of the workbook is the table's decimal value (the nearest double once a
    spreadsheet reads it), written with the double's shortest round-trip digits, never a float's longer
    digits."""
    from openpyxl import load_workbook

    wb = load_workbook(cost / "analysis.xlsx", read_only=True)
    for name in ("by_tax", "claims"):
        df = pl.read_parquet(cost / f"{name}.parquet")
        rows = list(wb[name].iter_rows(min_row=2, values_only=True))
        for want, got in zip(df.iter_rows(), rows):
            for col, w, g in zip(df.columns, want, got):
                if isinstance(w, str) and re.fullmatch(r"-?\d+\.\d+", w):
                    assert g == float(Decimal(w)), (name, col, w, g)
    sheets = "".join(zipfile.ZipFile(cost / "analysis.xlsx").read(f"xl/worksheets/sheet{k}.xml").decode() for k in range(1, 7))
    texts = {Decimal(v) for row in pl.read_parquet(cost / "by_tax.parquet").rows() for v in row if isinstance(v, str) and re.fullmatch(r"-?\d+\.\d+", v)}
    written = {Decimal(v) for v in re.findall(r"<v>([^<]*)</v>", sheets)}
    assert texts and texts <= written
    assert all(len(v.as_tuple().digits) <= 15 for v in written)


def test_a_table_longer_than_a_sheet_is_cut_with_a_note(tmp_path):
    """Excel holds 1,048,576 rows a sheet: a longer table's sheet stops there and says where the
    rest is (the Parquet and CSV tables hold every row)."""
    from openpyxl import load_workbook

    from qmcredit.analysis.outputs import write_workbook

    df = pl.DataFrame({"claim_id": [f"c{k}" for k in range(10)], "cost": [f"{k}.50" for k in range(10)]})
    write_workbook({"claims": df, "totals": df.head(3)}, tmp_path / "w.xlsx", max_rows=6)
    wb = load_workbook(tmp_path / "w.xlsx")
    rows = [[c.value for c in r] for r in wb["claims"].iter_rows()]
    assert rows[:5] == [["claim_id", "cost"], *([f"c{k}", k + 0.5] for k in range(4))]
    assert len(rows) == 6 and rows[5][0].startswith("6 more rows, beyond Excel's 6 a sheet: every row is in claims.parquet and claims.csv")
    assert [[c.value for c in r] for r in wb["totals"].iter_rows()][1:] == [[f"c{k}", k + 0.5] for k in range(3)]
    assert wb["claims"]["A1"].font.bold and wb["claims"].freeze_panes == "A2"
    assert wb["claims"]["B2"].number_format == "#,##0.00"
    odd = pl.DataFrame({"claim_id": ["007", "a&b <c>", "tab\there\x01"], "eligible": [True, False, None], "claims": [1, 2, 3],
                        "cost": ["-0.05", "1e5", None]})
    write_workbook({"odd": odd}, tmp_path / "odd.xlsx")
    assert [[c.value for c in r] for r in load_workbook(tmp_path / "odd.xlsx")["odd"].iter_rows(min_row=2)] == [
        ["007", True, 1, "-0.05"], ["a&b <c>", False, 2, "1e5"], ["tab\there_x0001_", None, 3, None]]  # XML holds no \x01: Excel's escape
    # a column is numbers or text, never both: "1e5" is not a plain decimal, so "-0.05" stays text beside it


def test_the_workbook_holds_every_cell_of_every_table(tmp_path):
    """Every cell of every type a table holds reaches its sheet, in place and typed (the writer
    drops a column of a type it does not know, so ``_sheet`` gives it only the four it writes and
    refuses any other by name)."""
    from openpyxl import load_workbook

    from qmcredit.analysis.outputs import write_workbook

    df = pl.DataFrame({"scenario": ["baseline", None, "", "reform"], "fiscal_year": pl.Series([2024, 2025, None, 2027], dtype=pl.Int32),
                       "claims": pl.Series([0, 7, 12, None], dtype=pl.UInt32), "eligible": [True, None, False, True],
                       "cost": ["2500.00", None, "-1250.50", "0.000001"], "note": ["a", "b", None, "12"]})
    write_workbook({"by_fiscal_year": df, "empty": pl.DataFrame()}, tmp_path / "w.xlsx")
    wb = load_workbook(tmp_path / "w.xlsx")
    assert [[c.value for c in r] for r in wb["by_fiscal_year"].iter_rows()] == [
        df.columns, ["baseline", 2024, 0, True, 2500, "a"], [None, 2025, 7, None, None, "b"],
        [None, None, 12, False, -1250.5, None], ["reform", 2027, None, True, 0.000001, "12"]]
    assert wb["by_fiscal_year"]["E2"].data_type == "n" and wb["by_fiscal_year"]["F5"].data_type == "s"
    # shown with the table's digits: the column's most decimals (6 here), thousands separated; years and counts as they are
    assert [wb["by_fiscal_year"][f"{c}2"].number_format for c in "BCE"] == ["General", "General", "#,##0.000000"]
    assert wb["by_fiscal_year"].auto_filter.ref == "A1:F5"
    assert list(wb["empty"].iter_rows()) == []
    with pytest.raises(TypeError, match="'day' of type Date"):
        write_workbook({"t": pl.DataFrame({"day": [date(2024, 1, 1)]})}, tmp_path / "bad.xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.xlsx"]


def test_the_batch_tables_and_the_determinations_give_the_same_costs(data, tmp_path):
    """One way to the cost tables: the batch's tables read as columns (``read_claims``, what
    ``qmcredit cost`` and ``reform`` read) give what each claim's determination gives as the
    office reads it (``from_determination``, the cost page's), table by table, claim by claim."""
    import json

    from qmcredit.analysis.cost import NO_POSITIONS, ClaimCost, claim_table, cost_tables, from_determination, frame_of, read_results
    from qmcredit.analysis.tables import analysis_tables

    qmcredit("batch", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             "--out", str(tmp_path / "batch"), "--jsonl")
    columns = read_results(tmp_path / "batch", data / "in/claims.parquet")
    taxes = dict(columns.claims.select("claim_id", "tax").iter_rows())
    dets = [json.loads(line) for line in (tmp_path / "batch/determinations.jsonl").read_text().splitlines()]
    office = [from_determination(d["claim_id"], taxes[d["claim_id"]], d) if d.get("periods") is not None
              else ClaimCost(d["claim_id"], taxes[d["claim_id"]], False, False, None, (0, 0), (NO_POSITIONS, NO_POSITIONS), (), 0, 0, False)
              for d in sorted(dets, key=lambda d: d["claim_id"])]
    assert sum(not c.decided for c in office) > 0 and sum(c.eligible for c in office) > 100
    for name, table in cost_tables(columns).items():
        assert table.equals(cost_tables(office)[name]), name
    assert claim_table(columns).equals(claim_table(frame_of(office)))
    both = analysis_tables({"baseline": columns, "again": office})
    assert set(both["changes"].row(0, named=True).items()) >= {("same", len(office)), ("gain", 0), ("lose", 0), ("timing", 0)}


def test_a_reform_tells_the_claims_whose_ledger_lines_differ_alike_row_by_row_or_by_period():
    """The ``change`` of a claim (``tables._change``) reads whether its decided ledger lines are the
    same under the reform: compared row by row when both scenarios have the same claims' same
    periods, else matched by claim and period first (a line in one only differs)."""
    from qmcredit.analysis.cost import CLAIM_COLUMNS, LINE_COLUMNS, Costs
    from qmcredit.analysis.tables import _same_lines

    def costs(rows):
        lines = pl.DataFrame([(cid, n, 2005, 100, applied, 0, 0, 100, applied, 0) for cid, n, applied in rows], schema=LINE_COLUMNS, orient="row")
        return Costs(pl.DataFrame(schema=CLAIM_COLUMNS), lines)

    def differing(base, other):
        got = _same_lines(base, other)
        assert got.get_column("_same_lines").to_list() == [False] * got.height
        return sorted(got.get_column("claim_id").to_list())

    base = costs([("a", 0, 50), ("a", 1, 50), ("b", 0, 50), ("c", 0, 50)])
    assert differing(base, base) == []
    assert differing(base, costs([("a", 0, 50), ("a", 1, 50), ("b", 0, 60), ("c", 0, 50)])) == ["b"]  # row by row
    assert differing(base, costs([("a", 0, 50), ("a", 1, 50), ("a", 2, 50), ("b", 0, 60)])) == ["a", "b", "c"]  # by period
    assert differing(base, costs([("a", 0, 50), ("a", 1, 50), ("b", 0, 50), ("d", 0, 50)])) == ["c", "d"]


def test_money_read_from_the_batch_tables_is_checked_unless_made_in_this_process(data, tmp_path):
    """``read_claims`` reads a ledger's money text as cents through a two-place decimal, which
    would read ``12.345`` as 1234 cents: text from a file is first checked to be money of two
    decimals, and refused otherwise (``_cents``); tables the reform has just made
    (``made_here``, their money written by ``money_text``) are read alike without the check."""
    from qmcredit.analysis.cost import read_claims, taxes_of
    from qmcredit.batch.tables import read_tables

    qmcredit("batch", str(data / "in/claims.parquet"), str(data / "in/payroll.parquet"), "--periods", str(data / "in/periods.parquet"),
             "--out", str(tmp_path / "batch"))
    claims, ledger = (pl.read_parquet(tmp_path / "batch" / f"{t}.parquet") for t in ("claims", "ledger"))
    taxes = taxes_of(read_tables(data / "in/claims.parquet", None)[0])
    checked, trusted = read_claims(claims, ledger, taxes), read_claims(claims, ledger, taxes, made_here=True)
    assert checked.claims.equals(trusted.claims) and checked.lines.equals(trusted.lines)
    assert checked.lines.get_column("applied").sum() > 0
    for bad in ("12.345", "1e3", "12.3", "+1.00"):
        spoiled = ledger.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit(bad)).otherwise(pl.col("applied")).alias("applied"))
        with pytest.raises(ValueError, match="is not money with two decimals"):
            read_claims(claims, spoiled, taxes)
