"""What the SDI delivers to varco: notifications on sent invoices, and invoices for our clients.

Any channel (the simulator, a SDICoop endpoint) calls these inside its transaction. Notifications
are stored once (the file name is the key) and move the invoice through the one transition
function; received invoices go to the account whose VAT number or tax code is the client's
(`received`).
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime

from lxml import etree
from sqlalchemy import select

from varco.core import blobs
from varco.core.clock import Clock
from varco.core.errors import BadRequest
from varco.core.uow import UnitOfWork
from varco.invoices import service as invoices
from varco.invoices.models import Invoice, Notification
from varco.invoices.states import InvoiceEvent, InvoiceState
from varco.sdi import messages, received, sdicoop_channel
from varco.sdi.models import EsitoCommittente, UnmatchedMessage, UnroutableInvoice
from varco.sdi.sdicoop.schemas import parse_untrusted

log = logging.getLogger("varco.sdi.inbound")

_EVENTS = {
    "RC": InvoiceEvent.RC,
    "NS": InvoiceEvent.NS,
    "MC": InvoiceEvent.MC,
    "AT": InvoiceEvent.AT,
    "DT": InvoiceEvent.DT,
    "NE-EC01": InvoiceEvent.NE_EC01,
    "NE-EC02": InvoiceEvent.NE_EC02,
}


class NotificationRefused(BadRequest):
    """The SDI message cannot be accepted (NOTRSM201: formal error in the notification)."""


# Times an invoice's life can carry: the XSD's dateTime also allows year 9999 at -14:00, which
# has no UTC value, and whatever comes near it overflows when the 15 days are added.
_EARLIEST, _LATEST = datetime(2000, 1, 1, tzinfo=UTC), datetime(9000, 1, 1, tzinfo=UTC)


def read_message(xml: bytes, what: str) -> messages.Message:
    """An SDI message from the network, as the rest of varco can hold it; NotificationRefused naming
    `what` for anything else (never an exception that would read as "storage failed")."""
    try:
        # DTD, encodings, and a bounded tree before the XSD (its reports cost memory)
        message = messages.parse(xml, parse_untrusted(xml))
    except (ValueError, etree.LxmlError) as exc:  # also dateTimes the XSD allows and Python cannot hold
        raise NotificationRefused(f"{what}: {exc}"[:500]) from None
    # IdentificativoSdI is 12 digits in the XSD, leading zeros and sign aside: the key, so canonical.
    sdi_id = message.sdi_id.strip()
    digits = sdi_id.removeprefix("-").removeprefix("+").lstrip("0") or "0"
    if len(digits) > 12 or not (digits.isascii() and digits.isdigit()):
        raise NotificationRefused(f"{what}: IdentificativoSdI {sdi_id[:40]!r} is not a 12-digit number")
    if sdi_id:
        sdi_id = str(int(digits) * (-1 if sdi_id.startswith("-") else 1))
    delivered = message.delivered_at
    if delivered is not None:
        if delivered.tzinfo is None:  # the SDI writes Italian time
            delivered = delivered.replace(tzinfo=messages.ROME)
        try:
            in_range = _EARLIEST <= delivered.astimezone(UTC) < _LATEST
        except OverflowError:
            in_range = False
        if not in_range:
            raise NotificationRefused(f"{what}: DataOraConsegna {delivered.isoformat()} is out of range")
    return dataclasses.replace(message, sdi_id=sdi_id, delivered_at=delivered)


def receive_notification(session: UnitOfWork, filename: str, xml: bytes, clock: Clock) -> Notification | None:
    """Store an SDI message about an invoice and apply its state change; None for a duplicate."""
    message = read_message(xml, f"notification {filename}")
    if message.type in ("MT", "EC"):
        raise NotificationRefused(f"notification {filename}: {message.type} is not sent to a transmitter")
    direction = "in" if message.type == "SE" else "out"
    # Locked now: the transition below would lock it anyway, and then needs no second read.
    invoice = invoices.find_invoice(session, sdi_id=message.sdi_id, direction=direction, lock=True)
    if invoice is None and message.type == "DT":  # a DT also goes to the recipient
        invoice = invoices.find_invoice(session, sdi_id=message.sdi_id, direction="in", lock=True)
    if invoice is None and direction == "out" and message.filename:
        invoice = _adopted(session, message, clock)
    if invoice is None:
        reason = f"no invoice with IdentificativoSdI {message.sdi_id}"
        named = message.filename and invoices.find_invoice(
            session, filename=message.filename, direction="out"
        )
        if named:  # the copy of a re-send: the SDI refuses it (00002), the invoice stands
            reason = f"about another transmission of {message.filename} (ours is {named.sdi_id})"
        return unmatched(session, filename, xml, message, reason, clock)
    if direction == "out" and message.filename and message.filename != invoice.filename:
        reason = f"NomeFile {message.filename} is not {invoice.filename} (IdentificativoSdI {message.sdi_id})"
        return unmatched(session, filename, xml, message, reason, clock)
    if _refuses_a_copy(session, invoice, message):
        reason = (
            f"the SDI refused the copy sent again after an unknown outcome as a duplicate "
            f"({', '.join(e['code'] for e in message.errors)}): it had received {invoice.filename} before"
        )
        return unmatched(session, filename, xml, message, reason, clock)
    batch = message.ref is not None and len(invoice.bodies) > 1
    notification = invoices.add_notification(
        session,
        invoice,
        message.type,
        filename,
        xml,
        clock,
        result=message.esito if message.type in ("NE", "SE") else None,
        number=message.ref.numero if message.ref and batch else None,
        notification_date=message.delivered_at,
    )
    if notification is None:
        log.info("duplicate notification %s ignored", filename)
        return None
    if invoice.direction == "in":
        if message.type == "SE":
            _esito_rejected(session, invoice, filename, clock)
        return notification
    _apply(session, invoice, message, notification, batch, clock)
    return notification


_DUPLICATE = {"00002", "00404"}  # duplicate file name, duplicate invoice


def _refuses_a_copy(session: UnitOfWork, invoice: Invoice, message: messages.Message) -> bool:
    """An NS about a re-sent copy for duplication only: about the copy, not the invoice
    (sdicoop-notes.md). The invoice stays 3 Inviata; the message is kept with the reason."""
    return _duplicate_refusal(message) and sdicoop_channel.was_resent(session, "invoice", invoice.id)


def _duplicate_refusal(message: messages.Message) -> bool:
    codes = {error["code"] for error in message.errors}
    return message.type == "NS" and bool(codes) and codes <= _DUPLICATE


def _adopted(session: UnitOfWork, message: messages.Message, clock: Clock) -> Invoice | None:
    """The invoice a message names by file name when its IdentificativoSdI was never recorded: the
    SDI took the file but its answer was lost (sdicoop-notes.md). The message settles it."""
    invoice = invoices.find_invoice(session, filename=message.filename, direction="out", lock=True)
    if invoice is None or invoice.handed_over_at is None:
        return None
    if invoice.sdi_id == message.sdi_id:
        return invoice  # the call's answer was recorded while this message waited for the lock
    if invoice.sdi_id is not None and not _from_the_first_copy(session, invoice, message):
        return None
    log.warning(
        "%s: IdentificativoSdI %s learnt from the SDI's %s", invoice.filename, message.sdi_id, message.type
    )
    sdicoop_channel.settle(session, "invoice", invoice.id, message.sdi_id, clock)
    if invoice.state == InvoiceState.PRESA_IN_CARICO:
        invoices.record_sent(session, invoice, message.sdi_id, clock.now(), clock)
    else:
        invoice.sdi_id = message.sdi_id
    return invoice


def _from_the_first_copy(session: UnitOfWork, invoice: Invoice, message: messages.Message) -> bool:
    """After a re-send the invoice holds the copy's IdentificativoSdI; a message naming the file
    under another id, other than the duplicate refusal of a copy, is about the transmission the
    SDI had all along: that id is the invoice's (the copy's refusal is kept aside)."""
    return not _duplicate_refusal(message) and sdicoop_channel.was_resent(session, "invoice", invoice.id)


def unmatched(
    session: UnitOfWork,
    filename: str,
    xml: bytes,
    message: messages.Message | None,
    reason: str,
    clock: Clock,
) -> None:
    """Keep a message that cannot be applied (never drop what the SDI delivered); once per file name."""
    if session.scalar(select(UnmatchedMessage.id).where(UnmatchedMessage.filename == filename)) is not None:
        return None
    now = clock.now()
    blob = blobs.store(session, filename, xml, None, now)
    session.add(
        UnmatchedMessage(
            filename=filename,
            type=message.type if message else None,
            sdi_id=message.sdi_id if message else None,
            nome_file=message.filename if message else None,
            reason=reason[:255],
            blob_id=blob.id,
            received_at=now,
        )
    )
    log.warning("SDI message %s kept aside: %s", filename, reason)
    return None


def _apply(
    session: UnitOfWork,
    invoice: Invoice,
    message: messages.Message,
    notification: Notification,
    batch: bool,
    clock: Clock,
) -> None:
    kind = f"NE-{message.esito}" if message.type == "NE" else message.type
    if kind.startswith("NE-") and batch:
        # One NE per invoice of a batch: the first decides the file's state, the others are
        # stored with their `number` (the per-invoice outcome) without a second transition.
        if invoice.state in (InvoiceState.ACCETTATA, InvoiceState.RIFIUTATA):
            return
    moved = invoices.safe_apply(
        session,
        invoice.id,
        _EVENTS[kind],
        key=notification.filename,
        clock=clock,
        sdi_errors=message.errors if message.type == "NS" else None,
        notification=notification,
    )
    if moved is not None and message.type == "RC" and message.delivered_at is not None:
        moved.delivered_at = message.delivered_at
        if moved.format == "FPA12":  # the PA's 15 days to answer, after which the SDI sends DT
            moved.outcome_deadline_at = message.delivered_at + received.OUTCOME_WINDOW


def _esito_rejected(session: UnitOfWork, invoice: Invoice, filename: str, clock: Clock) -> None:
    esito = session.scalar(select(EsitoCommittente).where(EsitoCommittente.invoice_id == invoice.id))
    if esito is not None and esito.status != "REJECTED":
        esito.status, esito.scarto_filename, esito.updated_at = "REJECTED", filename, clock.now()


# -- received invoices -----------------------------------------------------------------------


def receive_invoice(
    session: UnitOfWork, filename: str, content: bytes, metadata_xml: bytes, clock: Clock
) -> received.Delivery:
    """An invoice addressed to varco: deliver it to the client's account, or keep it aside."""
    metadata = read_message(metadata_xml, f"metadata of {filename}")
    if metadata.type != "MT":
        raise NotificationRefused(f"metadata of {filename}: expected MetadatiInvioFile, got {metadata.type}")
    existing = invoices.find_invoice(session, sdi_id=metadata.sdi_id, direction="in")
    if existing is not None:  # delivered before (a retry of the same transmission)
        return received.Delivery(invoice=existing)
    shelved = session.scalar(select(UnroutableInvoice).where(UnroutableInvoice.sdi_id == metadata.sdi_id))
    if shelved is not None:
        return received.Delivery(unroutable=shelved)
    report = received.read(content)
    client = report.summary.customer if report.summary else None
    account = received.recipient_for(session, client) if client else None
    if account is None:
        shelved = received.shelve(session, filename, content, metadata_xml, metadata, client, clock)
        return received.Delivery(unroutable=shelved)
    invoice = received.deliver(session, account, filename, metadata, content, metadata_xml, report, clock)
    return received.Delivery(invoice=invoice)
