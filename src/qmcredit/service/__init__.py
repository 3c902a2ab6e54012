"""The claims office (issue 4): an HTTP service that keeps claims, their determinations, the
taxpayer's ledger, the examiner's decisions, evidence and an append-only audit log.

A thin shell around the core: it loads a claim, calls ``qmcredit.decide``, stores and presents.
``create_app(settings)`` builds the FastAPI application; ``cli.serve`` runs it.
"""

from .app import create_app
from .settings import Settings

__all__ = ["create_app", "Settings"]
