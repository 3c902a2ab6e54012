"""Who the employees are (FORMAT.md, "Who the employees are"): name, SSN, hire and separation
dates, one row per employee, from the payroll's own columns or a roster joined by employee id.
They decide nothing; they fill Form 313 Part II and the worksheet's list of excluded people.
An SSN is kept whole for the return but shown only as its last four digits (``masked``)."""

from __future__ import annotations

import polars as pl

from ..problems import Problem

COLUMNS = ("name", "ssn", "hired", "separated")
SCHEMA = {"employee_id": pl.Utf8, "name": pl.Utf8, "ssn": pl.Utf8, "hired": pl.Date, "separated": pl.Date}
#: Roster columns that fill the payroll's own where it has none (an employee master file).
ROSTER_FILLS = ("basis", "ownership_interest", "owner_relation")


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMA)


def masked(ssn: str | None) -> str | None:
    """An SSN as outputs show it: its last four digits only."""
    return None if not ssn else f"XXX-XX-{ssn[-4:]}"


def extract(raw: pl.DataFrame) -> tuple[pl.DataFrame, list[Problem]]:
    """The people of raw rows (text columns ``employee_id``, ``source`` and any of ``COLUMNS``):
    the first value given for each employee; problems name the row of a bad value."""
    have = [c for c in COLUMNS if c in raw.columns]
    if not have:
        return empty(), []
    df = raw.select(
        pl.col("employee_id").cast(pl.Utf8).str.strip_chars(), "source",
        *(pl.col(c).cast(pl.Utf8).str.strip_chars() for c in have),
        *(pl.lit(None, dtype=pl.Utf8).alias(c) for c in COLUMNS if c not in have),
    )
    ssn = pl.col("ssn").str.replace_all(r"[\s-]", "")
    df = df.with_columns(
        pl.when(ssn.str.contains(r"^\d{9}$")).then(ssn).alias("_ssn"),
        pl.col("hired").str.to_date("%Y-%m-%d", strict=False).alias("_hired"),
        pl.col("separated").str.to_date("%Y-%m-%d", strict=False).alias("_separated"),
    )
    found: list[Problem] = []
    checks = (
        ("ssn", pl.col("ssn").is_not_null() & pl.col("_ssn").is_null(), "ssn: {} is not nine digits; write e.g. 123-45-6789"),
        ("hired", pl.col("hired").is_not_null() & pl.col("_hired").is_null(), "hired: {} is not a date; write YYYY-MM-DD"),
        ("separated", pl.col("separated").is_not_null() & pl.col("_separated").is_null(), "separated: {} is not a date; write YYYY-MM-DD"),
    )
    for col, bad, text in checks:
        for source, value in df.filter(bad).select("source", col).iter_rows():
            shown = "'" + value[:-4].translate(str.maketrans("0123456789", "X" * 10)) + value[-4:] + "'" if col == "ssn" else repr(value)
            found.append(Problem(source, text.format(shown)))
    people = df.filter(pl.col("employee_id").is_not_null() & (pl.col("employee_id") != "")).group_by("employee_id", maintain_order=True).agg(
        pl.col("name").drop_nulls().first(), pl.col("_ssn").drop_nulls().first().alias("ssn"),
        pl.col("_hired").drop_nulls().first().alias("hired"), pl.col("_separated").drop_nulls().first().alias("separated"),
    )
    wrong = people.filter(pl.col("separated") < pl.col("hired"))
    for emp, hired, sep in wrong.select("employee_id", "hired", "separated").iter_rows():
        found.append(Problem(f"employee {emp}", f"separated {sep} is before hired {hired}"))
    return people.select(*SCHEMA), found


def joined(payroll_people: pl.DataFrame, roster: pl.DataFrame) -> pl.DataFrame:
    """The payroll's people, each field the payroll lacks taken from the roster."""
    if payroll_people.is_empty():
        return roster
    both = payroll_people.join(roster, on="employee_id", how="full", coalesce=True, suffix="_roster")
    return both.select("employee_id", *(pl.coalesce(c, f"{c}_roster").alias(c) for c in COLUMNS))


_REASONS = {"spouse": "spouse of an owner", "dependant": "dependant of an owner", "ancestor": "ancestor of an owner",
            "descendant": "descendant of an owner"}


def listed(payroll: pl.DataFrame, people: pl.DataFrame | None) -> tuple[list[dict], list[dict]]:
    """Form 313 Part II and the worksheet's list of excluded people: (employees, excluded), one
    entry per employee of the payroll, in id order, each with ``employee_id``, ``name``, ``ssn``
    (last four digits only), ``hired``, ``separated``; an excluded one also with ``reason`` and
    ``rule`` (P1: an owner, or an owner's spouse, dependant, ancestor or descendant)."""
    who = payroll.group_by("employee_id").agg(
        pl.col("ownership_interest").any().alias("_owner"), pl.col("owner_relation").drop_nulls().first().alias("_relation"),
    ).sort("employee_id")
    if people is not None and not people.is_empty():
        who = who.join(people, on="employee_id", how="left")
    else:
        who = who.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in SCHEMA.items() if c != "employee_id")
    employees, excluded = [], []
    for r in who.iter_rows(named=True):
        entry = {"employee_id": r["employee_id"], "name": r["name"], "ssn": masked(r["ssn"]),
                 "hired": r["hired"] and r["hired"].isoformat(), "separated": r["separated"] and r["separated"].isoformat()}
        if r["_owner"] or r["_relation"]:
            excluded.append({**entry, "reason": "ownership interest" if r["_owner"] else _REASONS.get(r["_relation"], r["_relation"]), "rule": "P1"})
        else:
            employees.append(entry)
    return employees, excluded
