"""Invoices delivered to varco: routed to the client's account, or kept aside until one exists."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, case, func, or_, select

from varco import fatturapa
from varco.accounts.models import Account
from varco.core import blobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.errors import BadRequest
from varco.core.uow import UnitOfWork
from varco.events import service as events
from varco.invoices import filenames
from varco.invoices import service as invoices
from varco.invoices.models import Invoice, InvoiceBody
from varco.invoices.repository import body_values, party_columns, signature_column
from varco.invoices.states import InvoiceState
from varco.mail import receipts
from varco.sdi import messages
from varco.sdi.models import UnroutableInvoice

log = logging.getLogger("varco.sdi.received")

OUTCOME_WINDOW = timedelta(days=15)  # decisions.md: esito within 15 days; DT after 15 days


# accounts.service offers no lookup by tax identifier; this read-only query runs on the delivery
# path of every invoice, so it is built once.
_BY_VAT = (Account.country_code == bindparam("country")) & (Account.vat_code == bindparam("vat"))
_BY_CODE = Account.fiscal_code == bindparam("code")
_CODE_AS_VAT = (Account.country_code == "IT") & (Account.vat_code == bindparam("code"))
_RECIPIENT = (
    select(Account)
    .where(or_(_BY_VAT, _BY_CODE, _CODE_AS_VAT))
    .order_by(case((_BY_VAT, 0), (_BY_CODE, 1), (_CODE_AS_VAT, 2), else_=9), Account.is_disabled, Account.id)
    .limit(1)
)
# Whether there is one: no account loaded (the simulator asks it of every file it delivers).
_ANY_RECIPIENT = select(Account.id).where(or_(_BY_VAT, _BY_CODE, _CODE_AS_VAT)).limit(1)


class NoFreeName(BadRequest):
    """No free name for a received file."""


@dataclass(frozen=True)
class Delivery:
    """Where a received invoice went: an account's invoice, or the unroutable shelf."""

    invoice: Invoice | None = None
    unroutable: UnroutableInvoice | None = None


def recipient_for(session: UnitOfWork, client: fatturapa.Party) -> Account | None:
    """The account of the client (1.4): by VAT number (1.4.1.1), else by tax code (1.4.1.2).

    A company's tax code is usually its VAT number, so a tax code also matches an account's VAT.
    Several accounts may share a number: enabled accounts first, then the oldest.
    """
    params = _recipient_params(client)
    return session.scalar(_RECIPIENT, params) if params else None


def has_recipient(session: UnitOfWork, client: fatturapa.Party) -> bool:
    """Whether `recipient_for` finds an account."""
    params = _recipient_params(client)
    return params is not None and session.execute(_ANY_RECIPIENT, params).first() is not None


def _recipient_params(client: fatturapa.Party) -> dict[str, str | None] | None:
    code = (client.fiscal_code or "").upper() or None
    if not client.vat_code and not code:
        return None
    # A missing identifier is NULL: it matches nothing.
    return {"country": client.country or "IT", "vat": client.vat_code or None, "code": code}


def read(content: bytes) -> fatturapa.Report:
    # The SDI already validated the file; the synchronous stage unwraps it and reads the summary.
    return fatturapa.check_sync(
        content, fatturapa.CheckOptions(skip_extra_schema=True, max_bytes=len(content) + 1)
    )


def deliver(
    session: UnitOfWork,
    account: Account,
    filename: str,
    metadata: messages.Message,
    content: bytes,
    metadata_xml: bytes,
    report: fatturapa.Report,
    clock: Clock,
) -> Invoice:
    summary = report.summary
    assert summary is not None
    now = clock.now()
    name = _received_name(session, filename)
    blob = blobs.store(session, name, content, account.id, now)
    invoice = Invoice(
        direction="in",
        filename=name,
        sdi_id=metadata.sdi_id,
        account_id=account.id,
        format=report.format or metadata.format or summary.format,
        state=InvoiceState.RICEVUTA.value,
        blob_id=blob.id,
        content_sha256=hashlib.sha256(content).hexdigest(),
        is_signed=report.signature is not None,
        signature=signature_column(report),
        skip_extra_schema=False,
        codice_destinatario=summary.codice_destinatario,
        pec_destinatario=summary.pec_destinatario,
        sdi_errors=[],
        created_at=now,
        updated_at=now,
        sdi_received_at=now,
        delivered_at=now,
        outcome_deadline_at=now + OUTCOME_WINDOW,  # the client's 15 days for an esito
        **party_columns(summary),
        bodies=[InvoiceBody(**values) for values in body_values(summary)],
    )
    invoices.add_invoice(session, invoice, now)
    mt_name = messages.message_name(filename, "MT", 1)
    metadata_file = invoices.add_notification(session, invoice, "MT", mt_name, metadata_xml, clock)
    payload = {
        **invoices.status_payload(invoice, notification=metadata_file),  # the MT came with it
        "docType": "in",
        "sender": _party_payload(invoice),
    }
    events.record(session, account.id, "createInvoice", payload, now, subject=invoice.filename)
    receipts.queue_receipt(session, invoice, clock)  # §1 e-mail receipt: outbox row now, sent after commit
    log.info(
        "received %s (IdentificativoSdI %s) delivered to %s", filename, metadata.sdi_id, account.username
    )
    return invoice


