"""The analysis as one self-contained HTML page: its tables and two inline SVG charts (cost by
fiscal year, baseline beside each reform; cost and claims by firm size). No script, no style
sheet, font or image from anywhere else: the file reads the same offline."""

from __future__ import annotations

import os
from decimal import Decimal
from fractions import Fraction
from html import escape
from pathlib import Path

import polars as pl

from .cost import SIZE_BANDS

COLOURS = ("#1f4e79", "#c55a11", "#548235", "#7030a0", "#bf9000", "#2e75b6")
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:2rem auto;max-width:1100px;color:#1a1a1a;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem}th,td{border:1px solid #ccc;padding:.25rem .5rem}
th{background:#f0f3f7;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.wrap{overflow-x:auto}.note{color:#555;font-size:.88rem}figure{margin:1rem 0}figcaption{font-weight:600;margin-bottom:.3rem}
"""


def _money_short(x: Fraction) -> str:
    """An axis label: $1.2M, $350k, $900."""
    for size, unit in ((10**6, "M"), (10**3, "k")):
        if abs(x) >= size:
            v = Decimal(x.numerator) / Decimal(x.denominator) / size
            return f"${v.quantize(Decimal('0.1')).normalize():f}{unit}"
    return f"${int(x)}"


def _nice_top(top: Fraction) -> Fraction:
    """The least of 1, 2, 2.5, 5 x 10^k that is at least ``top`` (an axis's end)."""
    if top <= 0:
        return Fraction(1)
    step = Fraction(1)
    while step * 10 <= top:
        step *= 10
    while step > top:
        step /= 10
    for m in (1, 2, Fraction(5, 2), 5, 10):
        if step * m >= top:
            return step * m
    return step * 10


def _px(x: Fraction) -> str:
    return f"{float(x):.1f}"  # a pixel coordinate, not money: drawing only


def bar_chart(title: str, categories: list[str], series: list[tuple[str, list[Decimal]]], money: bool = True) -> str:
    """Grouped bars: one group per category, one bar per series (scenario), with a legend."""
    width, height, left, right, top, bottom = 960, 360, 80, 20, 40, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [Fraction(v) for _, vs in series for v in vs]
    y_top = _nice_top(max(values, default=Fraction(0)))
    label = _money_short if money else (lambda v: str(int(v)))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" width="100%">',
           f'<rect width="{width}" height="{height}" fill="#fff"/>']
    for k in range(5):  # grid and axis labels
        v = y_top * k / 4
        y = top + plot_h - plot_h * Fraction(k, 4)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{_px(y)}" y2="{_px(y)}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{_px(y + 4)}" font-size="11" text-anchor="end" fill="#333">{escape(label(v))}</text>')
    group_w = Fraction(plot_w, max(1, len(categories)))
    bar_w = group_w * Fraction(4, 5) / max(1, len(series))
    for i, cat in enumerate(categories):
        x0 = left + group_w * i + group_w / 10
        for s, (name, vs) in enumerate(series):
            h = plot_h * Fraction(vs[i]) / y_top
            x, y = x0 + bar_w * s, top + plot_h - h
            out.append(f'<rect x="{_px(x)}" y="{_px(y)}" width="{_px(bar_w)}" height="{_px(h)}" fill="{COLOURS[s % len(COLOURS)]}">'
                       f'<title>{escape(name)}, {escape(cat)}: {escape(str(vs[i]))}</title></rect>')
        every = max(1, len(categories) // 16)  # at most ~16 labels under the axis
        if i % every == 0:
            out.append(f'<text x="{_px(left + group_w * i + group_w / 2)}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle" fill="#333">{escape(cat)}</text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#333"/>')
    for s, (name, _) in enumerate(series):  # legend
        x = left + 170 * s
        out.append(f'<rect x="{x}" y="{height - 22}" width="12" height="12" fill="{COLOURS[s % len(COLOURS)]}"/>')
        out.append(f'<text x="{x + 18}" y="{height - 12}" font-size="12" fill="#222">{escape(name)}</text>')
    out.append(f'<text x="{left}" y="22" font-size="14" font-weight="600" fill="#111">{escape(title)}</text></svg>')
    return "".join(out)


def _table(df: pl.DataFrame, limit: int | None = None) -> str:
    rows = df.rows() if limit is None else df.head(limit).rows()
    head = "".join(f"<th>{escape(c)}</th>" for c in df.columns)
    body = []
    for row in rows:
        cells = []
        for v in row:
            text = "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
            numeric = isinstance(v, (int, Decimal)) or (isinstance(v, str) and v.replace(".", "", 1).replace("-", "", 1).isdigit())
            cells.append(f'<td class="n">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="note">First {limit} of {df.height} rows; every row is in the Parquet, CSV and Excel files.</p>' if limit and df.height > limit else ""
    return f"<div class=\"wrap\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{more}"


def side_by_side(totals: pl.DataFrame) -> pl.DataFrame:
    """The totals table turned: one row per figure, one column per scenario."""
    names = totals.get_column("scenario").to_list()
    figures = [c for c in totals.columns if c != "scenario"]
    return pl.DataFrame({"figure": figures, **{n: [None if v is None else str(v) for v in totals.row(i)[1:]] for i, n in enumerate(names)}})


def by_year(fy: pl.DataFrame, names: list[str], years: list[int]) -> pl.DataFrame:
    """Cost by fiscal year, one column per scenario, and each reform's difference from the baseline."""
    cost = {(s, y): Decimal(c) for s, y, c in fy.select("scenario", "fiscal_year", "cost").iter_rows()}
    zero = Decimal("0.00")
    cols = {"fiscal_year": years, **{n: [str(cost.get((n, y), zero)) for y in years] for n in names}}
    for n in names[1:]:
        cols[f"{n} - {names[0]}"] = [str(cost.get((n, y), zero) - cost.get((names[0], y), zero)) for y in years]
    return pl.DataFrame(cols)


def series(df: pl.DataFrame, key: str, categories: list, scenarios: list[str], column: str) -> list[tuple[str, list[Decimal]]]:
    """A chart's series: each scenario's ``column`` for each of ``categories`` (of ``key``), 0 where absent."""
    found = {(s, k): Decimal(v) for s, k, v in df.select("scenario", key, column).iter_rows()}
    return [(s, [found.get((s, c), Decimal(0)) for c in categories]) for s in scenarios]


def render(tables: dict[str, pl.DataFrame], scenarios: list[dict], title: str = "Cost of the credit, N.J.S.A. 52:27BBB-55") -> str:
    """The report page. ``scenarios``: each scenario's ``name``, ``description`` and ``changes``
    (name, what, from, source, cite), the baseline first."""
    names = [s["name"] for s in scenarios]
    fy = tables["by_fiscal_year"]
    years = sorted(set(fy.get_column("fiscal_year").to_list()))
    sizes = tables["by_firm_size"]
    bands = [b for b in SIZE_BANDS if b in set(sizes.get_column("firm_size").to_list())]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             '<p class="note">Cost = credit applied against tax (L4) + credit refunded (R1), in the State fiscal year (July 1 - June 30, '
             "named by the June it ends) in which the return's privilege period ends. Forfeited credit (L5) costs nothing; credit "
             "carried out of the last period given is a cost still to come. Firm size: base-period average positions rounded up to "
             "whole employees. Readings: docs/analysis.md.</p>",
             "<h2>Scenarios</h2>"]
    for s in scenarios:
        parts.append(f"<p><b>{escape(s['name'])}</b>: {escape(s.get('description') or '')}</p>")
        if s.get("changes"):
            parts.append(_table(pl.DataFrame(s["changes"], schema=["name", "change", "from", "source", "cite"], orient="row")))
    parts += ["<h2>Totals</h2>", _table(side_by_side(tables["totals"])),
              "<h2>Cost by fiscal year</h2>",
              f"<figure><figcaption>Cost by State fiscal year ({' vs '.join(escape(n) for n in names)})</figcaption>"
              f"{bar_chart('Cost (applied + refunded) by fiscal year', [f'FY{y}' for y in years], series(fy, 'fiscal_year', years, names, 'cost'))}</figure>",
              '<p class="note">Cost (applied + refunded) by fiscal year; every column by scenario is in by_fiscal_year.csv.</p>',
              _table(by_year(fy, names, years)),
              "<h2>By firm size</h2>",
              f"<figure><figcaption>Cost by firm size (employees in the base period)</figcaption>"
              f"{bar_chart('Cost by firm size', bands, series(sizes, 'firm_size', bands, names, 'cost'))}</figure>",
              f"<figure><figcaption>Claims by firm size</figcaption>"
              f"{bar_chart('Claims by firm size', bands, series(sizes, 'firm_size', bands, names, 'claims'), money=False)}</figure>",
              _table(sizes),
              "<h2>By tax</h2>", _table(tables["by_tax"]),
              "<h2>By credit year</h2>", _table(tables["by_credit_year"])]
    if "changes" in tables:
        parts += ["<h2>Claims that gain, lose or change eligibility</h2>", _table(tables["changes"]),
                  "<h2>Claims whose figures differ</h2>",
                  _table(tables["claims"].filter(pl.col("change") != "same") if "change" in tables["claims"].columns else tables["claims"], limit=200)]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(tables: dict[str, pl.DataFrame], scenarios: list[dict], path: Path) -> Path:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render(tables, scenarios), encoding="utf-8")
    os.replace(tmp, path)
    return path
