"""The claims office (issue 4): an HTTP service that keeps claims, their determinations, the
taxpayer's ledger, the examiner's decisions, evidence and an append-only audit log.

A thin shell around the core: it loads a claim, calls ``qmcredit.decide``, stores and presents.
``create_app(settings)`` builds the FastAPI application; ``cli.serve`` runs it.
"""

__all__ = ["create_app", "Settings"]


def __getattr__(name: str):
    """Imported when first used, so that ``qmcredit`` commands other than ``serve`` start
    without loading the web stack."""
    if name == "create_app":
        from .app import create_app

        return create_app
    if name == "Settings":
        from .settings import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
