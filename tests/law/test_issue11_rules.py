"""L2b, L2c, P4a, V1, V2 and E2 (RULES.md), each through the claim's JSON text."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import qmcredit
from qmcredit import ClaimError

from ..conftest import base_claim, employee, months


def hires(n, start="2004-04", span=24):
    return [employee(f"N{i}", {m: 160 for m in months(start, span)}) for i in range(n)]


def period(start, end, liability="100000.00", **kw):
    return {"start": start, "end": end, "liability": liability, **kw}


def cal(year, **kw):
    return period(f"{year}-01-01", f"{year}-12-31", **kw)


def decide(doc) -> dict:
    return qmcredit.decide(qmcredit.claim_from_json(json.dumps(doc))).to_dict()


def problems(doc) -> dict[str, str]:
    with pytest.raises(ClaimError) as e:
        qmcredit.claim_from_json(json.dumps(doc))
    return {p.location: p.message for p in e.value.problems}


def floor(doc, i=0) -> str:
    return decide(doc)["periods"][i]["detail"]["floor"]


# L2b: the AMA only for CBT privilege periods beginning 2002-2006, never S corporations or insurers
def test_L2b_ama_accepted_for_cbt_periods_beginning_2002_to_2006():
    doc = base_claim(hires(4), [cal(y, minimum_tax="500.00", alternative_minimum_assessment="3000.00") for y in (2004, 2005, 2006)])
    assert floor(doc) == "3000.00"


@pytest.mark.parametrize("case,words", [
    ("late", "beginning in 2002 to 2006"), ("s_corp", "S corporation"), ("insurer", "insurer"),
])
def test_L2b_non_zero_ama_refused_naming_the_field(case, words):
    years = (2007, 2008) if case == "late" else (2005, 2006)
    extra = {"s_corporation": True} if case == "s_corp" else {}
    doc = base_claim(hires(4), [cal(y, minimum_tax="500.00", alternative_minimum_assessment="10.00", **extra) for y in years],
                     tax="insurance_premiums" if case == "insurer" else "cbt", began="2006-03-15" if case == "late" else "2004-03-15")
    found = problems(doc)
    assert set(found) == {"periods[0].alternative_minimum_assessment", "periods[1].alternative_minimum_assessment"}  # every period
    assert words in found["periods[0].alternative_minimum_assessment"] and "L2b" in found["periods[0].alternative_minimum_assessment"]


def test_L2b_zero_ama_accepted_anywhere():
    doc = base_claim(hires(4), [cal(y, minimum_tax="500.00", alternative_minimum_assessment=z) for y, z in ((2008, "0"), (2009, "0.00"))], began="2007-03-15")
    assert decide(doc)["eligible"]


# L2c: the minimum tax derived
def test_L2c_group_payroll_decides_the_group_minimum_full_year():
    doc = base_claim(hires(4), [cal(2005, nj_gross_receipts="50", group_payroll="5000000.00"), cal(2006, nj_gross_receipts="50", group_payroll="4999999.99")])
    d = decide(doc)
    assert [p["detail"]["floor"] for p in d["periods"]] == ["2000.00", "500.00"]


def test_L2c_short_period_prorates_the_group_payroll_test():
    # 2005-01-01..2005-06-30 touches 6 months: the group minimum when payroll > 6 x 416,667 = 2,500,002
    short = [period("2004-07-01", "2004-12-31", nj_gross_receipts="50", group_payroll="2500002.00"),
             period("2005-01-01", "2005-06-30", nj_gross_receipts="50", group_payroll="2500002.01")]
    d = decide(base_claim(hires(4), short))
    assert [p["detail"]["floor"] for p in d["periods"]] == ["500.00", "2000.00"]
    mt = next(e for e in d["explanation"] if e["figure"] == "periods[1].room")["inputs"]["minimum_tax"]
    assert "short period" in mt["basis"] and mt["rule"] == "L2c"


def test_L2c_group_payroll_and_flag_that_disagree_are_refused():
    found = problems(base_claim(hires(4), [cal(2005, nj_gross_receipts="50", group_payroll="100.00", group_payroll_5m=True)]))
    assert "periods[0].group_payroll_5m" in found


def test_L2c_combined_group_member_from_periods_ending_2019_07_31():
    began = "2017-03-15"
    ps = [period("2017-08-01", "2018-07-30", nj_gross_receipts="50", combined_group_member=True),
          period("2018-07-31", "2019-07-30", nj_gross_receipts="50", combined_group_member=True),
          period("2019-07-31", "2019-07-31", nj_gross_receipts="50", combined_group_member=True),
          period("2019-08-01", "2020-07-31", nj_gross_receipts="50", combined_group_member=False)]
    d = decide(base_claim(hires(4, "2017-04"), ps, began=began))
    assert [p["detail"]["floor"] for p in d["periods"]] == ["500.00", "500.00", "2000.00", "500.00"]


@pytest.mark.parametrize("option,want", [(None, "1500.00"), ("reduced", "1500.00"), ("full", "2000.00")])
def test_L2c_s_corporation_group_minimum_option(option, want):
    opts = {} if option is None else {"s_corporation_group_minimum": option}
    doc = base_claim(hires(4, "2012-04"), [cal(2013, nj_gross_receipts="50", s_corporation=True, group_payroll_5m=True),
                                           cal(2014, nj_gross_receipts="150000", s_corporation=True)], began="2012-03-10", **opts)
    assert [p["detail"]["floor"] for p in decide(doc)["periods"]] == [want, "562.50"]  # the schedule at 75% either way


def test_L2c_every_period_missing_its_minimum_tax_is_reported_with_other_problems():
    doc = base_claim(hires(4), [cal(y) for y in (2004, 2005, 2006)])
    doc["periods"][1]["liability"] = "12,34"
    found = problems(doc)
    assert {"periods[0].minimum_tax", "periods[1].minimum_tax", "periods[2].minimum_tax", "periods[1].liability"} <= set(found)


# V1: at most 53 weeks
def test_V1_a_53_week_year_is_accepted_a_longer_period_refused():
    ok = base_claim(hires(4), [period("2004-01-01", "2005-01-05", minimum_tax="500.00"), period("2005-01-06", "2006-01-04", minimum_tax="500.00")])
    assert decide(ok)["eligible"]  # 371 days, then 364
    bad = base_claim(hires(4), [period("2004-01-01", "2005-01-06", minimum_tax="500.00")])
    found = problems(bad)
    assert list(found) == ["periods[0].end"] and "372 days" in found["periods[0].end"] and "V1" in found["periods[0].end"]


def test_V1_a_gap_is_refused_asking_for_the_missing_period():
    found = problems(base_claim(hires(4), [cal(2004, minimum_tax="500.00"), cal(2006, minimum_tax="500.00")]))
    assert "add the missing period" in found["periods[1].start"]


# V2: year one's period missing, year two's given: pending, never 0.00
def test_V2_refund_pending_when_year_one_period_is_missing():
    d = decide(base_claim(hires(4), [cal(2006, minimum_tax="500.00"), cal(2007, minimum_tax="500.00")]))
    assert d["refund"] is None and d["carried_forward"] is None
    assert all(p["applied"] is None and p["refund"] is None for p in d["periods"])
    assert d["periods"][0]["room"] == "50000.00"  # what does not depend on the balance is given
    assert d["pending"]["missing_periods"][0]["containing"] == "2005-03-31"
    assert "periods[0].refund" in d["pending"]["figures"] and "refund" in d["pending"]["figures"]


def test_V2_no_year_one_credit_nothing_pending():
    emps = [employee("A", {m: 160 for m in months("2003-04", 36)})]
    d = decide(base_claim(emps, [cal(2006, minimum_tax="500.00")]))
    assert d["refund"] == "0.00" and d["pending"] is None


def test_V2_through_the_cli_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "c.json"
    path.write_text(json.dumps(base_claim(hires(4), [cal(2006, minimum_tax="500.00")])))
    r = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "compute", "--json", "--no-explain", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["pending"]["missing_periods"]


# P4a: the equivalents cap
def test_P4a_cap_counts_each_employee_month_at_most_the_full_time_hours():
    temp = [employee("T", {m: 200 for m in months("2004-04", 12)}, basis="temporary")]
    base = qmcredit.decide(qmcredit.claim_from_json(json.dumps(base_claim(temp))))
    capped = qmcredit.decide(qmcredit.claim_from_json(json.dumps(base_claim(temp, equivalent_hours_cap=140))))
    assert Fraction(base.averages["year_one"]) == Fraction(200, 140)  # the text: hours aggregated
    assert Fraction(capped.averages["year_one"]) == 1
    rows = [r for r in capped.employee_month_rows() if r["status"] == "part_time_equivalent"]
    assert rows and all(Fraction(r["equivalents"]) == 1 and r["counted_hours"] == "140" for r in rows)


def test_P4a_cap_leaves_hours_below_it_alone():
    pt = [employee("P", {m: 100 for m in months("2004-04", 12)})]
    a = qmcredit.decide(qmcredit.claim_from_json(json.dumps(base_claim(pt, equivalent_hours_cap=140))))
    assert Fraction(a.averages["year_one"]) == Fraction(100, 140)
