"""E-mail receipt of received invoices (§1): a setting per account, one outbox message per invoice.

The SDI side records a `createInvoice` event when a received invoice is stored; a reconciler finds
received invoices of accounts with receipt on that have no `mail_receipts` row yet and queues one
message each through `varco.mail` (outbox row + delivery job, retried; visible in the outbox).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from varco.accounts.models import Account
from varco.accounts.service import EMAIL_RE
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.errors import BadRequest
from varco.invoices.models import Invoice
from varco.mail import service as mail
from varco.panel.models import MailReceipt, MailReceiptSetting
from varco.settings import get_settings


class ReceiptSettingInvalid(BadRequest):
    """Invalid e-mail receipt setting."""


def setting_of(session: Session, account: Account) -> MailReceiptSetting | None:
    return session.get(MailReceiptSetting, account.id)


def configure(
    session: Session, account: Account, *, enabled: bool, address: str, clock: Clock
) -> MailReceiptSetting:
    """Turn e-mail receipt on or off; invoices received from now on are sent to `address`."""
    address = address.strip()
    if enabled and not EMAIL_RE.match(address):
        raise ReceiptSettingInvalid(f"invalid e-mail address {address!r}: needed to turn e-mail receipt on")
    row = session.get(MailReceiptSetting, account.id)
    now = clock.now()
    if row is None:
        row = MailReceiptSetting(account_id=account.id, is_enabled=False, updated_at=now)
        session.add(row)
    if enabled and not row.is_enabled:
        row.enabled_at = now  # contract silent: no back-fill of older invoices (docs/panel.md)
    row.is_enabled, row.address, row.updated_at = enabled, address or None, now
    session.flush()
    return row


def _body(invoice: Invoice) -> str:
    numbers = ", ".join(f"{b.number} del {b.invoice_date}" for b in invoice.bodies)
    return (
        f"Fattura ricevuta / Invoice received: {invoice.filename}\n"
        f"IdentificativoSdI: {invoice.sdi_id or '-'}\n"
        f"Cedente / supplier: {invoice.sender_description or ''} {invoice.sender_country or ''}"
        f"{invoice.sender_vat or ''}\n"
        f"Documenti / documents: {numbers}\n\n"
        "Il file, il PDF e la notifica sono nel pannello di controllo.\n"
        "The file, its PDF and the notification are in the control panel.\n"
    )


def queue_receipt(session: Session, invoice: Invoice, clock: Clock) -> MailReceipt | None:
    """Queue the e-mail of one received invoice if its account wants it; never twice."""
    setting = session.get(MailReceiptSetting, invoice.account_id)
    if setting is None or not setting.is_enabled or setting.enabled_at is None:
        return None
    if invoice.direction != "in" or invoice.created_at < setting.enabled_at:
        return None
    existing = session.scalar(select(MailReceipt).where(MailReceipt.invoice_id == invoice.id))
    if existing is not None:
        return existing
    message = mail.queue_message(
        session,
        key=f"receipt:{invoice.id}",
        account_id=invoice.account_id,
        to_address=setting.address,
        subject=f"Fattura ricevuta {invoice.filename}",
        body=_body(invoice),
        clock=clock,
    )
    receipt = MailReceipt(
        invoice_id=invoice.id, account_id=invoice.account_id, message_id=message.id, created_at=clock.now()
    )
    session.add(receipt)
    session.flush()
    return receipt


def pending_invoice_ids(session: Session, limit: int) -> list[int]:
    """Received invoices of accounts with receipt on, since it was turned on, not yet queued."""
    query = (
        select(Invoice.id)
        .join(MailReceiptSetting, MailReceiptSetting.account_id == Invoice.account_id)
        .outerjoin(MailReceipt, MailReceipt.invoice_id == Invoice.id)
        .where(
            Invoice.direction == "in",
            MailReceiptSetting.is_enabled.is_(True),
            Invoice.created_at >= MailReceiptSetting.enabled_at,
            MailReceipt.id.is_(None),
        )
        .order_by(Invoice.id)
        .limit(limit)
    )
    return list(session.scalars(query))


@jobs.reconciler
def queue_pending_receipts(clock: Clock | None = None) -> int:
    """Reconciler: queue the e-mail of every received invoice still owed one (durable: rows, not memory)."""
    clock = clock or current_clock()
    with unit_of_work() as session:
        ids = pending_invoice_ids(session, get_settings().panel_receipt_batch)
        for invoice_id in ids:
            invoice = session.get(Invoice, invoice_id)
            assert invoice is not None
            queue_receipt(session, invoice, clock)
    return len(ids)


def receipts_of(session: Session, account: Account) -> list[MailReceipt]:
    query = select(MailReceipt).where(MailReceipt.account_id == account.id).order_by(MailReceipt.id.desc())
    return list(session.scalars(query.limit(50)))
