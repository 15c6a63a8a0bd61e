"""The jobs of invoices: the asynchronous stage of an accepted upload, and its reconciler."""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select

from varco.core import blobs, idempotency, jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.core.uow import UnitOfWork
from varco.invoices import processing
from varco.invoices import service as invoices
from varco.invoices.repository import InvoiceRepository
from varco.settings import get_settings


def register(registry: jobs.Registry) -> None:
    registry.add(invoices.PROCESS, process, prepare=lock_invoices)
    registry.reconciler(resume_stuck_invoices)
    registry.reconciler(forget_idempotency_keys)


def forget_idempotency_keys() -> None:
    """Idempotency-Key answers past their retention (uploads are their main use)."""
    with unit_of_work() as uow:
        idempotency.purge_expired(uow, current_clock())


def process(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    processing.process_invoice(uow, int(args["invoice_id"]), clock)


def lock_invoices(uow: UnitOfWork, batch: list[dict[str, Any]]) -> None:
    """A batch of stages locks its invoices in one statement (each stage then reads its own), reads
    their transitions' keys in another (each move is then decided in memory and written with the
    others at commit), and the files of those still to process in a third."""
    ids = [int(args["invoice_id"]) for args in batch]
    repo = InvoiceRepository(uow)
    locked = repo.lock(ids)
    repo.read_transition_keys([invoice.id for invoice in locked])
    blobs.read_ahead(uow, [invoice.blob_id for invoice in locked if processing.to_process(invoice)])


def _process_keys(invoice_id: int):  # a SQL condition
    # The upload's key is process:<id>; a resumed job's process:<id>:<n> (not process:<id>0...).
    return or_(JobRow.key == f"process:{invoice_id}", JobRow.key.like(f"process:{invoice_id}:%"))


def resume_stuck_invoices(clock: Clock | None = None) -> list[int]:
    """Invoices still in state 1 with no pending job (e.g. their job failed for good) get a new one."""
    clock = clock or current_clock()
    cutoff = clock.now() - get_settings().stale_job_after
    resumed: list[int] = []
    with unit_of_work() as uow:
        for invoice_id in InvoiceRepository(uow).unprocessed_ids(before=cutoff):
            keys = _process_keys(invoice_id)
            pending = uow.scalar(
                select(JobRow.id)
                .where(JobRow.name == invoices.PROCESS.name, JobRow.status == "pending", keys)
                .limit(1)
            )
            if pending is None:
                attempt = uow.scalar(select(JobRow.id).where(keys).order_by(JobRow.id.desc()).limit(1))
                jobs.enqueue(
                    uow,
                    invoices.PROCESS,
                    key=f"process:{invoice_id}:{attempt or 0}",
                    clock=clock,
                    invoice_id=invoice_id,
                )
                resumed.append(invoice_id)
    return resumed
