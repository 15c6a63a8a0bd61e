"""Customer outcome (esito committente, decisions.md) on a received invoice.

The request stores the EC file and its record (status SENT) and enqueues the transmission; the
job hands it to the channel, whose answer makes it ACCEPTED, or REJECTED with the SE stored.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from sqlalchemy import or_, select

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.errors import BadRequest, NotFound
from varco.core.uow import UnitOfWork
from varco.invoices import service as invoices
from varco.invoices.models import Invoice
from varco.sdi import channels, messages
from varco.sdi.channel import OutcomeReceipt
from varco.sdi.models import EsitoCommittente
from varco.sdi.received import OUTCOME_WINDOW

log = logging.getLogger("varco.sdi.esito")

TRANSMIT = jobs.Task("sdi.transmit_esito", ("esito_id",))  # run by sdi.tasks.transmit_esito
ESITI = ("EC01", "EC02")
_BASIC_LATIN = re.compile(r"[\x20-\x7e]{1,20}")  # NumeroFattura_Type


class EsitoInputError(BadRequest):
    """Input parameter error."""


class EsitoNotFound(NotFound):
    """Received invoice not found."""


@dataclass(frozen=True)
class EsitoRequest:
    filename: str
    sdi_id: str
    esito: str
    numero: str | None = None
    anno: int | None = None
    posizione: int | None = None
    descrizione: str | None = None
    message_id: str | None = None


def may_access(session: UnitOfWork, caller: Account, account_id: int) -> bool:
    """Tenancy: the caller owns the account's invoices, or acts for it by ACTIVE delegation."""
    if caller.id == account_id:
        return True
    owner = accounts.get(session, account_id)
    if owner is None or not owner.vat_code:
        return False
    try:
        return accounts.taxpayer_for(session, caller, owner.country_code, owner.vat_code).id == owner.id
    except accounts.DelegationInvalid:
        return False


def _received_invoice(session: UnitOfWork, caller: Account, filename: str) -> Invoice:
    invoice = invoices.find_invoice(session, filename=filename, direction="in")
    if invoice is None or not may_access(session, caller, invoice.account_id):
        # The same answer for someone else's invoice: existence is not disclosed.
        raise EsitoNotFound(f"no received invoice named {filename!r} for this user")
    return invoice


