"""Invoices for SDI tests: files with fresh parties, and sent invoices built as the pipeline builds them."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from pathlib import Path

from lxml import etree
from sqlalchemy import select
from stdnum import luhn
from stdnum.it import iva

from tests.factories import make_account
from varco import fatturapa
from varco.accounts.models import Account
from varco.core import blobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices import filenames
from varco.invoices import service as invoices
from varco.invoices.models import Invoice, InvoiceBody, Notification
from varco.invoices.states import InvoiceEvent, InvoiceState
from varco.sdi import messages
from varco.sdi.channels import get_channel
from varco.settings import get_settings

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def valid_vat() -> str:
    """A fresh Italian VAT number (7 digits, office 001, Luhn check digit): no account has it."""
    base = f"{random.randrange(10**6, 10**7)}001"
    vat = base + luhn.calc_check_digit(base)
    assert iva.is_valid(vat)
    return vat


def unique_code() -> str:
    return "T" + uuid.uuid4().hex[:6].upper()


def _find(root: etree._Element, party: str, path: str) -> etree._Element | None:
    block = next(root.iter(party))
    return block.find(f".//{path}")


def invoice_file(
    fixture: str = "FPR12.xml",
    *,
    supplier_vat: str | None = None,
    client_vat: str | None = "fresh",
    client_fiscal_code: str | None = None,
    codice_destinatario: str | None = "fresh",
    transmitter: str | None = None,
    progressivo: str | None = None,
) -> bytes:
    """A fixture with unique invoice numbers and, by default, a fresh client and recipient code
    (so that no scenario rule or account of another test applies to it)."""
    root = etree.fromstring((FIXTURES / fixture).read_bytes())
    for number in root.iter("Numero"):
        if number.getparent().tag == "DatiGeneraliDocumento":
            number.text = f"N{uuid.uuid4().int % 10**9}"  # 00425: at least one digit
    if supplier_vat is not None:
        _find(root, "CedentePrestatore", "IdFiscaleIVA/IdCodice").text = supplier_vat
    client_id = _find(root, "CessionarioCommittente", "IdFiscaleIVA")
    if client_vat == "fresh":
        client_vat = valid_vat()
    if client_id is not None:
        if client_vat is None:
            client_id.getparent().remove(client_id)
        else:
            client_id.find("IdCodice").text = client_vat
    fiscal = _find(root, "CessionarioCommittente", "CodiceFiscale")
    if fiscal is not None:
        fiscal.text = client_fiscal_code or client_vat or valid_vat()
    code = next(root.iter("CodiceDestinatario"))
    if codice_destinatario == "fresh":
        codice_destinatario = unique_code()[: 6 if fixture.startswith("FPA12") else 7]
    if codice_destinatario is not None:
        code.text = codice_destinatario
    if transmitter is not None:
        next(root.iter("IdTrasmittente")).find("IdCodice").text = transmitter
    if progressivo is not None:
        next(root.iter("ProgressivoInvio")).text = progressivo
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def supplier_account(**overrides: object) -> Account:
    return make_account(vat_code=valid_vat(), **overrides)


@dataclass(frozen=True)
class Sent:
    id: int
    filename: str
    sdi_id: str


def send_invoice(account: Account, content: bytes, *, skip_extra_schema: bool = False) -> Sent:
    """A sent invoice as the pipeline makes it: state 1 with blob and bodies, then in one
    transaction the channel's `send_invoice` and the move to 3 Inviata (invoices.processing)."""
    report = fatturapa.check_sync(content, fatturapa.CheckOptions(skip_extra_schema=True))
    assert report.accepted, report.errors
    summary = report.summary
    clock = current_clock()
    with unit_of_work() as session:
        now = clock.now()
        name = filenames.next_filename(session, get_settings().transmitter_id, signed=False)
        blob = blobs.store(session, name, content, account.id, now)
        invoice = Invoice(
            direction="out",
            filename=name,
            account_id=account.id,
            uploaded_by_id=account.id,
            charged_account_id=account.id,
            format=report.format,
            state=InvoiceState.PRESA_IN_CARICO.value,
            blob_id=blob.id,
            content_sha256=blob.sha256,
            skip_extra_schema=skip_extra_schema,
            codice_destinatario=summary.codice_destinatario,
            sender_country=summary.supplier.country,
            sender_vat=summary.supplier.vat_code,
            receiver_country=summary.customer.country,
            receiver_vat=summary.customer.vat_code,
            receiver_fiscal_code=summary.customer.fiscal_code,
            sdi_errors=[],
            created_at=now,
            updated_at=now,
            bodies=[
                InvoiceBody(position=i, document_type=b.document_type, number=b.number, invoice_date=b.date)
                for i, b in enumerate(summary.bodies, start=1)
            ],
        )
        invoices.add_invoice(session, invoice, now)
        invoice.sdi_id = get_channel().send_invoice(session, invoice, content, clock)
        invoices.apply_event(session, invoice.id, InvoiceEvent.SENT, key="process", clock=clock)
        return Sent(invoice.id, invoice.filename, invoice.sdi_id)


def invoice(invoice_id: int) -> Invoice:
    with unit_of_work() as session:
        found = session.get(Invoice, invoice_id)
        assert found is not None
        found.bodies  # noqa: B018 - load before the session closes
        return found


def state(invoice_id: int) -> InvoiceState:
    return InvoiceState(invoice(invoice_id).state)


def notifications(invoice_id: int) -> list[tuple[Notification, bytes]]:
    """(notification, file content) in arrival order."""
    with unit_of_work() as session:
        rows = session.scalars(
            select(Notification).where(Notification.invoice_id == invoice_id).order_by(Notification.id)
        ).all()
        return [(row, session.get(blobs.Blob, row.blob_id).content) for row in rows]


def types(invoice_id: int) -> list[str]:
    return [n.type for n, _ in notifications(invoice_id)]


def received_by(account_id: int) -> list[Invoice]:
    with unit_of_work() as session:
        query = select(Invoice).where(Invoice.account_id == account_id, Invoice.direction == "in")
        rows = list(session.scalars(query.order_by(Invoice.id)))
        for row in rows:
            row.bodies  # noqa: B018
        return rows


def assert_valid_messages(invoice_id: int) -> None:
    """Every stored SDI message validates against MessaggiTypes v1.1 (and carries ds:Signature
    where the schema requires it)."""
    for notification, content in notifications(invoice_id):
        assert messages.validation_errors(content) == [], (notification.filename, content)
        if notification.type in messages.SIGNED:
            assert b"ds:Signature" in content
