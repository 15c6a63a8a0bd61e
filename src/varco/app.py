"""The FastAPI application: one router per domain, one error handler, request ids."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from varco import __version__
from varco.accounts.endpoints import router as accounts_router
from varco.auth.endpoints import router as auth_router
from varco.core.errors import install_handlers
from varco.core.health import router as health_router
from varco.core.requests import RequestIdFilter, RequestIdMiddleware
from varco.invoices.endpoints import router as invoices_router

DESCRIPTION = """
varco is a self-hostable Italian e-invoicing intermediary speaking the REST contract of an
existing intermediary service. Sign in with `POST /auth/signin` (form body), then send
`Authorization: Bearer <access_token>` on every other call.
"""


def configure_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):  # replace basicConfig-style handlers: one line per record
        if not any(isinstance(f, RequestIdFilter) for f in handler.filters):
            root.removeHandler(handler)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if not any(isinstance(f, RequestIdFilter) for h in root.handlers for f in h.filters):
        handler = logging.StreamHandler()
        handler.addFilter(RequestIdFilter())
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [req %(request_id)s] %(message)s")
        )
        root.addHandler(handler)
    root.setLevel(level)


def create_app() -> FastAPI:
    app = FastAPI(title="varco", version=__version__, description=DESCRIPTION)
    install_handlers(app)
    app.add_middleware(RequestIdMiddleware)
    for router in (health_router, auth_router, accounts_router, invoices_router):
        app.include_router(router)
    return app
