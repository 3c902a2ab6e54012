"""W1-W3 (52:27BBB-55(e))."""

from datetime import date

from qmcredit.law.options import Options
from qmcredit.law.windows import windows


def test_W1_year_one_starts_the_month_after_operations_began():
    w = windows(date(2004, 3, 15), Options())
    assert (w.year_one.start, w.year_one.end) == (date(2004, 4, 1), date(2005, 3, 31))


def test_W1_first_day_default_still_next_month_option_same_month():
    assert windows(date(2004, 3, 1), Options()).year_one.start == date(2004, 4, 1)
    opt = Options(year_one_start="same_month_if_first_day")
    assert windows(date(2004, 3, 1), opt).year_one.start == date(2004, 3, 1)
    assert windows(date(2004, 3, 2), opt).year_one.start == date(2004, 4, 1)


def test_W1_december_rolls_into_next_year():
    w = windows(date(2004, 12, 31), Options())
    assert w.year_one.start == date(2005, 1, 1) and w.base.start == date(2004, 1, 1)


def test_W2_W3_twelve_months_after_and_before():
    w = windows(date(2007, 7, 1), Options())
    assert w.base.to_dict() == {"start": "2006-08-01", "end": "2007-07-31"}
    assert w.year_two.to_dict() == {"start": "2008-08-01", "end": "2009-07-31"}


def test_W_leap_february_end():
    w = windows(date(2004, 2, 10), Options())
    assert w.base.end == date(2004, 2, 29)
