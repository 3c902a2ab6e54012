"""The FastAPI application: routers under ``/api/v1``, OpenAPI at ``/openapi.json``, the upload
limit, signed sessions and the error handlers."""

from __future__ import annotations

import gc

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy import text
from starlette.middleware.sessions import SessionMiddleware

import qmcredit
from qmcredit.web import pages

from . import errors
from .api import accounts, audit, claims, evidence, taxpayers
from .api.schemas import claim_document_schemas
from .db import Database, migrate
from .limits import BodyLimit, BodyTooLarge, SecurityHeaders, StrictJsonBodies
from .settings import Settings

API = "/api/v1"


def create_app(settings: Settings | None = None, db: Database | None = None) -> FastAPI:
    """The claims office. Migrates the database to the newest schema on start."""
    settings = settings or Settings.from_env()
    db = db or Database(settings.database_url)
    migrate(db.engine)
    app = FastAPI(title="qmcredit claims office", version=qmcredit.__version__,
                  description="Claims for the New Jersey credit for new jobs in a qualified municipality "
                              "(N.J.S.A. 52:27BBB-55, Form 313): filing, determination, review, ledger, evidence, audit.")
    app.state.db = db
    app.state.settings = settings
    for module in (claims, evidence, taxpayers, accounts, audit):
        app.include_router(module.router, prefix=API)
    errors.install(app)

    app.include_router(pages.router)

    @app.get("/", include_in_schema=False)
    def index(request: Request):
        """People's browsers go to the pages; programs get the service's addresses as JSON."""
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse("/claims", status_code=303)
        return {"service": app.title, "api": API, "openapi": "/openapi.json", "docs": "/docs"}

    @app.get(f"{API}/health", tags=["service"], response_model=dict[str, str])
    def health():
        """Up, and the database answers (no sign-in needed)."""
        with db.read() as session:
            session.execute(text("SELECT 1"))
        return {"status": "ok", "version": qmcredit.__version__}

    @app.exception_handler(BodyTooLarge)
    async def _too_large(_req, _exc):
        refusal = errors.ApiError(413, f"request body larger than the upload limit of {settings.upload_limit} bytes",
                                  [("body", f"more than {settings.upload_limit} bytes")])
        return JSONResponse(refusal.body(), status_code=413, headers={"connection": "close"})

    app.add_middleware(SessionMiddleware, secret_key=settings.session_secret, session_cookie="qmcredit_session",
                       same_site="strict", max_age=8 * 3600, https_only=settings.secure_cookies)
    app.add_middleware(StrictJsonBodies)
    app.add_middleware(BodyLimit, limit=settings.upload_limit)
    app.add_middleware(SecurityHeaders, tls=settings.secure_cookies)

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            schema.setdefault("components", {}).setdefault("schemas", {}).update(claim_document_schemas())
            schema["components"]["securitySchemes"] = {
                "token": {"type": "http", "scheme": "bearer", "description": "an API token (POST /api/v1/tokens)"},
                "session": {"type": "apiKey", "in": "cookie", "name": "qmcredit_session"},
            }
            schema["security"] = [{"token": []}, {"session": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi
    return app


def app_from_env() -> FastAPI:
    """The application as configured by the environment (for ``uvicorn --factory`` and worker processes)."""
    app = create_app(Settings.from_env())
    collector_past_start_up()
    return app


def collector_past_start_up() -> None:
    """Every object alive once the office has started (the modules, the app, the rules'
    parameters) moved out of reach of Python's cyclic collector (``gc.freeze``), what start-up
    left as garbage collected first: each full collection scanned them all again (~0.13 s, twice
    in 400 filings). Reference counting frees as ever."""
    gc.collect()
    gc.freeze()
