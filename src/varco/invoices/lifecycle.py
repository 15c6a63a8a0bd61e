"""The only writer of `Invoice.state`, and the store of SDI notifications."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from varco.core import blobs
from varco.core.clock import Clock
from varco.core.db import append_row
from varco.events import service as events
from varco.invoices.models import Invoice, InvoiceTransition, Notification
from varco.invoices.repository import InvoiceRepository
from varco.invoices.states import IllegalTransition, InvoiceEvent, InvoiceState, next_state

log = logging.getLogger("varco.invoices")


def apply_event(
    session: Session,
    invoice_id: int,
    event: InvoiceEvent,
    *,
    key: str,
    clock: Clock,
    sdi_errors: list[dict[str, str]] | None = None,
    notification: Notification | None = None,
) -> tuple[Invoice, bool]:
    """Move an invoice through one guarded transition. A key seen before is a no-op: (invoice, False).

    Raises IllegalTransition for a move the lifecycle does not allow (callers log and drop it).
    `notification`: the SDI message that causes the move, if the caller has it (else looked up).
    """
    repo = InvoiceRepository(session)
    invoice = repo.get_for_update(invoice_id)
    if invoice is None:
        raise LookupError(f"invoice {invoice_id} does not exist")
    current = InvoiceState(invoice.state)
    try:
        target = next_state(current, event)
    except IllegalTransition:
        if repo.has_transition(invoice.id, key):
            return invoice, False  # a duplicate of a move made before: not illegal, a no-op
        raise
    now = clock.now()
    # The unique (invoice_id, key) decides: a key seen before inserts nothing (one statement).
    if not repo.insert_transition(
        invoice_id=invoice.id,
        key=key,
        event=event.value,
        from_state=current.value,
        to_state=target.value,
        at=now,
    ):
        return invoice, False
    invoice.state = target.value
    invoice.updated_at = now
    if sdi_errors is not None:
        invoice.sdi_errors = sdi_errors
    events.record(
        session,
        invoice.account_id,
        "updateInvoiceStatus",
        status_payload(invoice, event, notification or _notification_for(session, invoice.id, event)),
        now,
        subject=invoice.filename,
    )
    return invoice, True


def status_payload(
    invoice: Invoice, event: InvoiceEvent | None = None, notification: Notification | None = None
) -> dict[str, Any]:
    """What a callback receiver needs without another call (issue: callbacks)."""
    state = InvoiceState(invoice.state)
    return {
        "invoiceId": invoice.id,
        "filename": invoice.filename,
        "idSdi": invoice.sdi_id,
        "status": state.value,
        "statusDescription": state.label,
        "event": event.value if event else None,
        "notificationType": notification.type if notification else None,
        "notificationFilename": notification.filename if notification else None,
        "sdiErrors": invoice.sdi_errors or [],
    }


def _notification_for(session: Session, invoice_id: int, event: InvoiceEvent) -> Notification | None:
    """The SDI message that caused this change (stored just before it), if any."""
    type_ = event.value[:2]  # NE-EC01 -> NE
    if type_ not in {"NS", "MC", "AT", "RC", "NE", "DT"}:
        return None
    return InvoiceRepository(session).latest_notification(invoice_id, type_)


def record_initial_state(session: Session, invoice: Invoice, now: datetime) -> None:
    """History row for the state an invoice is created in."""
    values = {
        "invoice_id": invoice.id,
        "key": "created",
        "event": "created",
        "from_state": None,
        "to_state": invoice.state,
        "at": now,
    }
    append_row(session, InvoiceTransition, values)


def add_notification(
    session: Session,
    invoice: Invoice,
    type_: str,
    filename: str,
    content: bytes,
    clock: Clock,
    *,
    result: str | None = None,
    number: str | None = None,
    notification_date: datetime | None = None,
) -> Notification | None:
    """Store an SDI message for an invoice; a file name seen before is a duplicate: None."""
    repo = InvoiceRepository(session)
    if repo.has_notification(filename):
        return None
    now = clock.now()
    blob = blobs.store(session, filename, content, invoice.account_id, now)
    values = {
        "invoice_id": invoice.id,
        "type": type_,
        "filename": filename,
        "blob_id": blob.id,
        "result": result,
        "number": number,
        "notification_date": notification_date or now,
        "created_at": now,
    }
    return append_row(session, Notification, values)


def safe_apply(
    session: Session,
    invoice_id: int,
    event: InvoiceEvent,
    *,
    key: str,
    clock: Clock,
    sdi_errors: list[dict[str, str]] | None = None,
    notification: Notification | None = None,
) -> Invoice | None:
    """apply_event for inbound notifications: an illegal move is logged and refused, not raised."""
    try:
        invoice, _ = apply_event(
            session, invoice_id, event, key=key, clock=clock, sdi_errors=sdi_errors, notification=notification
        )
        return invoice
    except IllegalTransition as exc:
        log.warning("invoice %s: refused %s (%s)", invoice_id, event.value, exc)
        return None


def find_invoice(
    session: Session,
    *,
    sdi_id: str | None = None,
    filename: str | None = None,
    direction: str | None = None,
    lock: bool = False,
) -> Invoice | None:
    """One invoice by IdentificativoSdI and/or file name (the SDI side looks invoices up this way).

    A file name needs its direction (the sent and received copies share it). `lock`: locked
    for update as `apply_event` would, which then does not read it again.
    """
    return InvoiceRepository(session).find(sdi_id=sdi_id, filename=filename, direction=direction, lock=lock)


def add_invoice(session: Session, invoice: Invoice, now: datetime) -> Invoice:
    """Store a new invoice (e.g. a received one) with the history row of its first state."""
    InvoiceRepository(session).add(invoice)
    record_initial_state(session, invoice, now)
    return invoice


def count_notifications(session: Session, invoice_id: int, type_: str) -> int:
    return InvoiceRepository(session).count_notifications(invoice_id, type_)
