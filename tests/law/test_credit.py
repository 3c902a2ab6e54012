"""C1-C3 (52:27BBB-55(a), (e))."""

from decimal import Decimal
from fractions import Fraction

import qmcredit
from qmcredit.law.credit import credit_cents, new_positions, sustained_effort_ratio

from ..conftest import base_claim, employee, months


def _new(year: Fraction, base: Fraction, whole: bool) -> Fraction:
    den = year.denominator * base.denominator
    return Fraction(new_positions(int(year * den), int(base * den), den, whole), den)


def _credit(positions: Fraction, dollars: int) -> Decimal:
    return Decimal(credit_cents(positions.numerator, positions.denominator, dollars * 100)) / 100


def _ratio(one: Fraction, two: Fraction) -> Fraction:
    d = one.denominator * two.denominator
    return Fraction(*sustained_effort_ratio(int(one * d), int(two * d)))


def test_C1_rise_not_below_zero_fractions_kept_or_floored():
    assert _new(Fraction(31, 2), Fraction(61, 7), False) == Fraction(31, 2) - Fraction(61, 7)
    assert _new(Fraction(3), Fraction(5), False) == 0
    assert _new(Fraction(31, 2), Fraction(61, 7), True) == 6


def test_C1_unknown_average_leaves_new_positions_unknown():
    assert new_positions(None, 3, 1, False) is None
    assert sustained_effort_ratio(None, 2) is None


def test_C2_amounts_rounded_half_up_to_cents():
    # 6.785714... x 2500 = 16964.2857... -> 16964.29
    assert _credit(Fraction(95, 14), 2500) == Decimal("16964.29")
    # 1/8000 x 1250 = 0.15625 -> 0.16 (half-up); 1/800000 x 1250 = 0.0015625 -> 0.00
    assert _credit(Fraction(1, 8000), 1250) == Decimal("0.16")
    assert _credit(Fraction(1, 800000), 1250) == Decimal("0.00")
    # exactly half a cent rounds up: 1/500000 x 2500 = 0.005 -> 0.01
    assert _credit(Fraction(1, 500000), 2500) == Decimal("0.01")


def test_C3_ratio_capped_at_one_zero_without_year_one_positions():
    assert _ratio(Fraction(8), Fraction(4)) == Fraction(1, 2)
    assert _ratio(Fraction(2), Fraction(5)) == 1
    assert _ratio(Fraction(0), Fraction(5)) == 0


def test_C1_whole_positions_option_applies_to_credit_and_ratio():
    emps = [employee("A", {m: 160 for m in months("2004-04", 24)}), employee("B", {m: 100 for m in months("2004-04", 12)})]
    d = qmcredit.decide(qmcredit.claim_from_dict(base_claim(emps, whole_positions=True))).to_dict()
    assert d["new_positions"] == {"year_one": "1.000000", "year_two": "1.000000"}
    assert d["credit"] == {"year_one": "2500.00", "year_two": "1250.00"}
