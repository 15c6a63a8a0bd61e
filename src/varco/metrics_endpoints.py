"""GET /metrics: Prometheus text format (docs/operations.md lists every metric).

The counters come from core/metrics.py (every process's, added up, in multiprocess mode); the
gauges of the whole installation are read from the database when scraped: the jobs waiting and
the oldest of them, the mail outbox.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Iterable

from fastapi import APIRouter, Request, Response
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError

from varco.auth.dependencies import bearer_token
from varco.core import jobs, metrics
from varco.core.clock import current_clock
from varco.core.db import get_database, reading
from varco.core.errors import Forbidden, NotFound, Unauthorized
from varco.limits import ip
from varco.mail import service as mail
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.metrics")
router = APIRouter(tags=["operations"])


@router.get("/metrics", include_in_schema=False)  # not JSON: described in docs/operations.md
def metrics_page(request: Request) -> Response:
    settings = get_settings()
    if not settings.metrics_enabled:
        raise NotFound("Metrics are off (VARCO_METRICS_ENABLED)")
    _check_reader(request, settings)
    return Response(metrics.render(_Installation()), media_type=CONTENT_TYPE_PLAIN_0_0_4)


def _check_reader(request: Request, settings: Settings) -> None:
    """VARCO_METRICS_TOKEN and/or VARCO_METRICS_ALLOW (both must pass when both are set); with
    neither, open on the demo profile and refused in production, where the counts (of
    uploads, refusals, accounts' traffic) are nobody's business but the operator's."""
    token, networks = settings.metrics_token, settings.metrics_allow
    if token is None and not networks:
        if settings.profile == "production":
            raise Forbidden("GET /metrics needs VARCO_METRICS_TOKEN or VARCO_METRICS_ALLOW in production")
        return
    if networks:
        peer = request.client.host if request.client else ""
        address = ip.client_ip(peer, request.headers.getlist("x-forwarded-for"), settings)
        if not _within(address, networks):
            raise Forbidden("GET /metrics is not open to this address (VARCO_METRICS_ALLOW)")
    if token is not None:
        given = (bearer_token(request) or "").encode()
        # `not given`: settings refuse an empty token; an empty bearer must never match one all the same
        if not given or not hmac.compare_digest(given, token.get_secret_value().encode()):
            raise Unauthorized(headers={"WWW-Authenticate": "Bearer"})


def _within(address: str, networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:  # "testclient", a unix socket: no address to allow
        return False
    return any(parsed in network for network in networks)


class _Installation(Collector):
    """What every process shares, read from the database at each scrape."""

    def collect(self) -> Iterable[Metric]:
        try:
            with get_database().sessions() as session, reading(session):
                waiting, age = jobs.oldest_pending(session, current_clock())
                outbox = mail.outbox_size(session)
        except SQLAlchemyError as exc:  # the counters are still worth answering
            log.warning("metrics: the database did not answer: %s", type(exc).__name__)
            return []
        return [
            GaugeMetricFamily("varco_pending_jobs", "Jobs due and not done", value=waiting),
            GaugeMetricFamily(
                "varco_oldest_pending_job_age_seconds",
                "How long the oldest job due and not done has waited (0: none)",
                value=age,
            ),
            GaugeMetricFamily("varco_mail_outbox_size", "E-mail messages not delivered yet", value=outbox),
        ]
