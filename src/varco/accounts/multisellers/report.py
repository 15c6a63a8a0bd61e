"""The background job that prepares a multiseller report (§4.1: 202 while it runs, then 200)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from varco.accounts.multisellers import service
from varco.core import jobs
from varco.core.clock import Clock


@jobs.job(service.REPORT_JOB)
def prepare_report(session: Session, args: dict[str, Any], clock: Clock) -> None:
    """Build the §2.6 report of one request; idempotent (a READY report is left alone)."""
    service.build_report(session, int(args["report_id"]), clock)
