"""Every failure a client can cause becomes a 4xx answer naming the field; nothing else leaks.

The body is always ``{"error": "...", "problems": [{"location": "...", "message": "..."}]}``, the
shape of ``qmcredit.ClaimError.to_dict()``. An unexpected fault answers 500 with a reference that
the server log carries along with the traceback; the traceback itself never reaches the client.
"""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException

from qmcredit import ClaimError

log = logging.getLogger("qmcredit.service")


class ApiError(Exception):
    """A refusal with its HTTP status, a one-line error and the problems, each naming a field."""

    def __init__(self, status: int, error: str, problems: list[tuple[str, str]] | None = None):
        super().__init__(error)
        self.status = status
        self.error = error
        self.problems = problems or []

    def body(self) -> dict:
        return {"error": self.error, "problems": [{"location": loc, "message": msg} for loc, msg in self.problems]}


def not_found(what: str, ident) -> ApiError:
    return ApiError(404, f"no {what} {ident} that you may see", [(what, f"{what} {ident} not found")])


def forbidden(message: str, location: str = "role") -> ApiError:
    return ApiError(403, message, [(location, message)])


def _location(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "request"


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError):
        return JSONResponse(exc.body(), status_code=exc.status)

    @app.exception_handler(ClaimError)
    async def _claim_error(_req: Request, exc: ClaimError):
        body = exc.to_dict()
        return JSONResponse({"error": body.get("error", "invalid claim"), "problems": body["problems"]}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _validation(_req: Request, exc: RequestValidationError):
        problems = [{"location": _location(tuple(e.get("loc", ()))), "message": str(e.get("msg", "invalid"))} for e in exc.errors()]
        return JSONResponse({"error": "invalid request", "problems": problems}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, exc: StarletteHTTPException):
        detail = exc.detail if isinstance(exc.detail, str) else "request refused"
        return JSONResponse({"error": detail, "problems": [{"location": "request", "message": detail}]},
                            status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(IntegrityError)
    async def _integrity(_req: Request, exc: IntegrityError):
        log.warning("refused by a database constraint: %s", str(exc.orig).splitlines()[0] if exc.orig else exc)
        return JSONResponse({"error": "conflicts with records stored meanwhile; read them again and retry",
                             "problems": [{"location": "request", "message": "refused by a database constraint"}]},
                            status_code=409)

    @app.exception_handler(Exception)
    async def _fault(req: Request, exc: Exception):
        ref = uuid.uuid4().hex[:12]
        log.exception("fault %s on %s %s", ref, req.method, req.url.path)
        return JSONResponse({"error": f"internal error (reference {ref})", "problems": []}, status_code=500)