def _received_name(session: UnitOfWork, filename: str) -> str:
    """The SDI file name, unless varco already holds a received file of that name.

    File names are unique per direction, so a file one varco client sends to another keeps its
    name on both sides. Two different transmissions with one name cannot come from the SDI
    (00002 "Nome file duplicato"); should a channel deliver one anyway, it gets a suffix.
    """
    if invoices.find_invoice(session, filename=filename, direction="in") is None:
        return filename
    base = filenames.stem(filename)
    extension = filename[len(base) :]
    for n in range(1, 100):
        candidate = f"{base}_IN{n if n > 1 else ''}{extension}"
        if invoices.find_invoice(session, filename=candidate, direction="in") is None:
            log.warning("received %s stored as %s: a file of that name exists", filename, candidate)
            return candidate
    raise NoFreeName(f"no free name for received file {filename}")


def _party_payload(invoice: Invoice) -> dict[str, Any]:
    return {
        "description": invoice.sender_description,
        "countryCode": invoice.sender_country,
        "vatCode": invoice.sender_vat,
        "fiscalCode": invoice.sender_fiscal_code,
    }


def shelve(
    session: UnitOfWork,
    filename: str,
    content: bytes,
    metadata_xml: bytes,
    metadata: messages.Message,
    client: fatturapa.Party | None,
    clock: Clock,
) -> UnroutableInvoice:
    now = clock.now()
    ids = (
        f"VAT {client.country or ''}{client.vat_code or '-'}, tax code {client.fiscal_code or '-'}"
        if client
        else ""
    )
    reason = f"no account for the client ({ids})" if client else "the client (1.4) cannot be read"
    row = UnroutableInvoice(
        sdi_id=metadata.sdi_id,
        filename=filename,
        blob_id=blobs.store(session, filename, content, None, now).id,
        metadata_blob_id=blobs.store(
            session, messages.message_name(filename, "MT", 1), metadata_xml, None, now
        ).id,
        client_country=client.country if client else None,
        client_vat=client.vat_code if client else None,
        client_fiscal_code=client.fiscal_code if client else None,
        reason=reason[:255],
        received_at=now,
    )
    session.add(row)
    session.flush()
    log.warning("received %s (IdentificativoSdI %s) kept aside: %s", filename, metadata.sdi_id, reason)
    return row


def list_unroutable(
    session: UnitOfWork, *, pending_only: bool = True, limit: int | None = None
) -> list[UnroutableInvoice]:
    query = select(UnroutableInvoice).order_by(UnroutableInvoice.id)
    if pending_only:
        query = query.where(UnroutableInvoice.invoice_id.is_(None))
    return list(session.scalars(query.limit(limit)))


def redeliver(
    session: UnitOfWork, clock: Clock, *, limit: int = 500
) -> list[tuple[UnroutableInvoice, Invoice]]:
    """Deliver kept-aside invoices whose client now has an account."""
    shelf = UnroutableInvoice
    code = func.upper(shelf.client_fiscal_code)
    has_account = (
        select(Account.id)
        .where(
            or_(
                (Account.country_code == func.coalesce(shelf.client_country, "IT"))
                & (Account.vat_code == shelf.client_vat),
                Account.fiscal_code == code,
                (Account.country_code == "IT") & (Account.vat_code == code),
            )
        )
        .exists()
    )
    # Only rows that now match: rows that never will do not cost a look every minute.
    query = select(shelf).where(shelf.invoice_id.is_(None), has_account).order_by(shelf.id).limit(limit)
    delivered = []
    for row in session.scalars(query).all():
        stored = fatturapa.Party(None, row.client_country, row.client_vat, row.client_fiscal_code)
        account = recipient_for(session, stored)
        if account is None:
            continue
        content = _blob(session, row.blob_id)
        metadata_xml = _blob(session, row.metadata_blob_id)
        metadata = messages.parse(metadata_xml)
        invoice = deliver(
            session, account, row.filename, metadata, content, metadata_xml, read(content), clock
        )
        row.invoice_id, row.redelivered_at = invoice.id, clock.now()
        delivered.append((row, invoice))
    return delivered


def redeliver_unroutable(clock: Clock | None = None) -> int:
    """Every minute: invoices kept aside reach their client once its account exists."""
    with unit_of_work() as session:
        return len(redeliver(session, clock or current_clock(), limit=100))


def _blob(session: UnitOfWork, blob_id: int) -> bytes:
    blob = session.get(blobs.Blob, blob_id)
    assert blob is not None
    return blob.content
