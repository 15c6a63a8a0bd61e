"""E-mail receipt of received invoices (§1): a setting per account, one outbox message per invoice.

`varco.sdi.received` calls `queue_receipt` in the transaction that stores a received invoice: the
outbox message (with the invoice file, its PDF and the MT metadata attached) commits with the
invoice and its delivery job is sent after commit. A reconciler is the safety net: it queues the
message of any received invoice still owed one (e.g. stored by another path). `mail_receipts` has
a unique invoice id and the message key is `receipt:<invoice id>`, so an invoice is mailed once.
"""

from __future__ import annotations

from sqlalchemy import select

from varco.accounts.models import Account
from varco.accounts.service import EMAIL_RE
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.errors import BadRequest
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice, Notification
from varco.mail import service as mail
from varco.mail.models import MailReceipt, MailReceiptSetting
from varco.rendering import service as rendering
from varco.settings import get_settings


class ReceiptSettingInvalid(BadRequest):
    """Invalid e-mail receipt setting."""


def setting_of(session: UnitOfWork, account: Account) -> MailReceiptSetting | None:
    return session.get(MailReceiptSetting, account.id)


def configure(
    session: UnitOfWork, account: Account, *, enabled: bool, address: str, clock: Clock
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


def _body(invoice: Invoice, names: list[str]) -> str:
    numbers = ", ".join(f"{b.number} del {b.invoice_date}" for b in invoice.bodies)
    return (
        f"Fattura ricevuta / Invoice received: {invoice.filename}\n"
        f"IdentificativoSdI: {invoice.sdi_id or '-'}\n"
        f"Cedente / supplier: {invoice.sender_description or ''} {invoice.sender_country or ''}"
        f"{invoice.sender_vat or ''}\n"
        f"Documenti / documents: {numbers}\n\n"
        "Allegati / attachments:\n" + "".join(f"- {name}\n" for name in names)
    )


def _content_type(filename: str) -> str:
    # The file as received: plain XML, or a CAdES envelope (.p7m) with its signature.
    return "application/pkcs7-mime" if filename.lower().endswith(".p7m") else "application/xml"


def _attachments(session: UnitOfWork, invoice: Invoice) -> list[mail.Attachment]:
    """The invoice file as received, its PDF (rendered when the mail is sent, not in the transaction
    that stores the invoice) and the SDI metadata (MT) that came with it."""
    name = invoice.filename
    files = [
        mail.Attachment(name, _content_type(name), blob_id=invoice.blob_id),
        mail.Attachment(
            rendering.pdf_name(name), "application/pdf", blob_id=invoice.blob_id, rendered_from=name
        ),
    ]
    query = (
        select(Notification)
        .where(Notification.invoice_id == invoice.id, Notification.type == "MT")
        .order_by(Notification.id)
    )
    files.extend(
        mail.Attachment(n.filename, "application/xml", blob_id=n.blob_id) for n in session.scalars(query)
    )
    return files


def queue_receipt(session: UnitOfWork, invoice: Invoice, clock: Clock) -> MailReceipt | None:
    """Queue the e-mail of one received invoice if its account wants it; never twice."""
    setting = session.get(MailReceiptSetting, invoice.account_id)
    if setting is None or not setting.is_enabled or setting.enabled_at is None:
        return None
    if invoice.direction != "in" or invoice.created_at < setting.enabled_at:
        return None
    existing = session.scalar(select(MailReceipt).where(MailReceipt.invoice_id == invoice.id))
    if existing is not None:
        return existing
    files = _attachments(session, invoice)
    message = mail.queue_message(
        session,
        key=f"receipt:{invoice.id}",
        account_id=invoice.account_id,
        to_address=setting.address,
        subject=f"Fattura ricevuta {invoice.filename}",
        body=_body(invoice, [f.filename for f in files]),
        clock=clock,
        attachments=files,
    )
    receipt = MailReceipt(
        invoice_id=invoice.id, account_id=invoice.account_id, message_id=message.id, created_at=clock.now()
    )
    session.add(receipt)
    session.flush()
    return receipt


def pending_invoice_ids(session: UnitOfWork, limit: int) -> list[int]:
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


def queue_pending_receipts(clock: Clock | None = None) -> int:
    """Reconciler (safety net): queue the e-mail of every received invoice still owed one."""
    clock = clock or current_clock()
    with unit_of_work() as session:
        ids = pending_invoice_ids(session, get_settings().panel_receipt_batch)
        for invoice_id in ids:
            invoice = session.get(Invoice, invoice_id)
            assert invoice is not None
            queue_receipt(session, invoice, clock)
    return len(ids)


def receipts_of(session: UnitOfWork, account: Account) -> list[MailReceipt]:
    query = select(MailReceipt).where(MailReceipt.account_id == account.id).order_by(MailReceipt.id.desc())
    return list(session.scalars(query.limit(50)))
