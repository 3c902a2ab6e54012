"""Drill-down (B1): each figure of a determination with its explanation, and the employee-months
behind it. Everything is read from the determination's ``explanation`` list; nothing is recomputed."""

from __future__ import annotations

from decimal import Decimal

PERIODS = ("base", "year_one", "year_two")


def explained(det: dict) -> dict[str, dict]:
    """The explanation entries by figure name (``credit.year_one``, ``periods[0].applied``...),
    without the employee-months table."""
    return {e["figure"]: e for e in det.get("explanation") or [] if e.get("figure") != "employee_months"}


def employee_months(det: dict) -> dict:
    for e in det.get("explanation") or []:
        if e.get("figure") == "employee_months":
            return e
    return {"rows": [], "statuses": {}}


def periods_behind(det: dict, figure: str) -> list[str]:
    """The periods (base, year_one, year_two) whose averages a figure rests on, following
    ``depends_on`` down to the ``average_positions`` figures."""
    entries = explained(det)
    seen, todo, found = set(), [figure], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name.startswith("average_positions."):
            found.add(name.split(".", 1)[1])
        todo.extend((entries.get(name) or {}).get("depends_on") or [])
    return [p for p in PERIODS if p in found]


def rows_behind(det: dict, figure: str | None = None, month: str | None = None) -> list[dict]:
    """The employee-months behind a figure (or one month), each down to its payroll row (``source``)."""
    rows = employee_months(det).get("rows") or []
    if month is not None:
        return [r for r in rows if r.get("month") == month]
    wanted = set(periods_behind(det, figure)) if figure else set(PERIODS)
    return [r for r in rows if r.get("period") in wanted]


def shown(value) -> str:
    """A figure's value as the determination wrote it (a window as its dates)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {shown(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(shown(v) for v in value)
    return "—" if value is None else str(value)


def anchor(figure: str) -> str:
    return "fig-" + "".join(c if c.isalnum() else "-" for c in figure)


GROUPS = {"employee": ("employee_id", "Employee"), "month": ("month", "Month"), "status": ("status", "Counted as")}
PER_PAGE = 50


def filtered(rows: list[dict], employee: str = "", month: str = "", status: str = "", period: str = "") -> list[dict]:
    """The rows matching every filter given: the employee id contains ``employee`` (case aside); month,
    status and period are equal."""
    needle = employee.strip().casefold()
    return [r for r in rows if (not needle or needle in str(r.get("employee_id", "")).casefold())
            and (not month or r.get("month") == month) and (not status or r.get("status") == status)
            and (not period or r.get("period") == period)]


def grouped(rows: list[dict], by: str) -> list[dict]:
    """The rows grouped by employee, month or status, in that key's order: each group's key, its
    rows' count and their hours added exactly (hours are the determination's decimal strings)."""
    key = GROUPS[by][0]
    groups: dict[str, dict] = {}
    for r in rows:
        g = groups.setdefault(str(r.get(key, "")), {"key": str(r.get(key, "")), "rows": 0, "hours": Decimal(0), "statuses": set()})
        g["rows"] += 1
        g["hours"] += Decimal(str(r.get("hours") or 0))
        g["statuses"].add(r.get("status"))
    return [{**g, "hours": str(g["hours"]), "statuses": sorted(s for s in g["statuses"] if s)} for _, g in sorted(groups.items())]


def paged(items: list, page: str | int, per: int = PER_PAGE) -> tuple[list, dict]:
    """One page of ``items`` (pages count from 1; a page out of range shows the nearest) and where it is."""
    pages = max(1, -(-len(items) // per))
    try:
        n = min(max(1, int(page)), pages)
    except (TypeError, ValueError):
        n = 1
    first = (n - 1) * per
    return items[first:first + per], {"page": n, "pages": pages, "total": len(items), "first": first + 1 if items else 0,
                                      "last": min(first + per, len(items))}
