"""The monthly chart and the ledger chart as self-contained inline SVG (issue 5).

No script, no stylesheet and no font from the network: each SVG is one string to put in a page.
Accessible: ``role="img"`` named by its ``<title>`` and described by its ``<desc>`` (which states
every average, new-positions count and ledger figure in words); each bar carries a ``<title>``
read out on hover and by screen readers; colours meet WCAG contrast against white (see
``layout``). The table fallbacks are ``monthly_table`` and ``ledger_table``.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from .figures import ledger_table, monthly_table
from .layout import Chart, Group, Line, Rect, Text, ledger_layout, monthly_layout

__all__ = ["ledger_chart_svg", "ledger_table", "monthly_chart_svg", "monthly_table"]

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _shape(s) -> str:
    if isinstance(s, Group):
        inner = "".join(_shape(c) for c in s.children)
        return f'<g class="{s.kind}"><title>{escape(s.title)}</title>{inner}</g>'
    if isinstance(s, Rect):
        attrs = f'x="{_num(s.x)}" y="{_num(s.y)}" width="{_num(s.w)}" height="{_num(max(s.h, 0))}" fill="{s.fill or "none"}"'
        if s.stroke:
            attrs += f' stroke="{s.stroke}"'
        if s.dash:
            attrs += f' stroke-dasharray="{s.dash}"'
        return f"<rect {attrs}/>"
    if isinstance(s, Line):
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        return (f'<line x1="{_num(s.x1)}" y1="{_num(s.y1)}" x2="{_num(s.x2)}" y2="{_num(s.y2)}" '
                f'stroke="{s.stroke}" stroke-width="{_num(s.width)}"{dash}/>')
    if isinstance(s, Text):
        weight = ' font-weight="bold"' if s.bold else ""
        return (f'<text x="{_num(s.x)}" y="{_num(s.y)}" font-size="{_num(s.size)}" text-anchor="{s.anchor}" '
                f'fill="{s.fill}"{weight}>{escape(s.text)}</text>')
    raise TypeError(f"unknown shape {s!r}")


def render_svg(chart: Chart, id_prefix: str) -> str:
    """One chart as an SVG element; ``id_prefix`` keeps ids unique when a page holds several."""
    t, d = f"{id_prefix}-title", f"{id_prefix}-desc"
    body = "".join(_shape(s) for s in chart.shapes)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {_num(chart.width)} {_num(chart.height)}" '
        f'width="{_num(chart.width)}" height="{_num(chart.height)}" aria-labelledby="{t} {d}" '
        f'font-family={quoteattr(FONT)}>'
        f'<title id="{t}">{escape(chart.title)}</title><desc id="{d}">{escape(chart.desc)}</desc>'
        f'<rect width="100%" height="100%" fill="#ffffff"/>{body}</svg>'
    )


def monthly_chart_svg(det, id_prefix: str = "qmc-monthly") -> str:
    """The monthly chart of issue 5 for a determination (dict or ``Determination``)."""
    return render_svg(monthly_layout(det), id_prefix)


def ledger_chart_svg(det, id_prefix: str = "qmc-ledger") -> str:
    """The ledger chart of issue 5 for a determination (dict or ``Determination``)."""
    return render_svg(ledger_layout(det), id_prefix)
