"""The background job that prepares a multiseller report (§4.1: 202 while it runs, then 200)."""

from __future__ import annotations

from typing import Any

from varco.accounts.multisellers import service
from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork


def register(registry: jobs.Registry) -> None:
    registry.add(service.REPORT, prepare_report)


def prepare_report(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Build the §2.6 report of one request; idempotent (a READY report is left alone)."""
    service.build_report(session, int(args["report_id"]), clock)
