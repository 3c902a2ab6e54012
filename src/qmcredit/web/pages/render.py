"""Templates: one Jinja2 environment (autoescaped), the page response, and the refusal page that
turns a service refusal (``ApiError``, ``ClaimError``) into HTML naming each problem's field."""

from __future__ import annotations

from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from qmcredit import ClaimError

from ...law.statute import words as statute_words
from ...service.auth import Principal
from ...service.errors import ApiError
from .guard import csrf_token
from .labels import label, period_words

HERE = Path(__file__).parent
env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]),
                  trim_blocks=True, lstrip_blocks=True)
env.filters["svg"] = Markup  # the charts' SVG is built by qmcredit.web.charts, every text in it escaped there

STATE_LABELS = {"draft": "Draft", "submitted": "Submitted", "under_review": "Under review", "approved": "Approved",
                "adjusted": "Adjusted", "denied": "Denied", "refund_certified": "Refund certified"}
env.globals["state_label"] = lambda s: STATE_LABELS.get(s, s)
env.globals["statute_words"] = statute_words
env.globals["label"] = label  # the one table of figure names (labels.py), for every template
env.globals["period_words"] = period_words


def page(request: Request, template: str, who: Principal | None, status: int = 200, **context) -> HTMLResponse:
    html = env.get_template(template).render(request=request, who=who, csrf=csrf_token(request), **context)
    return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})


def problems_of(exc: ApiError | ClaimError) -> tuple[str, list[dict]]:
    """The one-line error and the problems (location, message) of a refusal."""
    if isinstance(exc, ApiError):
        return exc.error, [{"location": loc, "message": msg} for loc, msg in exc.problems]
    body = exc.to_dict()
    return body.get("error", "invalid claim"), body["problems"]


def refusal(request: Request, who: Principal | None, exc: ApiError | ClaimError, back: str | None = None) -> HTMLResponse:
    error, problems = problems_of(exc)
    status = exc.status if isinstance(exc, ApiError) else 422
    return page(request, "refused.html", who, status=status, error=error, problems=problems, back=back)
