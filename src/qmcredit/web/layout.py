"""The two charts as plain shapes, laid out once and drawn twice: as SVG for pages (``charts``) and
with reportlab graphics for the worksheet PDF (``pdf``), so both show the same picture.

Coordinates are SVG's: origin top left, y downwards. Labels are at least ``LABEL`` units high, so
that the worksheet's charts, drawn at about 0.55 of these units across a letter page, print at 7 pt
or more; no label sits on a bar. Figures in labels and titles are the
determination's strings; bar heights and tick positions are geometry, so floats are fine there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .figures import LEDGER_FIELDS, LEDGER_LABELS, PERIOD_LABELS, as_dict, monthly_table, period_label, shown

INK = "#1a1a1a"          # text: 17:1 on white
MUTED = "#4d4d4d"        # secondary text and axes: 8.5:1 on white
GRID = "#d0d0d0"
FULL_TIME = "#1f4e79"    # 9:1 on white
EQUIVALENT = "#b34d00"   # 5.2:1 on white; told apart from full-time by lightness too
BANDS = {"base": "#efefef", "year_one": "#e3eefa", "year_two": "#e6f4e4"}
LEDGER_COLOURS = {
    "room": "#5c6670", "applied": "#1f4e79", "refund": "#1b7a3d",
    "forfeited": "#b3261e", "carried_forward": "#b34d00",
}
MONTHS = ("J", "F", "M", "A", "M", "J", "J", "A", "S", "O", "N", "D")  # initials: 36 of them fit at LABEL size
LABEL = 13.0  # the smallest text, in chart units: 7.1 pt on the worksheet (960 units across 7.3 in)


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None
    stroke: str | None = None
    dash: str | None = None


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = INK
    width: float = 1.0
    dash: str | None = None


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: float = 11
    anchor: str = "start"  # start | middle | end
    fill: str = INK
    bold: bool = False


@dataclass(frozen=True)
class Group:
    """Shapes that read as one mark (a bar): ``title`` is its hover text and accessible name."""

    title: str
    kind: str
    children: tuple = ()


@dataclass(frozen=True)
class Chart:
    width: float
    height: float
    title: str
    desc: str
    shapes: list = field(default_factory=list)


def nice_step(top: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` ticks up to ``top``."""
    raw = max(top, 1e-9) / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def tick_text(v: float, money: bool) -> str:
    if money:
        return f"{v:,.0f}"
    return f"{v:g}"


def _axis(shapes: list, left: float, right: float, top: float, bottom: float, vmax: float, money: bool):
    """Horizontal grid lines and y tick labels; returns the value-to-y function."""
    step = nice_step(vmax)
    ymax = step * math.ceil(vmax / step) if vmax > 0 else step
    scale = (bottom - top) / ymax

    def y(v: float) -> float:
        return bottom - v * scale

    n = round(ymax / step)
    for k in range(n + 1):
        v = k * step
        shapes.append(Line(left, y(v), right, y(v), GRID, 0.8))
        shapes.append(Text(left - 6, y(v) + 4, tick_text(v, money), LABEL, "end", MUTED))
    return y


