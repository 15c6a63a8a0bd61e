"""The FastAPI application: one router per domain, one error handler, request ids."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from varco import __version__, jobs_list, openapi
from varco.accounts.endpoints import router as accounts_router
from varco.accounts.multisellers.endpoints import router as multisellers_router
from varco.auth.endpoints import router as auth_router
from varco.callbacks.endpoints import install_openapi_examples
from varco.callbacks.endpoints import router as callbacks_router
from varco.comfin.endpoints import router as comfin_router
from varco.core.bodies import BodyLimitMiddleware
from varco.core.errors import install_handlers
from varco.core.health import router as health_router
from varco.core.requests import RequestIdFilter, RequestIdMiddleware, ScrubQueryFilter
from varco.invoices.endpoints import router as invoices_router
from varco.legacy.communication_endpoints import router as legacy_communications_router
from varco.legacy.search_endpoints import router as legacy_search_router
from varco.limits.middleware import install as install_limits
from varco.panel.routes import router as panel_router
from varco.sdi.endpoints import admin_router as sdi_admin_router
from varco.sdi.endpoints import esito_router as sdi_esito_router
from varco.sdi.sdicoop_endpoints import MTLS_STATE
from varco.sdi.sdicoop_endpoints import router as sdicoop_router
from varco.search.endpoints import router as search_router

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
    access = logging.getLogger("uvicorn.access")  # uvicorn's dictConfig keeps a logger's filters
    if not any(isinstance(f, ScrubQueryFilter) for f in access.filters):
        access.addFilter(ScrubQueryFilter())
    if not any(isinstance(f, RequestIdFilter) for h in root.handlers for f in h.filters):
        handler = logging.StreamHandler()
        handler.addFilter(RequestIdFilter())
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [req %(request_id)s] %(message)s")
        )
        root.addHandler(handler)
    root.setLevel(level)


def create_app() -> FastAPI:
    jobs_list.install()  # the jobs this process runs: its embedded worker, or tests draining the queue
    app = FastAPI(title="varco", version=__version__, description=DESCRIPTION)
    install_handlers(app)
    # Bodies are counted while read, before authentication and parsing; inside the limits (a
    # refused IP reads nothing) and inside RequestIdMiddleware (413 bodies carry the request id).
    app.add_middleware(BodyLimitMiddleware)
    install_limits(app)  # §8: inside RequestIdMiddleware, so 429 bodies carry the request id
    app.add_middleware(RequestIdMiddleware)
    for router in (
        health_router,
        auth_router,
        accounts_router,
        multisellers_router,
        invoices_router,
        sdi_esito_router,
        sdi_admin_router,
        sdicoop_router,
        search_router,
        callbacks_router,
        comfin_router,
        panel_router,
        legacy_search_router,
        legacy_communications_router,
    ):
        app.include_router(router)
    install_openapi_examples(app)  # examples keep their null fields
    openapi.install(app)  # each operation's refusals, in its route's shape
    return app


def create_sdicoop_app() -> FastAPI:
    """The services the SDI calls, alone, for the listener whose TLS checks the SDI's client
    certificate (`varco serve --sdicoop-port`): whoever reaches them there is the SDI."""
    app = FastAPI(title="varco SDICoop", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    install_handlers(app)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(RequestIdMiddleware)
    app.include_router(sdicoop_router)
    setattr(app.state, MTLS_STATE, True)
    return app
