"""Preservation jobs: seal one invoice on request; every minute, seal final invoices left without one."""

from __future__ import annotations

import logging
from typing import Any

from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.preservation import service
from varco.settings import get_settings

log = logging.getLogger("varco.preservation")


def register(registry: jobs.Registry) -> None:
    registry.add(service.SEAL, seal)
    registry.reconciler(seal_unsealed)


def seal(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Seal the package of one invoice (idempotent: nothing new, nothing done)."""
    service.seal_invoice(session, int(args["invoice_id"]), clock)


def seal_unsealed(clock: Clock | None = None) -> list[int]:
    """Invoices in a final state without a package get one, each in its own transaction."""
    clock = clock or current_clock()
    with unit_of_work() as session:
        ids = service.unsealed_ids(session, get_settings().preservation_batch)
    sealed: list[int] = []
    for invoice_id in ids:
        try:
            with unit_of_work() as session:
                if service.seal_invoice(session, invoice_id, clock) is not None:
                    sealed.append(invoice_id)
        except Exception:  # one broken invoice must not stop the others; retried next minute
            log.exception("sealing invoice %s failed", invoice_id)
    return sealed