def monthly_layout(det) -> Chart:
    """The 36 months of subsection e.: stacked full-time positions (P2) and full-time equivalents
    (P4), the base period and credit years shaded, each period's average (P5) drawn across it, and
    the new positions (C1) read off between the base average and each credit year's average."""
    d = as_dict(det)
    rows = monthly_table(d)
    months = d.get("monthly", [])
    avgs = d["average_positions"]
    new = d["new_positions"]
    W, H, left, right, top, bottom = 960.0, 500.0, 64.0, 936.0, 104.0, 390.0
    slot = (right - left) / max(len(months), 1)
    values = [float(m["positions"]) for m in months if m["known"]] + [float(v) for v in avgs.values() if v is not None]
    shapes: list = []
    shapes.append(Text(left, 20, "Positions per month: full-time positions and full-time equivalents", 16, bold=True))
    for k, name in enumerate(("base", "year_one", "year_two")):
        x0 = left + 12 * k * slot
        shapes.append(Rect(x0, top, 12 * slot, bottom - top, BANDS[name]))
        w = d["windows"][name]
        shapes.append(Text(x0 + 6 * slot, top - 62, PERIOD_LABELS[name], 14, "middle", bold=True))
        shapes.append(Text(x0 + 6 * slot, top - 46, f"{w['start']} to {w['end']}", LABEL, "middle", MUTED))
        shapes.append(Text(x0 + 6 * slot, top - 30, f"average {shown(avgs[name])}", LABEL, "middle"))
    y = _axis(shapes, left, right, top, bottom, max(values, default=0.0), money=False)
    shapes.append(Text(left - 6, top - 8, "positions", LABEL, "end", MUTED))
    bar = slot * 0.68
    for i, (m, row) in enumerate(zip(months, rows)):
        x = left + i * slot + (slot - bar) / 2
        label = f"{row['month']} ({row['period_label'].lower()})"
        if not m["known"]:
            title = f"{label}: payroll not known yet"
            shapes.append(Group(title, "bar", (Rect(x, top + 4, bar, bottom - top - 4, None, MUTED, "3 3"),
                                               Text(x + bar / 2, bottom - 8, "?", LABEL, "middle", MUTED))))  # inside the outline, not on a bar
        else:
            ft, eq = float(m["full_time"]), float(m["equivalents"])
            title = (f"{label}: {row['full_time']} full-time, {row['equivalents']} equivalents "
                     f"({row['equivalent_hours']} part-time hours), {row['positions']} positions")
            parts = (Rect(x, y(ft), bar, y(0) - y(ft), FULL_TIME), Rect(x, y(ft + eq), bar, y(ft) - y(ft + eq), EQUIVALENT))
            shapes.append(Group(title, "bar", parts))
        mm = int(row["month"][5:7])
        cx = left + (i + 0.5) * slot
        shapes.append(Text(cx, bottom + 15, MONTHS[mm - 1], LABEL, "middle", MUTED))
        if mm == 1 or i == 0:
            shapes.append(Text(cx, bottom + 30, row["month"][:4], LABEL, "middle"))
    shapes.append(Line(left, bottom, right, bottom, INK, 1.2))
    base = avgs.get("base")
    for k, name in enumerate(("base", "year_one", "year_two")):
        x0, x1 = left + 12 * k * slot, left + 12 * (k + 1) * slot
        if avgs.get(name) is None:
            continue
        ya = y(float(avgs[name]))
        shapes.append(Line(x0, ya, x1, ya, INK, 2.2, "7 4"))
        if name == "base" or base is None:
            continue
        yb = y(float(base))
        shapes.append(Line(x0, yb, x1, yb, MUTED, 1.2, "2 3"))
        ax = x0 + 3 * slot  # on the gap between two bars
        shapes.append(Group(
            f"{PERIOD_LABELS[name]}: {shown(new[name])} new full-time positions = average {shown(avgs[name])} "
            f"minus base average {shown(base)} (at least zero)", "new_positions",
            (Line(ax, yb, ax, ya, INK, 1.6), Line(ax - 5, yb, ax + 5, yb, INK, 1.6), Line(ax - 5, ya, ax + 5, ya, INK, 1.6),
             Text(x0 + 6 * slot, top - 14, f"new: {shown(new[name])}", LABEL, "middle", bold=True))))  # above the bars
    legend = ((FULL_TIME, "full-time positions", None), (EQUIVALENT, "full-time equivalents (part-time hours / 140)", None),
              (None, "period average", "7 4"), (None, "base average, for comparison", "2 3"))
    for k, (colour, text, dash) in enumerate(legend):
        lx, ly = left + 440 * (k % 2), bottom + 62 + 20 * (k // 2)  # two rows of two
        if colour:
            shapes.append(Rect(lx, ly - 11, 12, 12, colour))
        else:
            shapes.append(Line(lx, ly - 5, lx + 22, ly - 5, INK if dash == "7 4" else MUTED, 2, dash))
        shapes.append(Text(lx + (16 if colour else 26), ly, text, LABEL))
    desc = monthly_desc(d)
    return Chart(W, H, "Monthly positions: base period, credit year one and credit year two", desc, shapes)


def monthly_desc(d: dict) -> str:
    avgs, new, w = d["average_positions"], d["new_positions"], d["windows"]
    return (
        f"Bars for the 36 months from {w['base']['start'][:7]} to {w['year_two']['end'][:7]}: full-time positions "
        f"with full-time equivalents stacked on top. Base period average {shown(avgs['base'])}; credit year one "
        f"average {shown(avgs['year_one'])}, {shown(new['year_one'])} new positions; credit year two average "
        f"{shown(avgs['year_two'])}, {shown(new['year_two'])} new positions."
    )


def ledger_layout(det) -> Chart:
    """Per privilege period (L1-L5, R1): the room under the limits, what was applied, refunded,
    forfeited and carried forward, as grouped bars."""
    d = as_dict(det)
    periods = d["periods"]
    W, H, left, right, top, bottom = 960.0, 440.0, 84.0, 936.0, 56.0, 320.0
    shapes: list = [Text(left, 20, "Credit ledger by privilege period", 16, bold=True)]
    values = [float(p[k]) for p in periods for k in LEDGER_FIELDS if p.get(k) is not None]
    y = _axis(shapes, left, right, top, bottom, max(values, default=0.0), money=True)
    shapes.append(Text(left - 6, top - 14, "dollars", LABEL, "end", MUTED))
    slot = (right - left) / max(len(periods), 1)
    bar = slot * 0.8 / len(LEDGER_FIELDS)
    for i, p in enumerate(periods):
        x0 = left + i * slot + slot * 0.1
        for j, k in enumerate(LEDGER_FIELDS):
            v = p.get(k)
            title = f"{period_label(p)}: {LEDGER_LABELS[k].lower()} {shown(v)}"
            if v is None:
                shapes.append(Group(title, "ledger_bar", (Rect(x0 + j * bar, top, bar, bottom - top, None, MUTED, "3 3"),)))
                continue
            h = y(0) - y(float(v))
            shapes.append(Group(title, "ledger_bar", (Rect(x0 + j * bar, y(float(v)), bar, h, LEDGER_COLOURS[k]),)))
        cx = left + (i + 0.5) * slot
        shapes.append(Text(cx, bottom + 16, p["end"], LABEL, "middle", MUTED))  # the period's last day
        if p.get("allowed") not in (None, "0.00"):
            shapes.append(Text(cx, bottom + 32, "allowed", LABEL, "middle"))
            shapes.append(Text(cx, bottom + 47, p["allowed"], LABEL, "middle"))
    shapes.append(Line(left, bottom, right, bottom, INK, 1.2))
    lx = left
    for k in LEDGER_FIELDS:
        shapes.append(Rect(lx, bottom + 72, 12, 12, LEDGER_COLOURS[k]))
        shapes.append(Text(lx + 16, bottom + 83, LEDGER_LABELS[k], LABEL))
        lx += 40 + 8 * len(LEDGER_LABELS[k])
    desc = "; ".join(
        f"period {period_label(p)}: " + ", ".join(f"{LEDGER_LABELS[k].lower()} {shown(p.get(k))}" for k in ("allowed", *LEDGER_FIELDS))
        for p in periods
    )
    return Chart(W, H, "Credit ledger: room, applied, refund, forfeited and carried forward per privilege period", desc + ".", shapes)
