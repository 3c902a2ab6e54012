"""The tables of an analysis of one or more scenarios: each scenario's cost tables stacked (a
``scenario`` column first), and with reforms, each claim's figures under every scenario with the
difference from the baseline, and the count of claims that gain, lose or change eligibility."""

from __future__ import annotations

import polars as pl

from .cost import LINE_COLUMNS, ClaimCost, Costs, _text, claim_table, cost_tables, frame_of


CHANGES = ("same", "gain", "lose", "timing", "become_eligible", "become_ineligible")


def analysis_tables(scenarios: dict[str, Costs | list[ClaimCost]]) -> dict[str, pl.DataFrame]:
    """``scenarios``: name -> its claims' costs, the baseline first (the same claims in each)."""
    scenarios = {k: frame_of(v) if isinstance(v, list) else v for k, v in scenarios.items()}
    per = [cost_tables(costs, name) for name, costs in scenarios.items()]
    tables = {k: pl.concat([t[k] for t in per], how="vertical") for k in per[0]}
    names = list(scenarios)
    if len(names) == 1:
        tables["claims"] = claim_table(scenarios[names[0]])
        return tables
    base = scenarios[names[0]]
    b = base.figures.select(pl.all().name.suffix("_b")).rename({"claim_id_b": "claim_id"})
    frames, counts = [], []
    for name in names[1:]:
        c = scenarios[name].figures.join(b, on="claim_id", how="left", maintain_order="left").join(
            _same_lines(base, scenarios[name]), on="claim_id", how="left", maintain_order="left")
        c = c.with_columns(_change().alias("change"))
        frames.append(c.select(
            pl.lit(name).alias("scenario"), "claim_id", "tax", pl.col("size_b").alias("firm_size"),
            pl.when(pl.col("decided")).then(pl.lit("decided")).otherwise(pl.lit("invalid")).alias("status"),
            pl.col("eligible_b").alias("eligible_baseline"), "eligible",
            _text(pl.col("credit_b")).alias("credit_baseline"), _text(pl.col("credit")).alias("credit"),
            _text(pl.col("credit") - pl.col("credit_b")).alias("credit_difference"),
            _text(pl.col("cost_b")).alias("cost_baseline"), _text(pl.col("cost")).alias("cost"),
            _text(pl.col("cost") - pl.col("cost_b")).alias("cost_difference"),
            _text(pl.col("carried_forward_b")).alias("carried_forward_baseline"), _text(pl.col("carried_forward")).alias("carried_forward"),
            pl.col("new_positions_b").alias("new_positions_baseline"), "new_positions", "change",
        ))
        tally = dict(c.group_by("change").len().iter_rows())
        counts.append({"scenario": name, "claims": c.height, **{k: tally.get(k, 0) for k in CHANGES}})
    rows = pl.concat(frames)
    tables["claims"] = rows if rows.height else pl.DataFrame()
    tables["changes"] = pl.DataFrame(counts)
    return tables


def _same_lines(base: Costs, other: Costs) -> pl.DataFrame:
    """claim id -> whether its decided ledger lines are the same in ``other`` as in ``base`` (as
    many, each alike), for the claims whose lines differ (a claim not listed: the same). Lines
    that are the same claims' same periods in both (the usual case: a reform moves amounts, not
    periods) are compared row by row; others are matched by claim and period first."""
    fields = [k for k in LINE_COLUMNS if k not in ("claim_id", "n")]
    keys = ["claim_id", "n"]
    if base.lines.height == other.lines.height and base.lines.select(keys).equals(other.lines.select(keys)):
        both = base.lines.hstack(other.lines.select(pl.col(fields).name.suffix("_o")))
    else:
        both = base.lines.join(other.lines, on=keys, how="full", coalesce=True, suffix="_o")
    alike = pl.all_horizontal(*(pl.col(k).eq_missing(pl.col(f"{k}_o")) for k in fields))
    return both.filter(~alike).select(pl.col("claim_id").unique(maintain_order=True), pl.lit(False).alias("_same_lines"))


def _change() -> pl.Expr:
    """How a claim fares under a reform (``CHANGES``): eligibility first, then its credit (C2),
    then its cost; ``timing``: the same credit and cost, applied or carried otherwise."""
    d = pl.when(pl.col("credit") != pl.col("credit_b")).then(pl.col("credit") - pl.col("credit_b")).otherwise(pl.col("cost") - pl.col("cost_b"))
    same = (pl.col("credit") == pl.col("credit_b")) & pl.col("_same_lines").fill_null(True) & (pl.col("carried_forward") == pl.col("carried_forward_b"))
    return (pl.when(pl.col("eligible") != pl.col("eligible_b")).then(pl.when(pl.col("eligible")).then(pl.lit("become_eligible")).otherwise(pl.lit("become_ineligible")))
            .when(same).then(pl.lit("same")).when(d > 0).then(pl.lit("gain")).when(d < 0).then(pl.lit("lose")).otherwise(pl.lit("timing")))
