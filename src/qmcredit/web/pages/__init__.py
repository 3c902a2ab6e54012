"""The claims office's pages (issue 5): server-rendered HTML for people, on the service's own
functions (access control, workflow, evaluate and store). Mounted by ``service.app.create_app``."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse

from . import accounts, amend, audit, claim, cost, documents, figure, ledger, lists, queue, tokens, upload, whatif
from .render import HERE

router = APIRouter(include_in_schema=False)
for _module in (accounts, lists, upload, whatif, queue, figure, amend, documents, ledger, tokens, audit, cost, claim):
    router.include_router(_module.router)


@router.get("/static/pages.css")
def stylesheet():
    return FileResponse(HERE / "static" / "pages.css", media_type="text/css", headers={"cache-control": "max-age=3600"})


__all__ = ["router"]
