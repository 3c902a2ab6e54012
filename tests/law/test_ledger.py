"""L1-L5 and R1-R3 (52:27BBB-55(b), (c))."""

from decimal import Decimal

import pytest

import qmcredit
from qmcredit.problems import ClaimError

from ..conftest import base_claim, employee, months


def run(emps, periods, tax="cbt", began="2004-03-15", **options):
    return qmcredit.decide(qmcredit.claim_from_dict(base_claim(emps, periods, began=began, tax=tax, **options))).to_dict()


def hires(n, start="2004-04", span=24):
    return [employee(f"N{i}", {m: 160 for m in months(start, span)}) for i in range(n)]


def cal(year, liability, **kw):
    return {"start": f"{year}-01-01", "end": f"{year}-12-31", "liability": liability, **kw}


def test_L1_allowed_for_the_period_in_which_or_with_which_the_year_ends():
    # year one ends 2005-03-31 -> 2005 period; year two 2006-03-31 -> 2006
    d = run(hires(4), [cal(y, "100000.00", minimum_tax="2000.00") for y in (2004, 2005, 2006)])
    assert [p["allowed"] for p in d["periods"]] == ["0.00", "10000.00", "5000.00"]
    # a fiscal period ending exactly on the year's last day ("with which")
    p = [{"start": "2004-04-01", "end": "2005-03-31", "liability": "100000.00", "minimum_tax": "2000.00"},
         {"start": "2005-04-01", "end": "2006-03-31", "liability": "100000.00", "minimum_tax": "2000.00"}]
    assert [x["allowed"] for x in run(hires(4), p)["periods"]] == ["10000.00", "5000.00"]


def test_L1_period_not_given_is_allowed_but_not_yet_applied():
    d = run(hires(4), [cal(2005, "100000.00", minimum_tax="2000.00")])
    assert d["not_yet_applied"] == {"year_two": {"amount": "5000.00", "allowed_for_period_containing": "2006-03-31"}}


def test_L2_room_is_lesser_of_half_and_above_floor_less_other_credits_before_rounded_down():
    d = run(hires(40), [cal(2005, "4001.01", minimum_tax="500.00", other_credits=[
        {"name": "R&D", "amount": "100.00", "order": "before"}, {"name": "later", "amount": "900.00", "order": "after"}])])
    p = d["periods"][0]
    assert p["room"] == "1900.50"  # min(2000.505 -> 2000.50, 3501.01) - 100
    assert p["detail"]["other_credits_after"] == "900.00"


def test_L2_floor_binds_and_ama_floors_too():
    d = run(hires(40), [cal(2005, "3000.00", minimum_tax="2000.00")])
    assert d["periods"][0]["room"] == "1000.00"
    d = run(hires(40), [cal(2005, "3000.00", minimum_tax="500.00", alternative_minimum_assessment="2800.00")])
    assert d["periods"][0]["room"] == "200.00"


def test_L2_room_never_negative():
    d = run(hires(4), [cal(2005, "1000.00", minimum_tax="2000.00", other_credits=[{"name": "x", "amount": "5000", "order": "before"}])])
    assert d["periods"][0]["room"] == "0.00"


def test_L2_minimum_tax_derived_from_schedule():
    d = run(hires(40), [cal(2005, "3000.00", nj_gross_receipts="150000.00")])
    assert d["periods"][0]["detail"]["floor"] == "750.00"
    assert d["periods"][0]["room"] == "1500.00"
    d = run(hires(40), [cal(2005, "3000.00", nj_gross_receipts="50", group_payroll_5m=True)])
    assert d["periods"][0]["detail"]["floor"] == "2000.00"
    # S corporation: 75% for periods beginning in 2012 and after, not before
    d = run(hires(40, "2012-04"), [cal(2013, "5000.00", nj_gross_receipts="2000000", s_corporation=True)], began="2012-03-10")
    assert d["periods"][0]["detail"]["floor"] == "1500.00"
    d = run(hires(40), [cal(2005, "5000.00", nj_gross_receipts="2000000", s_corporation=True)])
    assert d["periods"][0]["detail"]["floor"] == "2000.00"


def test_L2_minimum_tax_neither_given_nor_derivable_is_a_clear_error():
    with pytest.raises(ClaimError) as e:
        run(hires(1), [cal(2005, "3000.00")])
    assert e.value.problems[0].location == "periods[0].minimum_tax"


def test_L3_insurers_no_cap_no_floor_option_cbt_applies_them():
    d = run(hires(40), [cal(2005, "3000.00")], tax="insurance_premiums")
    assert d["periods"][0]["room"] == "3000.00"
    d = run(hires(40), [cal(2005, "3000.00")], tax="insurance_premiums", insurer_limits="cbt")
    assert d["periods"][0]["room"] == "1500.00"


