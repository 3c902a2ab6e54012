"""Walk one figure of a determination back to its inputs (rule B1): the figure, its rule and
citation, the parameters and inputs, the figures it depends on, and at the bottom the
employee-months that produced it."""

from __future__ import annotations

from .determination import Determination

PERIOD_OF_FIGURE = {"average_positions.base": "base", "average_positions.year_one": "year_one", "average_positions.year_two": "year_two"}


def figure_names(det: Determination) -> list[str]:
    return [e["figure"] for e in det.explanation] + ["employee_months"]


def walk(det: Determination, figure: str, max_rows: int = 40) -> list[str]:
    """Lines of text: the figure and, indented, everything it depends on."""
    by_name = {e["figure"]: e for e in det.explanation}
    if figure not in by_name and figure != "employee_months":
        raise KeyError(figure)
    lines: list[str] = []
    seen: set[str] = set()
    rows = det.employee_month_rows() if det.employee_months is not None else []

    def emit(name: str, depth: int, period: str | None) -> None:
        pad = "  " * depth
        if name == "employee_months":
            chosen = [r for r in rows if (period is None or r["period"] == period) and r["status"] in ("full_time", "part_time_equivalent")]
            lines.append(f"{pad}employee_months [B1]: {len(chosen)} counted employee-months" + (f" in {period}" if period else ""))
            for r in chosen[:max_rows]:
                eq = f" = {r['equivalents']} equivalents" if "equivalents" in r else ""
                lines.append(f"{pad}  {r['employee_id']} {r['month']}: {r['hours']} h, {r['status']} ({r['rule']}){eq}  <- {r['source']}")
            if len(chosen) > max_rows:
                lines.append(f"{pad}  ... {len(chosen) - max_rows} more (use --rows)")
            return
        e = by_name[name]
        lines.append(f"{pad}{name} = {e['value']}   [{e['rule']}, {e['cite']}]")
        lines.append(f"{pad}  reading: {e['reading']}")
        for k, v in e["parameters"].items():
            lines.append(f"{pad}  parameter {k}: {v.get('value') if isinstance(v, dict) else v}" + (f" ({v.get('cite')})" if isinstance(v, dict) and v.get("cite") else ""))
        for k, v in e["inputs"].items():
            if k == "months":
                for m in v:
                    lines.append(f"{pad}  month {m['month']}: full-time {m['full_time']}, equivalents {m['equivalents']}" + ("" if m["known"] else " (unknown)"))
            elif k != "checks":
                lines.append(f"{pad}  input {k}: {v}")
            else:
                for c in v:
                    lines.append(f"{pad}  {c['rule']} {'pass' if c['passed'] else 'FAIL'}: {c['message']}")
        if name in seen:
            return
        seen.add(name)
        for dep in e["depends_on"]:
            emit(dep, depth + 1, PERIOD_OF_FIGURE.get(name, period))

    emit(figure, 0, PERIOD_OF_FIGURE.get(figure))
    return lines
