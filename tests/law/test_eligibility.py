"""E1-E5 (52:27BBB-55(a), (d)) and B2."""

import qmcredit

from ..conftest import base_claim, employee, months


def decide(doc):
    return qmcredit.decide(qmcredit.claim_from_dict(doc)).to_dict()


def one_new_hire():
    return [employee("N", {m: 160 for m in months("2004-04", 24)})]


def test_E1_other_tax_is_not_eligible_and_room_is_zero():
    d = decide(base_claim(one_new_hire(), tax="gross_income_tax"))
    assert not d["eligible"]
    assert [e["rule"] for e in d["ineligible_because"]] == ["E1"]
    assert d["credit"] == {"year_one": "0.00", "year_two": "0.00"}
    assert all(p["room"] == "0.00" for p in d["periods"])


def test_E1_insurer_is_eligible():
    assert decide(base_claim(one_new_hire(), tax="insurance_premiums"))["eligible"]


def test_E2_municipality_matched_case_insensitively_with_alias():
    for name in ("camden", "CAMDEN CITY", "  Camden  City ", "City of Camden", "city  of camden"):
        doc = base_claim(one_new_hire())
        doc["location"]["municipality"] = name
        assert decide(doc)["eligible"], name


def test_E2_other_municipality_fails():
    doc = base_claim(one_new_hire())
    doc["location"]["municipality"] = "Trenton"
    d = decide(doc)
    assert [e["rule"] for e in d["ineligible_because"]] == ["E2"]
    assert "Trenton" in d["ineligible_because"][0]["message"]


def test_E3_uez_benefit_fails():
    doc = base_claim(one_new_hire())
    doc["taxpayer"]["uez_benefit"] = True
    assert [e["rule"] for e in decide(doc)["ineligible_because"]] == ["E3"]


def test_E4_earlier_period_other_month_fails_same_month_is_recomputation():
    doc = base_claim(one_new_hire())
    doc["taxpayer"]["earlier_credit_period_start"] = "2004-05"
    assert [e["rule"] for e in decide(doc)["ineligible_because"]] == ["E4"]
    doc["taxpayer"]["earlier_credit_period_start"] = "2004-04"
    assert decide(doc)["eligible"]


def test_E5_every_failed_condition_is_reported_with_rule_and_cite():
    doc = base_claim(one_new_hire(), tax="sales")
    doc["location"]["municipality"] = "Newark"
    doc["taxpayer"]["uez_benefit"] = True
    doc["taxpayer"]["earlier_credit_period_start"] = "2001-01"
    d = decide(doc)
    assert [(e["rule"], e["cite"]) for e in d["ineligible_because"]] == [
        ("E1", "52:27BBB-55(a)"), ("E2", "52:27BBB-55(a)"), ("E3", "52:27BBB-55(a)"), ("E4", "52:27BBB-55(d)")]
    assert d["credit"] == {"year_one": "0.00", "year_two": "0.00"}
    assert d["new_positions"]["year_one"] == "1.000000"  # measured all the same


def test_B2_operations_source_is_recorded():
    d = decide(base_claim(one_new_hire()))
    fig = next(e for e in d["explanation"] if e["figure"] == "eligible")
    assert fig["inputs"]["operations_source"] == "test"


def test_E5_eligible_only_when_every_condition_holds():
    """E5's own step: one failed condition of any kind refuses the credit; none, it is allowed."""
    from itertools import product

    from qmcredit.law.eligibility import Check, eligible

    def check(rule, passed):
        return Check(rule, "52:27BBB-55(a)", "c", passed, "", "")

    for passes in product([True, False], repeat=4):
        assert eligible(tuple(check(f"E{k + 1}", p) for k, p in enumerate(passes))) is all(passes)
    assert eligible(()) is True
