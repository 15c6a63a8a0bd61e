"""The FastAPI application: one router per domain, one error handler, request ids."""

from __future__ import annotations

import logging

from fastapi import FastAPI
from pydantic import ValidationError

from varco import __version__, jobs_list, openapi
from varco.accounts.endpoints import router as accounts_router
from varco.accounts.multisellers.endpoints import router as multisellers_router
from varco.audit.endpoints import router as audit_router
from varco.auth.endpoints import router as auth_router
from varco.callbacks.endpoints import install_openapi_examples
from varco.callbacks.endpoints import router as callbacks_router
from varco.comfin.endpoints import router as comfin_router
from varco.core import logs, metrics
from varco.core.bodies import BodyLimitMiddleware
from varco.core.docs import install as install_docs
from varco.core.errors import install_handlers
from varco.core.health import router as health_router
from varco.core.requests import RequestMiddleware, ScrubQueryFilter
from varco.invoices.endpoints import router as invoices_router
from varco.legacy.communication_endpoints import router as legacy_communications_router
from varco.legacy.search_endpoints import router as legacy_search_router
from varco.limits.middleware import install as install_limits
from varco.metrics_endpoints import router as metrics_router
from varco.panel.routes import router as panel_router
from varco.sdi.endpoints import admin_router as sdi_admin_router
from varco.sdi.endpoints import esito_router as sdi_esito_router
from varco.sdi.sdicoop_endpoints import MTLS_STATE
from varco.sdi.sdicoop_endpoints import router as sdicoop_router
from varco.search.endpoints import router as search_router
from varco.settings import get_settings

DESCRIPTION = """
varco is a self-hostable Italian e-invoicing intermediary speaking the REST contract of an
existing intermediary service. Sign in with `POST /auth/signin` (form body), then send
`Authorization: Bearer <access_token>` on every other call.
"""


def configure_logging() -> None:
    """This process's log lines (core/logs.py: format and level from the settings)."""
    try:
        settings = get_settings()
        logs.configure(settings.resolved_log_format, settings.log_level)
    except ValidationError:  # the command says what is wrong (cli_support.settings_or_exit)
        logs.configure("console", "INFO")
    access = logging.getLogger("uvicorn.access")  # off under `varco serve`; scrubbed wherever it is on
    if not any(isinstance(f, ScrubQueryFilter) for f in access.filters):
        access.addFilter(ScrubQueryFilter())


def configure_metrics() -> None:
    """Counting on or off, and the directory shared by the processes of a host (core/metrics.py):
    before this process counts anything."""
    try:
        metrics.setup(get_settings())
    except ValidationError:  # the command says what is wrong (cli_support.settings_or_exit)
        return


def create_app() -> FastAPI:
    jobs_list.install()  # the jobs this process runs: its embedded worker, or tests draining the queue
    configure_metrics()
    # docs_url, redoc_url: FastAPI's pages load their scripts from CDNs; install_docs serves them.
    app = FastAPI(title="varco", version=__version__, description=DESCRIPTION, docs_url=None, redoc_url=None)
    install_handlers(app)
    # Bodies are counted while read, before authentication and parsing; inside the limits (a
    # refused IP reads nothing) and inside RequestMiddleware (413 bodies carry the request id).
    app.add_middleware(BodyLimitMiddleware)
    install_limits(app)  # §8: inside RequestMiddleware, so 429 bodies carry the request id
    app.add_middleware(RequestMiddleware)  # outermost: the request id, log line and metrics
    for router in (
        health_router,
        metrics_router,
        auth_router,
        accounts_router,
        multisellers_router,
        invoices_router,
        sdi_esito_router,
        sdi_admin_router,
        audit_router,
        sdicoop_router,
        search_router,
        callbacks_router,
        comfin_router,
        panel_router,
        legacy_search_router,
        legacy_communications_router,
    ):
        app.include_router(router)
    install_docs(app)  # /docs and /redoc from package assets: they work with no network
    install_openapi_examples(app)  # examples keep their null fields
    openapi.install(app)  # each operation's refusals, in its route's shape
    return app


def create_sdicoop_app() -> FastAPI:
    """The services the SDI calls, alone, for the listener whose TLS checks the SDI's client
    certificate (`varco serve --sdicoop-port`): whoever reaches them there is the SDI."""
    app = FastAPI(title="varco SDICoop", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    install_handlers(app)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(RequestMiddleware)
    app.include_router(sdicoop_router)
    setattr(app.state, MTLS_STATE, True)
    return app