def send_esito(session: UnitOfWork, caller: Account, request: EsitoRequest, clock: Clock) -> EsitoCommittente:
    """Validate and record a customer outcome; it is transmitted after the commit."""
    invoice = _received_invoice(session, caller, request.filename)
    _validate(session, invoice, request, clock)
    ref = _ref(invoice, request)
    xml = messages.serialize(
        messages.esito_committente(
            invoice.sdi_id or "", request.esito, ref, request.descrizione, request.message_id
        )
    )
    if errors := messages.validation_errors(xml):  # e.g. a value the schema's types refuse
        raise EsitoInputError(
            "the outcome does not fit the EsitoCommittente schema: " + "; ".join(errors[:3])
        )
    name = messages.message_name(
        invoice.filename, "EC", invoices.count_notifications(session, invoice.id, "EC") + 1
    )
    notification = invoices.add_notification(
        session,
        invoice,
        "EC",
        name,
        xml,
        clock,
        result=request.esito,
        number=ref.numero if ref and len(invoice.bodies) > 1 else None,
    )
    assert notification is not None
    now = clock.now()
    row = EsitoCommittente(
        invoice_id=invoice.id,
        sent_by_id=caller.id,
        filename=invoice.filename,
        sdi_id=invoice.sdi_id or "",
        esito=request.esito,
        numero=ref.numero if ref else None,
        anno=ref.anno if ref else None,
        posizione=request.posizione,
        descrizione=request.descrizione,
        message_id=request.message_id,
        esito_filename=name,
        blob_id=notification.blob_id,
        status="SENT",
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    session.flush()
    jobs.enqueue(session, TRANSMIT, key=f"sdi.esito:{row.id}", clock=clock, esito_id=row.id)
    return row


def _validate(session: UnitOfWork, invoice: Invoice, request: EsitoRequest, clock: Clock) -> None:
    if request.esito not in ESITI:
        raise EsitoInputError(f"esito must be EC01 (accepted) or EC02 (refused), not {request.esito!r}")
    if request.sdi_id != invoice.sdi_id:
        raise EsitoInputError(f"sdiId {request.sdi_id} is not the IdentificativoSdI of {invoice.filename}")
    if request.esito == "EC02" and not request.descrizione:
        raise EsitoInputError("descrizione is required to refuse an invoice (EC02)")
    if request.descrizione and len(request.descrizione) > 255:
        raise EsitoInputError("descrizione must be at most 255 characters")
    if request.message_id and len(request.message_id) > 14:
        raise EsitoInputError("messageId must be at most 14 characters")
    existing = session.scalar(
        select(EsitoCommittente.esito_filename).where(EsitoCommittente.invoice_id == invoice.id)
    )
    if existing is not None:
        raise EsitoInputError(
            f"an outcome was already sent for {invoice.filename} ({existing}): one per invoice"
        )
    deadline = invoice.outcome_deadline_at or (invoice.created_at + OUTCOME_WINDOW)
    if clock.now() > deadline:
        raise EsitoInputError(
            f"the 15 days to send an outcome on {invoice.filename} ended at {deadline.isoformat()}"
        )


def _ref(invoice: Invoice, request: EsitoRequest) -> messages.InvoiceRef | None:
    """RiferimentoFattura from numero/anno/posizione, checked against the invoices in the file."""
    if request.numero is None and request.anno is None and request.posizione is None:
        return None
    bodies = invoice.bodies
    if request.posizione is not None and not 1 <= request.posizione <= len(bodies):
        raise EsitoInputError(f"posizione must be between 1 and {len(bodies)} (invoices in the file)")
    if request.numero is None:
        if request.posizione is None:
            raise EsitoInputError("anno needs numero (the invoice number)")
        body = bodies[request.posizione - 1]
    else:
        if not _BASIC_LATIN.fullmatch(request.numero):
            raise EsitoInputError("numero must be 1-20 plain ASCII characters")
        candidates = [b for b in bodies if b.number == request.numero]
        if request.posizione is not None:
            candidates = [b for b in candidates if b.position == request.posizione]
        if not candidates:
            raise EsitoInputError(f"no invoice number {request.numero!r} in {invoice.filename}")
        body = candidates[0]
    year = body.invoice_date.year if body.invoice_date else None
    if request.anno is not None and year is not None and request.anno != year:
        raise EsitoInputError(f"anno {request.anno} is not the year of invoice {body.number} ({year})")
    return messages.InvoiceRef(body.number or "", request.anno or year or 0, request.posizione)


def get_esito(session: UnitOfWork, caller: Account, filename: str) -> EsitoCommittente:
    """The outcome sent on a received invoice, by the invoice's or the outcome's file name."""
    query = select(EsitoCommittente).where(
        or_(EsitoCommittente.filename == filename, EsitoCommittente.esito_filename == filename)
    )
    row = session.scalar(query.limit(1))
    if row is None:
        raise EsitoNotFound(f"no outcome sent for {filename!r}")
    invoice = invoices.find_invoice(session, filename=row.filename, direction="in")
    if invoice is None or not may_access(session, caller, invoice.account_id):
        raise EsitoNotFound(f"no outcome sent for {filename!r}")
    return row


def transmit(session: UnitOfWork, esito_id: int, clock: Clock) -> None:
    """Hand a recorded outcome to the channel and record its answer."""
    row = session.get(EsitoCommittente, esito_id, with_for_update=True, populate_existing=True)
    if row is None or row.status != "SENT":
        return  # answered already: a duplicate wake-up
    blob = session.get(blobs.Blob, row.blob_id)
    assert blob is not None
    receipt = channels.get_channel().send_outcome(session, row, blob.content, clock)
    if receipt is not None:  # else the channel records it when the SDI answers
        record_receipt(session, row, receipt, clock)


def record_receipt(session: UnitOfWork, row: EsitoCommittente, receipt: OutcomeReceipt, clock: Clock) -> None:
    """The SDI's answer to an outcome: accepted (ES01), or refused with a ScartoEsito (ES00)."""
    if row.status != "SENT":
        return  # answered already
    row.updated_at = clock.now()
    if receipt.accepted:
        row.status = "ACCEPTED"
        return
    row.status, row.scarto_filename = "REJECTED", receipt.scarto_filename
    invoice = invoices.find_invoice(session, filename=row.filename, direction="in")
    if invoice is not None and receipt.scarto_filename and receipt.scarto_xml:
        invoices.add_notification(session, invoice, "SE", receipt.scarto_filename, receipt.scarto_xml, clock)
    log.info("outcome %s refused by the SDI (%s)", row.esito_filename, receipt.scarto_filename)
