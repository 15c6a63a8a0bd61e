"""The jobs of invoices: the asynchronous stage of an accepted upload, and its reconciler."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, or_, select

from varco import fatturapa
from varco.core import blobs, idempotency, jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.core.uow import Fact, UnitOfWork
from varco.invoices import processing
from varco.invoices import service as invoices
from varco.invoices.check_cache import checked_ahead
from varco.invoices.models import Invoice
from varco.invoices.repository import InvoiceRepository
from varco.invoices.states import InvoiceState
from varco.settings import get_settings


def register(registry: jobs.Registry) -> None:
    registry.add(invoices.PROCESS, process, prepare=lock_invoices, ahead=check_ahead)
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


_INVOICES = Invoice.__table__
_TO_CHECK = select(_INVOICES.c.id, _INVOICES.c.blob_id, _INVOICES.c.skip_extra_schema).where(
    _INVOICES.c.id.in_(bindparam("ids", expanding=True)),
    _INVOICES.c.state == InvoiceState.PRESA_IN_CARICO,
    _INVOICES.c.handed_over_at.is_(None),
)


def check_ahead(uow: UnitOfWork, batch: list[dict[str, Any]], clock: Clock) -> list[dict[Fact[Any], Any]]:
    """Before a batch of stages takes SQLite's write lock: the files still to process checked as
    their stages will check them (and the SDI simulator after them, the same rules once), so that
    the lock is held by the writes alone. A file changes never; its invoice may have moved on since,
    which the stage, under the lock, decides again."""
    ids = [int(args["invoice_id"]) for args in batch]
    files = {row.id: (row.blob_id, row.skip_extra_schema) for row in uow.execute(_TO_CHECK, {"ids": ids})}
    contents = blobs.read_small(uow, [blob_id for blob_id, _ in files.values()])
    found: list[dict[Fact[Any], Any]] = []
    for invoice_id in ids:
        blob_id, skip_extra_schema = files.get(invoice_id, (None, False))
        if blob_id not in contents:
            found.append({})
            continue
        cache = fatturapa.CheckCache()
        processing.file_errors(skip_extra_schema, contents[blob_id], clock, cache)
        found.append(checked_ahead(cache))
    return found


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
