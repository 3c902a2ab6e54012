"""The payroll table: one row per employee and calendar month (docs/format.md, "The payroll table").

``normalize`` turns raw columns (text or numbers, as read from JSON, CSV, Parquet or Excel) into
typed, exact columns and a ``problem`` column naming what is wrong with each bad row (its
``source`` column says where the row came from). The single-claim path and the batch engine both run these
expressions, so a row is judged the same way wherever it comes from.

Hours are kept as scaled integers, ``hours`` = hours x 10^9 (``HOURS_SCALE``), which loses nothing
of an input with up to nine decimals (a nanohour); an input with more is refused rather than rounded.
Int64 holds every product and per-month sum of them up to some twelve million employees in a month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache

import polars as pl


HOURS_SCALE = 1_000_000_000
HOURS_DECIMALS = 9
BASES = ("permanent", "temporary", "seasonal")
RELATIONS = ("spouse", "dependant", "ancestor", "descendant")

#: The normalised columns (besides an optional ``claim_id``).
COLUMNS = {
    "employee_id": pl.Utf8,
    "month": pl.Utf8,
    "month_idx": pl.Int32,
    "hours": pl.Int64,
    "basis": pl.Utf8,
    "ownership_interest": pl.Boolean,
    "owner_relation": pl.Utf8,
    "source": pl.Utf8,
}
RAW_COLUMNS = ("employee_id", "month", "hours", "basis", "ownership_interest", "owner_relation")
REQUIRED_COLUMNS = ("employee_id", "month", "hours")

_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


def month_text(idx: int) -> str:
    return f"{idx // 12:04d}-{idx % 12 + 1:02d}"


def month_of(day: date) -> int:
    return day.year * 12 + day.month - 1


def first_unknown_month(as_of: date | None) -> int | None:
    """With ``as_of``, the first month that is not over by that day: from it on, months are
    unknown, not zero (issue 2, completeness). None without ``as_of``."""
    if as_of is None:
        return None
    over = date.fromordinal(as_of.toordinal() + 1).day == 1
    return month_of(as_of) + (1 if over else 0)


def _days_in(y: pl.Expr, m: pl.Expr) -> pl.Expr:
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    return (
        pl.when(m == 2).then(pl.when(leap).then(29).otherwise(28))
        .when(m.is_in((4, 6, 9, 11))).then(30)
        .otherwise(31)
    ).cast(pl.Int64)


# The expressions of the parsers, their problems and their words below are built once (``cache``;
# an expression is immutable): building them again was about a sixth of normalising a claim of
# 50 employees (some 150 literals and 60 expressions a call).

# Row problems, in the order they are reported (the first that applies is the row's problem).
(_EMPLOYEE, _MONTH, _H_MISSING, _H_AMBIGUOUS, _H_NAN, _H_NEGATIVE, _H_PRECISE, _H_TOO_MANY, _BASIS, _OWN, _RELATION,
 _AS_OF, _DUPLICATE) = range(13)


@cache
def _month_stages() -> list[list[pl.Expr]]:
    """``_raw_month`` -> ``month`` (trimmed text) and ``month_idx`` (null unless YYYY-MM)."""
    text = pl.col("month")
    ok = text.str.contains(r"^\d{4}-(0[1-9]|1[0-2])$").fill_null(False)
    y = text.str.slice(0, 4).cast(pl.Int32, strict=False)
    m = text.str.slice(5, 2).cast(pl.Int32, strict=False)
    return [
        [pl.col("_raw_month").cast(pl.Utf8).str.strip_chars().alias("month")],
        [pl.when(ok).then(y * 12 + m - 1).cast(pl.Int32).alias("month_idx")],
    ]


#: The number-reading rule (docs/format.md, the same as money's in ``claim``): the point is the
#: decimal point; a comma is read only as a thousands separator, in groups of exactly three digits
#: before any point ("1,234.5"). Any other comma ("1,60", "1.234,5", "1,2345") could be read two
#: ways: refused, naming both readings. Every table's hours are read so: by month here, by pay
#: period (``imports.periods``), summed over several columns (``imports.table``); and a claim's
#: money (``claim``).
THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)$"


def hours_text(hours: pl.Expr) -> pl.Expr:
    """Hours as text, trimmed, thousands separators removed (a comma otherwise stays, refused)."""
    t = hours.cast(pl.Utf8).str.strip_chars()
    return pl.when(t.str.contains(THOUSANDS.pattern)).then(t.str.replace_all(",", "", literal=True)).otherwise(t)


def hours_text_of(value: str) -> str:
    """``hours_text`` of one value (a cell of hours summed over several columns)."""
    t = value.strip()
    return t.replace(",", "") if THOUSANDS.match(t) else t


def ambiguous_hours(hours: pl.Expr, example: str) -> pl.Expr:
    """The problem of an hours text (``hours_text``'s) whose comma could be read two ways, naming
    both readings; null for any other text."""
    return pl.when(_ambiguous(hours)).then(pl.format(
        "hours: '{}' is ambiguous: it could be read as {} (comma as the decimal point) or as {} (comma as a thousands separator); "
        f"write hours with a point as the decimal point and no other separator, e.g. {example}", hours, *_readings(hours)))


def _readings(text: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """A number's text with the comma as the decimal point (points as thousands separators), and
    with the comma as a thousands separator."""
    return (text.str.replace_all(".", "", literal=True).str.replace_all(",", ".", literal=True),
            text.str.replace_all(",", "", literal=True))


def _ambiguous(text: pl.Expr) -> pl.Expr:
    """A comma that is not a thousands separator, in a text both of whose readings are numbers."""
    comma, thousands = _readings(text)
    return text.str.contains(",", literal=True) & comma.str.contains(_NUMBER) & thousands.str.contains(_NUMBER)


@cache
def _hours_stages() -> list[list[pl.Expr]]:
    """``_raw_hours`` -> ``hours`` scaled by 10^9 (null unless a number of hours with at most nine
    decimals and six whole digits) and ``_h_code``, the first problem of the value itself."""
    h, whole, frac = pl.col("_h"), pl.col("_whole"), pl.col("_frac")
    number, negative, precise, small = pl.col("_number"), pl.col("_negative"), pl.col("_precise"), pl.col("_small")
    scaled = (
        pl.when(whole == "").then(pl.lit("0")).otherwise(whole).cast(pl.Int64, strict=False) * HOURS_SCALE
        + frac.str.slice(0, HOURS_DECIMALS).str.pad_end(HOURS_DECIMALS, "0").cast(pl.Int64, strict=False)
    )
    code = (
        pl.when(h.is_null() | (h == "")).then(_H_MISSING)
        .when(~number & _ambiguous(h)).then(_H_AMBIGUOUS)
        .when(~number).then(_H_NAN)
        .when(negative).then(_H_NEGATIVE)
        .when(precise).then(_H_PRECISE)
    )
    return [
        [hours_text(pl.col("_raw_hours")).alias("_h")],
        [h.str.contains(_NUMBER).fill_null(False).alias("_number"),
         h.str.extract(r"^[+-]?(\d*)", 1).alias("_whole"), h.str.extract(r"\.(\d*)$", 1).fill_null("").alias("_frac")],
        [(h.str.starts_with("-") & number & h.str.contains(r"[1-9]")).alias("_negative"),
         (frac.str.replace(r"0+$", "").str.len_chars() > HOURS_DECIMALS).alias("_precise"),
         (whole.str.replace(r"^0+", "").str.len_chars() <= 6).alias("_small")],
        [pl.when(number & ~negative & ~precise & small).then(scaled).cast(pl.Int64).alias("hours"), code.cast(pl.UInt8).alias("_h_code")],
    ]


def _lower(raw: pl.Expr) -> pl.Expr:
    return raw.cast(pl.Utf8).str.strip_chars().str.to_lowercase()


@cache
def _basis_stages() -> list[list[pl.Expr]]:
    """``_raw_basis`` -> ``basis``, lower case; an empty basis is permanent."""
    b = _lower(pl.col("_raw_basis"))
    return [[pl.when(b.is_null() | (b == "")).then(pl.lit("permanent")).otherwise(b).alias("basis")]]


@cache
def _ownership_stages() -> list[list[pl.Expr]]:
    """``_raw_ownership_interest`` -> ``ownership_interest``: empty is false; null unless yes or no."""
    o = _lower(pl.col("_raw_ownership_interest"))
    return [[pl.when(o.is_null() | (o == "")).then(False).when(o.is_in(_TRUE)).then(True).when(o.is_in(_FALSE)).then(False).alias("ownership_interest")]]


@cache
def _relation_stages() -> list[list[pl.Expr]]:
    """``_raw_owner_relation`` -> ``owner_relation``, lower case; null when empty or none."""
    r = _lower(pl.col("_raw_owner_relation"))
    return [[pl.when(r.is_null() | r.is_in(("", "none", "null"))).then(None).otherwise(r).alias("owner_relation")]]


#: Each raw column's parser: its stages (each a list of expressions over the columns of the
#: stages before, from ``_raw_<column>``) and the typed columns it writes.
_PARSERS = {
    "month": (_month_stages, ("month", "month_idx")),
    "hours": (_hours_stages, ("hours", "_h_code")),
    "basis": (_basis_stages, ("basis",)),
    "ownership_interest": (_ownership_stages, ("ownership_interest",)),
    "owner_relation": (_relation_stages, ("owner_relation",)),
}


def _parse(lf: pl.LazyFrame, columns) -> pl.LazyFrame:
    """Run the parsers of ``columns`` side by side, stage by stage."""
    stages = [_PARSERS[c][0]() for c in columns]
    for k in range(max(len(st) for st in stages)):
        lf = lf.with_columns(e for st in stages if k < len(st) for e in st[k])
    return lf


#: From this many rows on, each column's distinct values are parsed once and looked up; below it,
#: the rows are parsed directly (by the same ``_PARSERS``), which costs less than the lookup's steps.
LOOKUP_FROM_ROWS = 50_000


@cache
def _own_problems() -> dict[str, pl.Expr]:
    """Per raw column, whether a parsed value has a problem of its own, over the columns of its
    ``_PARSERS`` entry; for hours, whether it may have one: more than 28 days of hours may be more
    than its month has (the row's check decides)."""
    return {
        "month": pl.col("month_idx").is_null(),
        "hours": pl.col("_h_code").is_not_null() | pl.col("hours").is_null() | (pl.col("hours") > 28 * 24 * HOURS_SCALE),
        "basis": ~pl.col("basis").is_in(BASES).fill_null(False),
        "ownership_interest": pl.col("ownership_interest").is_null(),
        "owner_relation": pl.col("owner_relation").is_not_null() & ~pl.col("owner_relation").is_in(RELATIONS).fill_null(False),
        "employee_id": pl.col("employee_id").is_null() | (pl.col("employee_id") == ""),
    }


#: Columns already coded by their reader: per column, each row's code (UInt32; null for a null
#: value) and the column's distinct values by code (text): a Parquet reader's dictionary
#: (``batch.tables.read_coded``).
Coded = dict[str, tuple[pl.Series, pl.Series]]


def _lookup(raw: pl.DataFrame, coded: Coded | None = None) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """The distinct values of each parsed column (and of ``employee_id``), found in one hashing
    pass as the categories of a categorical column of its own, or given by ``coded``. Gives each
    row's codes (a value's place among its column's distinct values; null is the last place) and,
    per column, the table of its distinct values (``_raw_<column>``) parsed (``_PARSERS``;
    ``employee_id`` stripped, ``_emp`` its code after stripping), by code, with ``_bad``: whether
    the value has a problem of its own (``_own_problems``). Payroll values repeat endlessly (a few
    hundred months, a few thousand distinct hours), so each parser runs on a few thousand values,
    not millions."""
    coded = coded or {}
    cols = [*_PARSERS, "employee_id"]
    categories = {c: pl.Categories.random() for c in cols if c not in coded}
    cast = raw.select(pl.col(c).cast(pl.Utf8).cast(pl.Categorical(categories[c])) for c in categories)  # holds the categories
    codes = {**{c: cast.get_column(c).to_physical() for c in categories}, **{c: coded[c][0] for c in coded}}
    distinct = {**{c: categories[c].to_series() for c in categories}, **{c: coded[c][1] for c in coded}}
    own = _own_problems()
    queries = []
    for c in cols:
        values = pl.LazyFrame({f"_raw_{c}": distinct[c].extend(pl.Series([None], dtype=pl.Utf8))})  # by code
        if c == "employee_id":
            stripped = values.select(pl.col("_raw_employee_id").cast(pl.Utf8).str.strip_chars().alias("employee_id"))
            table = stripped.with_columns(pl.col("employee_id").cast(pl.Categorical(pl.Categories.random())).to_physical().alias("_emp"))
        else:
            table = _parse(values, [c]).select(f"_raw_{c}", *_PARSERS[c][1])
        queries.append(table.with_columns(own[c].alias("_bad")))
    tables = dict(zip(cols, pl.collect_all(queries)))  # side by side, in one call
    index = pl.DataFrame([codes[c].fill_null(tables[c].height - 1).alias(c) for c in cols])
    return index, tables


def _with_raw_columns(df: pl.DataFrame, coded: Coded | None = None) -> pl.DataFrame:
    """``df`` with every raw column (but those ``coded``), a missing one as nulls."""
    missing = [c for c in RAW_COLUMNS if c not in df.columns and c not in (coded or {})]
    return df.with_columns(pl.lit(None, dtype=pl.Utf8).alias(c) for c in missing) if missing else df


def row_names(before: str, numbers: pl.Expr, after: str = "") -> pl.Expr:
    """Each row's location: ``before``, its number, ``after`` ("payroll.csv line 17"). Joined, not
    a ``pl.format`` template, which a file name with braces would break."""
    return pl.concat_str([pl.lit(before), numbers.cast(pl.Utf8), pl.lit(after)])


def _with_row_sources(df: pl.DataFrame, source: pl.Expr | None) -> pl.DataFrame:
    """``df`` with a ``source`` column, "row 1", "row 2", ..., when it has none and no ``source``
    expression is given."""
    if "source" in df.columns or source is not None:
        return df
    return df.with_columns(pl.format("row {}", pl.int_range(1, pl.len() + 1)).alias("source"))


def _after_as_of(as_of_idx: int | pl.Expr) -> pl.Expr:
    """A calendar month from ``as_of_idx`` on: not over by as_of, unknown (issue 2, completeness)."""
    cut = as_of_idx if isinstance(as_of_idx, pl.Expr) else pl.lit(as_of_idx)
    return pl.col("month_idx").is_not_null() & (pl.col("month_idx") >= cut)


@cache
def _value_checks() -> tuple[tuple[int | None, pl.Expr], ...]:
    """The row checks on typed values but ``as_of``'s, in the order of their problems (None: the
    hours' own)."""
    month_ok = pl.col("month_idx").is_not_null()
    emp, hours, idx = pl.col("employee_id"), pl.col("hours"), pl.col("month_idx")
    days = _days_in(idx // 12, idx % 12 + 1)
    return (
        (_EMPLOYEE, emp.is_null() | (emp == "")),
        (_MONTH, ~month_ok),
        (None, pl.col("_h_code").is_not_null()),
        (_H_TOO_MANY, month_ok & (hours.is_null() | (hours > days * 24 * HOURS_SCALE))),
        (_BASIS, ~pl.col("basis").is_in(BASES)),
        (_OWN, pl.col("ownership_interest").is_null()),
        (_RELATION, pl.col("owner_relation").is_not_null() & ~pl.col("owner_relation").is_in(RELATIONS)),
    )


def _checks(as_of_idx: int | pl.Expr | None) -> list[tuple[int | None, pl.Expr]]:
    """The row checks on typed values, in the order of their problems: ``_value_checks``, then
    a month not over by ``as_of_idx`` (when given)."""
    checks = list(_value_checks())
    if as_of_idx is not None:
        checks.append((_AS_OF, _after_as_of(as_of_idx)))
    return checks


def _code(checks: list[tuple[int | None, pl.Expr]]) -> pl.Expr:
    """A row's first problem (null when none)."""
    code = pl.when(checks[0][1]).then(pl.lit(checks[0][0]))
    for c, cond in checks[1:]:
        code = code.when(cond).then(pl.col("_h_code") if c is None else pl.lit(c))
    return code.cast(pl.UInt8).alias("_code")


def _second(keys: list[str]) -> tuple[pl.Expr, pl.Expr]:
    """The first row's ``source`` of each employee and month, and whether a row without another
    problem is a second row for them."""
    first = pl.col("source").first().over(keys)
    return first, (pl.len().over(keys) > 1) & pl.col("_code").is_null() & (pl.col("source") != first)


def _maybe_repeated(rows: pl.DataFrame, keys: list[str]) -> pl.Series:
    """Rows that may share their ``keys`` with another row (a superset of the rows that do).
    A payroll export lists each employee's months together, in order: then a run of rows of one
    employee (and claim) whose months rise cannot repeat a month, and only the runs that do not
    rise, or whose employee has another run, are candidates. A table in another order has its
    rows' keys hashed: rows whose hash is shared are the candidates."""
    month = pl.col(keys[-1])
    marks = rows.select(pl.struct(keys[:-1]).rle_id().alias("run"), *keys[:-1], (~(month > month.shift(1)).fill_null(False)).alias("back"))
    new_run = (pl.col("run") != pl.col("run").shift(1)).fill_null(True)
    starts = marks.filter(new_run)
    if starts.height * 4 > rows.height:  # not grouped by employee: hash the keys
        key_hash = pl.lit(0, dtype=pl.UInt64)
        for k, c in enumerate(keys):
            key_hash = key_hash ^ (pl.col(c).hash(k) * (2 * k + 1))
        return rows.select((pl.len().over(key_hash) > 1) & pl.col(keys[-1]).is_not_null()).to_series()
    again = starts.filter(pl.struct(keys[:-1]).is_duplicated()).get_column("run")
    unsorted = marks.filter(pl.col("back") & ~new_run).get_column("run")
    flagged = pl.zeros(starts.height + 1, dtype=pl.Boolean, eager=True).scatter(pl.concat([again, unsorted]), True)
    return marks.select(pl.lit(flagged).gather(pl.col("run"))).to_series()


@dataclass(frozen=True)
class Lookup:
    """The first half of ``check``, which needs nothing of the claims (so the batch runs it while
    it reads their headers): a large table's raw rows, each column's distinct values parsed and
    judged once (``_lookup``), the typed rows, and which rows may have a problem of their own
    values or share an employee and month with another row."""

    rows: pl.DataFrame              # raw: every raw column not coded by its reader (a missing one as nulls)
    index: pl.DataFrame             # each row's codes in ``tables``
    tables: dict[str, pl.DataFrame]
    typed: pl.DataFrame             # ``check``'s typed rows
    flags: pl.DataFrame             # ``_bad``: a value with a problem; ``_again``: ``_maybe_repeated``
    keys: list[str]                 # what makes a row one employee's month


def lookup(lf: pl.LazyFrame | pl.DataFrame, lean: bool = False, coded: Coded | None = None) -> Lookup:
    """Parse and judge the raw rows' values (``check``'s first half). ``lean``: see ``check``;
    ``coded``: raw columns given as codes, not in ``lf``."""
    df = _with_raw_columns(lf.collect() if isinstance(lf, pl.LazyFrame) else lf, coded)
    index, tables = _lookup(df, coded)
    kept = {"month_idx", "hours", "basis", "ownership_interest", "owner_relation", *(("_emp",) if lean else ("month", "employee_id"))}
    rows = df.drop(*_PARSERS, "employee_id", strict=False).hstack(_typed(index, tables, kept, categorical=lean, engine="streaming"))
    who = rows.get_column("_emp") if lean else _typed(index, tables, {"_emp"}, engine="streaming")[0]
    if lean:
        rows = rows.rename({"_emp": "employee_id"})
    # a row's flag of each column looked up by its code, as bytes (a lookup costs less than hashing the code, gathering bits more),
    # by the streaming engine (as ``_typed``: 0.011 processor-s a million rows, not 0.023)
    bad_values = [pl.lit(t.get_column("_bad").cast(pl.UInt8)).gather(pl.col(c)) for c, t in tables.items() if t.get_column("_bad").any()]
    keys = ["claim_id", "_emp", "month_idx"] if "claim_id" in df.columns else ["_emp", "month_idx"]
    flags = pl.DataFrame([
        index.lazy().select(pl.max_horizontal(bad_values).cast(pl.Boolean)).collect(engine="streaming").to_series().alias("_bad") if bad_values
        else pl.repeat(False, df.height, dtype=pl.Boolean, eager=True).alias("_bad"),
        _maybe_repeated(pl.DataFrame([who if k == "_emp" else rows.get_column(k) for k in keys]), keys).alias("_again"),
    ])
    return Lookup(df, index, tables, rows, flags, keys)


def _typed(at: pl.DataFrame, tables: dict[str, pl.DataFrame], names: set[str], categorical: bool = False, engine: str = "in-memory") -> list[pl.Series]:
    """The typed columns ``names`` of the rows ``at`` (their codes in ``tables``); ``categorical``:
    text as categorical columns, whose gathering costs a fraction of text's. Booleans are gathered
    as bytes (gathering bits costs more), then read back as booleans. ``engine``: polars' engine;
    ``lookup`` gathers every row's by the streaming one, a morsel of rows at a time, in 0.020
    processor-s a million rows of six columns, not 0.032 (its start costs more than it saves on
    the few rows ``check`` gathers, benchmarks/batch.md)."""

    def gathered(c: str, s: pl.Series) -> pl.Expr:
        if s.dtype == pl.Boolean:
            return pl.lit(s.cast(pl.UInt8)).gather(pl.col(c)).cast(pl.Boolean)
        if categorical and s.dtype == pl.Utf8:
            s = s.cast(pl.Categorical(pl.Categories.random()))
        return pl.lit(s).gather(pl.col(c))

    return at.lazy().select(gathered(c, t.get_column(name)).alias(name) for c, t in tables.items() for name in t.columns if name in names).collect(
        engine=engine).get_columns()


def check(
    rows: pl.LazyFrame | Lookup, *, as_of_idx: int | pl.Expr | None = None, source: pl.Expr | None = None, lean: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Type and check the raw payroll rows of a large table (the work of ``normalize``), giving
    the typed rows apart from their problems: the rows (``COLUMNS`` but ``source``, in the
    input's order, the raw columns replaced), and one row per bad row: ``_i`` (its place),
    ``source`` and ``problem``. ``lean``: the rows carry only what P1-P4 need, without ``month``,
    with ``employee_id`` as a code of the (stripped) id, an integer, and text as categorical.

    Each column's distinct values are parsed and judged once (``lookup``). The rows that may
    have a problem are those with a value that has one, with a month not over by ``as_of_idx``,
    or that may be a second row for an employee and month (``_maybe_repeated``); their problems
    are found as ``normalize`` finds them, with its words. ``rows``: the raw rows, or their
    ``lookup`` (made with the same ``lean``)."""
    looked = rows if isinstance(rows, Lookup) else lookup(rows, lean)
    df, index, tables, flags = _with_row_sources(looked.rows, source), looked.index, looked.tables, looked.flags
    if as_of_idx is not None:
        flags = flags.with_columns(pl.col("_bad") | looked.typed.select(_after_as_of(as_of_idx).fill_null(False)).to_series())
    look = flags.select((pl.col("_bad") | pl.col("_again")).arg_true().cast(pl.UInt32).alias("_i")).to_series()
    some = df[look].drop(*_PARSERS, "employee_id", strict=False).hstack([  # the raw text is each table's _raw_ column
        *_typed(index[look], tables, {n for t in tables.values() for n in t.columns} - {"_bad"}), *flags[look].get_columns(), look,
    ])
    if "source" not in some.columns:
        some = some.with_columns(source.alias("source"))
    some = some.with_columns(_code(_checks(as_of_idx)))
    first, second = _second(looked.keys)  # every row of a key that has more than one is "_again"
    dup = some.filter(pl.col("_again") & pl.col("month_idx").is_not_null()).with_columns(
        first.alias("_first"), second.alias("_dup")).filter(pl.col("_dup"))
    found = pl.concat([
        some.filter(pl.col("_code").is_not_null()).with_columns(pl.lit(None, dtype=pl.Utf8).alias("_first"), pl.lit(False).alias("_dup")),
        dup.with_columns(pl.lit(_DUPLICATE, dtype=pl.UInt8).alias("_code")),
    ]).sort("_i").select("_i", "source", _message().alias("problem"))
    return looked.typed, found


def normalize(lf: pl.LazyFrame, *, as_of_idx: int | pl.Expr | None = None, source: pl.Expr | None = None) -> pl.LazyFrame:
    """Type and check raw payroll rows. Adds ``problem`` (null when the row is good).

    ``as_of_idx``: the first month index that is not yet known (months from it on are unknown,
    rule "completeness" of issue 2); a row for such a month is a problem.
    ``source``: for rows without a ``source`` column, the expression of a row's location,
    written only for the rows that have a problem (``source`` is null on the others); without
    either, rows are "row 1", "row 2", ...

    Each raw column is parsed by its ``_PARSERS`` entry; the checks that look at more than one
    column run on the typed values. A small table is parsed and checked row by row in one query; a
    large one (``LOOKUP_FROM_ROWS`` rows or more) goes through ``check``. Both give the same
    columns, values and messages (tests/test_columnar_text.py).
    """
    df = _with_row_sources(_with_raw_columns(lf.collect()), source)
    written = "source" not in df.columns  # the source is written only where a row has a problem
    order = [*df.columns, *(["source"] if written else []), "month_idx", "problem"]
    if df.height >= LOOKUP_FROM_ROWS:
        rows, found = check(df.lazy(), as_of_idx=as_of_idx, source=source)
        return _with_problems(rows, found.get_column("_i"), found.get_column("problem"), found.get_column("source") if written else None, order)
    typed = _parse(df.lazy().with_columns(pl.col(c).alias(f"_raw_{c}") for c in _PARSERS), _PARSERS).with_columns(
        pl.col("employee_id").cast(pl.Utf8).str.strip_chars())
    rows = typed.with_columns(_code(_checks(as_of_idx)))
    if written:
        rows = rows.with_columns(source.alias("source"))
    keys = ["claim_id", "employee_id", "month_idx"] if "claim_id" in order else ["employee_id", "month_idx"]
    first, second = _second(keys)
    rows = rows.with_columns(
        pl.when(pl.col("month_idx").is_not_null() & second).then(pl.lit(_DUPLICATE, dtype=pl.UInt8)).otherwise(pl.col("_code")).alias("_code"),
        first.alias("_first"),
    ).collect()
    # the words only for the rows with a problem: written for every row, they cost about as much as the parsing
    at = rows.get_column("_code").is_not_null().arg_true()
    bad = rows[at]
    words = bad.select(_message()).to_series() if bad.height else pl.Series(dtype=pl.Utf8)
    return _with_problems(rows.drop("source") if written else rows, at, words, bad.get_column("source") if written else None, order)


def _with_problems(rows: pl.DataFrame, at: pl.Series, problems: pl.Series, sources: pl.Series | None, order: list[str]) -> pl.LazyFrame:
    """``normalize``'s result: ``rows`` with ``problem`` set at the rows ``at`` (null elsewhere)
    and, when the source is written only where a row has a problem, ``source`` as ``sources``
    there; in the columns' ``order``."""
    nulls = lambda name: pl.repeat(None, rows.height, dtype=pl.Utf8, eager=True).alias(name)  # noqa: E731 (not a list of Nones, read one by one)
    extra = [nulls("problem").scatter(at, problems)]
    if sources is not None:
        extra.append(nulls("source").scatter(at, sources))
    return rows.hstack(extra).select(order).lazy()


def _excel_day_hint(month: pl.Expr) -> pl.Expr:
    """What a month written as an Excel day number is told (nothing else is told anything): the
    date it would be, and the fix. Not read as that date: nothing says the number is one."""
    from .imports.dates import EXCEL_DAY, EXCEL_EPOCH, EXCEL_LAST_DAY

    day = month.str.extract(EXCEL_DAY, 1).cast(pl.Int64, strict=False)
    date_text = (pl.lit(EXCEL_EPOCH) + pl.duration(days=day)).dt.to_string("%Y-%m-%d")
    return pl.when(day.is_between(1, EXCEL_LAST_DAY)).then(pl.format(
        "; it looks like an Excel day number ('{}' would be '{}'): format the column as dates in Excel and save the table again",
        day, date_text)).otherwise(pl.lit(""))


@cache
def _message() -> pl.Expr:
    """The words of each problem (docs/format.md: the location, what is wrong, what to do)."""
    q = lambda e: pl.format("'{}'", e.fill_null(""))  # noqa: E731
    hours, month = hours_text(pl.col("_raw_hours")), pl.col("month")
    messages = {
        _EMPLOYEE: pl.lit("employee_id: missing; every row needs the employee it is for"),
        _MONTH: pl.format("month: {} is not a calendar month; write YYYY-MM, e.g. 2004-05{}", q(month), _excel_day_hint(month)),
        _H_MISSING: pl.lit("hours: missing; write 0 for a month without work"),
        _H_AMBIGUOUS: ambiguous_hours(hours, "152.5"),
        _H_NAN: pl.format("hours: {} is not a number of hours; write e.g. 152.5", q(hours)),
        _H_NEGATIVE: pl.format("hours: {} is negative; hours worked are zero or more", q(hours)),
        _H_PRECISE: pl.format("hours: {} has more than {} decimals; round the source record to {} places", q(hours), pl.lit(HOURS_DECIMALS), pl.lit(HOURS_DECIMALS)),
        _H_TOO_MANY: pl.format("hours: {} is more than the {} hours that {} has", q(hours), _days_in(pl.col("month_idx") // 12, pl.col("month_idx") % 12 + 1) * 24, month),
        _BASIS: pl.format("basis: {} must be permanent, temporary or seasonal", q(pl.col("basis"))),
        _OWN: pl.format("ownership_interest: {} must be true or false", q(_lower(pl.col("_raw_ownership_interest")))),
        _RELATION: pl.format("owner_relation: {} must be empty or one of spouse, dependant, ancestor, descendant", q(pl.col("owner_relation"))),
        _AS_OF: pl.format("month: {} is not over by as_of; leave months after as_of out (they are unknown, not zero)", month),
        _DUPLICATE: pl.format("employee {} has more than one row for {} (first at {}); give one row per employee and month", pl.col("employee_id"), month, pl.col("_first")),
    }
    code = pl.col("_code")
    items = list(messages.items())
    expr = pl.when(code == items[0][0]).then(items[0][1])
    for c, msg in items[1:]:
        expr = expr.when(code == c).then(msg)
    return expr