def test_L4_year_one_balance_used_before_year_two():
    d = run(hires(4), [cal(2005, "2000.00", minimum_tax="0"), cal(2006, "20000.00", minimum_tax="0")])
    p = d["periods"][1]["detail"]["origins"]
    assert p["year_one"]["applied"] == "9000.00" and p["year_two"]["applied"] == "1000.00"


def test_L5_forfeit_after_five_following_periods_option_none_or_other():
    periods = [cal(y, "1000.00", minimum_tax="500.00") for y in range(2005, 2013)]
    d = run(hires(1, span=12), periods, refund=False)  # 2500 in 2005, 500 a year
    assert [p["forfeited"] for p in d["periods"]] == ["0.00"] * 8  # used up by 2009
    d = run(hires(2, span=12), periods, refund=False)  # 5000: 3000 used by 2010, 2000 forfeited in 2010
    assert [p["forfeited"] for p in d["periods"]][5] == "2000.00"
    d = run(hires(2, span=12), periods, refund=False, carryforward_periods=None)
    assert all(p["forfeited"] == "0.00" for p in d["periods"]) and d["carried_forward"] == "1000.00"
    d = run(hires(2, span=12), periods, refund=False, carryforward_periods=0)
    assert d["periods"][0]["forfeited"] == "4500.00"


def test_R1_refund_is_remaining_year_one_times_ratio_R2_rest_carries():
    emps = hires(4) + [employee(f"L{i}", {m: 160 for m in months("2004-04", 12)}) for i in range(4)]
    d = run(emps, [cal(2005, "2000.00", minimum_tax="1000.00"), cal(2006, "2000.00", minimum_tax="1000.00")])
    # year one: 8 new -> 20000; year two: 4 -> 5000, ratio 0.5
    p = d["periods"]
    assert p[0]["applied"] == "1000.00" and p[1]["applied"] == "1000.00"
    assert p[1]["refund"] == "9000.00"  # (20000 - 2000) x 0.5
    assert p[1]["carried_forward"] == "14000.00"  # 9000 of year one + 5000 of year two


def test_R3_refund_option_false_carries_everything():
    d = run(hires(4), [cal(2005, "2000.00", minimum_tax="1000.00"), cal(2006, "2000.00", minimum_tax="1000.00")], refund=False)
    assert d["refund"] == "0.00" and d["carried_forward"] == "13000.00"


def test_R1_refund_rounded_half_up():
    # year one 4 new (10000.00), year two 2 (ratio 1/2); 0.01 used in 2005, 9999.99 x 1/2 = 4999.995 -> 5000.00
    emps = [employee(f"A{i}", {m: 160 for m in months("2004-04", 24)}) for i in range(2)]
    emps += [employee(f"L{i}", {m: 160 for m in months("2004-04", 12)}) for i in range(2)]
    d = run(emps, [cal(2005, "0.02", minimum_tax="0"), cal(2006, "0.00", minimum_tax="0")])
    assert d["sustained_effort_ratio"] == "0.500000"
    assert d["periods"][0]["applied"] == "0.01"
    assert d["periods"][1]["refund"] == "5000.00"
    assert d["periods"][1]["carried_forward"] == "7499.99"  # 4999.99 of year one + 2500.00 of year two


def test_money_conservation_in_every_example(example_doc):
    from ..conftest import EXAMPLES, example_names

    for name in example_names():
        d = qmcredit.decide(qmcredit.claim_from_dict(example_doc(name), base_dir=EXAMPLES)).to_dict()
        allowed = sum(Decimal(p["allowed"]) for p in d["periods"])
        used = sum(Decimal(p[k]) for p in d["periods"] for k in ("applied", "refund", "forfeited"))
        assert allowed == used + Decimal(d["carried_forward"]), name


def test_the_first_undecided_period_is_the_first_a_credit_not_known_yet_enters_or_the_first_under_v2():
    """``run``'s first undecided period, found location by location, is the first period any
    location's credit still None would enter, or the first period given when a location's year
    one is allowed before the periods given while year two's is among them (V2)."""
    import itertools

    from qmcredit.law import ledger as L

    places, credits = (None, 0, 1, 3), (None, 0, 500)
    accounts = [L.Account(p, c, (1, 2)) for p in itertools.product(places, places) for c in itertools.product(credits, credits)]
    for n in (1, 2):
        for some in itertools.combinations(accounts[::7] if n > 1 else accounts, n):
            want = min((p for a in some for p, c in zip(a.allowed_in, a.credits) if c is None and p is not None), default=None)
            if any(L.year_one_period_missing(a.allowed_in, a.credits) for a in some):
                want = 0
            assert L.run([100_000] * 5, list(some), None, True)[2] == want, some
