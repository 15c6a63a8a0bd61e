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


# Invoices sealed per transaction by the periodic work: one commit for several packages, while
# the write lock (SQLite) or the chain rows (PostgreSQL) are held for a few tens of milliseconds.
SEALED_PER_TRANSACTION = 10


def seal_unsealed(clock: Clock | None = None) -> list[int]:
    """Invoices in a final state without a package get one, SEALED_PER_TRANSACTION at a time; if one
    of them fails, the others of its transaction are sealed again each on its own."""
    clock = clock or current_clock()
    with unit_of_work() as session:
        ids = service.unsealed_ids(session, get_settings().preservation_batch)
    sealed: list[int] = []
    for start in range(0, len(ids), SEALED_PER_TRANSACTION):
        group = ids[start : start + SEALED_PER_TRANSACTION]
        try:
            sealed += _seal_together(group, clock)
        except Exception:  # rolled back: one broken invoice must not stop the others
            for invoice_id in group:
                try:
                    sealed += _seal_together([invoice_id], clock)
                except Exception:  # retried next minute
                    log.exception("sealing invoice %s failed", invoice_id)
    return sealed


def _seal_together(invoice_ids: list[int], clock: Clock) -> list[int]:
    """Seal these invoices in one transaction: the ids of those that got a package."""
    sealed = []
    with unit_of_work() as session:
        for invoice_id in invoice_ids:
            if service.seal_invoice(session, invoice_id, clock) is not None:
                sealed.append(invoice_id)
            session.end_job()  # the files read for this package are not kept for the next
    return sealed
