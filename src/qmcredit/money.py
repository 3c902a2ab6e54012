"""Exact money and ratio arithmetic: whole cents, Decimal and Fraction, never a binary float;
rounding only where RULES.md says (the rules round in ``law``; this module only converts and writes)."""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from fractions import Fraction

import polars as pl

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def cents(x: Decimal) -> int:
    """An amount in whole cents (amounts are validated to whole cents)."""
    num, den = x.as_integer_ratio()  # in lowest terms: whole cents when den divides 100
    if 100 % den:
        raise ValueError(f"{x} has fractions of a cent")
    return num * (100 // den)


def from_cents(c: int) -> Decimal:
    if -_EXACT_CENTS < c < _EXACT_CENTS:
        return Decimal(c).scaleb(-2)  # the same Decimal as the division, quantized, in one step
    return (Decimal(c) / 100).quantize(CENT)


_EXACT_CENTS = 10**26  # below it, dividing by 100 and quantizing is exact within Decimal's 28 digits


def money(x: Decimal) -> str:
    return str(x.quantize(CENT))


@functools.lru_cache(maxsize=65536)  # a determination's amounts repeat (zeros, its rooms, its balances)
def cents_text(c: int) -> str:
    """``money(from_cents(c))`` of whole cents, written from the integer (no Decimal made): the
    sign, the whole units, two digits of cents."""
    if -_EXACT_CENTS < c < _EXACT_CENTS:
        whole, part = divmod(-c if c < 0 else c, 100)
        return f"-{whole}.{part:02d}" if c < 0 else f"{whole}.{part:02d}"
    return money(from_cents(c))


@functools.lru_cache(maxsize=1024)  # a claim's figures share a few denominators
def _places(den: int, places: int) -> tuple[int, bool]:
    """The decimals ``exact_decimal`` writes of a fraction over ``den`` (in lowest terms), and
    whether it terminates."""
    d, twos, fives = den, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    return (max(twos, fives, places), True) if d == 1 else (places, False)


def exact_decimal(x: Fraction, places: int = 6) -> str:
    """A position count or ratio as a decimal string: every digit when it terminates (at least
    `places` decimals), else rounded half-up to `places` decimals (FORMAT.md)."""
    return _exact_text(x.numerator, x.denominator, places)


def exact_ratio(num: int, den: int, places: int = 6) -> str:
    """``exact_decimal(Fraction(num, den))`` of whole numbers (``den`` > 0), without the Fraction."""
    g = math.gcd(num, den)
    return _exact_text(num // g, den // g, places)


def _exact_text(numerator: int, denominator: int, places: int) -> str:
    """``exact_decimal`` of the fraction in lowest terms ``numerator / denominator``."""
    k, terminates = _places(denominator, places)
    # |x| x 10^k in whole numbers: exact when x terminates within k places, else half-up
    num = abs(numerator) * 10**k
    digits = num // denominator if terminates else (2 * num + denominator) // (2 * denominator)
    sign = "-" if numerator < 0 and digits else ""
    whole, frac = divmod(digits, 10**k)
    return f"{sign}{whole}.{str(frac).rjust(k, '0')}"


def fraction_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


# -- columnar text of the same figures (the batch's tables) ------------------------------------
_WHOLE = pl.Int128
_INT128_MAX = 2**127 - 1
_MOST_PLACES = 30  # beyond it, exact_decimal writes the row


def _fixed(digits: pl.Expr, places: int) -> pl.Expr:
    """Non-negative ``digits`` x 10^-places as text with exactly ``places`` decimals."""
    scale = pl.lit(10**places, dtype=_WHOLE)
    return pl.format("{}.{}", (digits // scale).cast(pl.Utf8), (digits % scale).cast(pl.Utf8).str.zfill(places))


def money_text(cents: pl.Expr) -> pl.Expr:
    """``money`` of amounts in whole cents (zero or more), as text."""
    return _fixed(cents, 2)


def _twos_fives(n: int) -> tuple[int, int, int]:
    twos = fives = 0
    while n % 2 == 0:
        n, twos = n // 2, twos + 1
    while n % 5 == 0:
        n, fives = n // 5, fives + 1
    return twos, fives, n


#: Up to this many values (rows x numerators), ``exact_decimal_text`` writes each by
#: ``exact_decimal`` itself: a claim's few distinct quotients cost less so than the queries'
#: fixed costs (~0.9 ms; 64 values: 0.11 ms row by row, 0.97 ms by the queries).
FEW_VALUES = 256


def exact_decimal_text(frame: pl.DataFrame, num: str | list[str], den: str, places: int = 6) -> pl.Series | list[pl.Series]:
    """``exact_decimal(num / den)`` for every row of ``frame`` (zero or more; null stays null),
    in whole-number columns: every digit when the fraction terminates (at least ``places``), else
    half-up to ``places``. A row whose digits would not fit ``Int128`` is written by
    ``exact_decimal`` itself, as is every row of a frame of at most ``FEW_VALUES`` values.
    ``num`` a list: one Series per numerator, all over ``den``, in one query."""
    nums = [num] if isinstance(num, str) else num
    if frame.height * len(nums) <= FEW_VALUES:
        d = frame.get_column(den).to_list()
        results = [pl.Series(n, [None if a is None or b is None else exact_decimal(Fraction(a, b), places) for a, b in zip(frame.get_column(n).to_list(), d)],
                             dtype=pl.Utf8) for n in nums]
        return results[0] if isinstance(num, str) else results
    dens = frame.get_column(den).drop_nulls().unique()
    reach = [max(*_twos_fives(d)[:2], places) for d in dens.to_list()]  # places a terminating fraction can need
    table = pl.DataFrame({
        den: dens, "_k": pl.Series(reach, dtype=pl.Int32),
        "_scale": pl.Series([10**k if k <= _MOST_PLACES else 0 for k in reach], dtype=_WHOLE),
        "_limit": pl.Series([_INT128_MAX // (2 * 10**k) if k <= _MOST_PLACES else -1 for k in reach], dtype=_WHOLE),
    })
    out = frame.select(*nums, den).join(table, on=den, how="left", maintain_order="left").select(
        *(_decimal_text(n, den, places) for n in nums), *(_fits(n, den).fill_null(True).alias(f"_fits_{n}") for n in nums))
    results = []
    for n in nums:
        result = out.get_column(n)
        big = out.get_column(f"_fits_{n}").not_().arg_true()
        if big.len():
            rows = frame.select(n, den)[big]
            result = result.scatter(big, [exact_decimal(Fraction(a, b)) for a, b in rows.iter_rows()])
        results.append(result)
    return results[0] if isinstance(num, str) else results


def _fits(num: str, den: str) -> pl.Expr:
    limit = pl.col("_limit")
    return (pl.col(num) <= limit) & (pl.col(den) <= limit)


@functools.lru_cache(maxsize=64)  # a batch builds the same few expressions for every partition
def _decimal_text(num: str, den: str, places: int) -> pl.Expr:
    """The text of ``exact_decimal_text`` for rows that fit ``Int128`` (``_k``: the places the
    row's denominator can need, ``_scale`` = 10^``_k``). A fraction terminates when its digits
    over ``_k`` places are whole; those digits are then written, the decimals beyond ``places``
    without their trailing zeros (the fewest that are exact); else half-up to ``places``."""
    n, d, k = pl.col(num), pl.col(den), pl.col("_k")
    scaled, scale = n * pl.col("_scale"), pl.col("_scale")
    digits = scaled // d
    decimals = (digits % scale).cast(pl.Utf8).str.zfill(k)
    exact = pl.format("{}.{}{}", (digits // scale).cast(pl.Utf8), decimals.str.slice(0, places), decimals.str.slice(places).str.strip_chars_end("0"))
    out = pl.when(scaled % d == 0).then(exact).otherwise(
        _fixed((pl.lit(2, dtype=_WHOLE) * n * pl.lit(10**places, dtype=_WHOLE) + d) // (pl.lit(2, dtype=_WHOLE) * d), places))
    return pl.when(_fits(num, den)).then(out).alias(num)
