"""E-mail receipt of received invoices: sent when the SDI delivers the invoice, once, with three files."""

from __future__ import annotations

import io
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from pyhanko.sign import signers
from pypdf import PdfReader
from sqlalchemy import select

from tests.factories import make_account
from tests.mail.conftest import Inbox
from tests.panel.support import panel_login
from tests.sdi.factories import invoice_file, notifications, received_by, valid_vat
from varco.core import jobs
from varco.core.coroutines import run_sync
from varco.core.db import unit_of_work
from varco.invoices.demo_signer import make_demo_pkcs12
from varco.mail import receipts
from varco.mail.models import MailAttachment, MailMessage, MailReceipt
from varco.sdi import messages
from varco.sdi.simulator.inject import inject


def receiving_account(clock) -> tuple[object, str]:
    """An account with e-mail receipt on, and the (unique) address it is sent to."""
    account = make_account(vat_code=valid_vat())
    address = f"fatture-{uuid.uuid4().hex[:8]}@example.it"
    with unit_of_work() as session:
        receipts.configure(session, account, enabled=True, address=address, clock=clock)
    return account, address


def outside_file(client_vat: str, **overrides: object) -> bytes:
    """An invoice from another intermediary to `client_vat`."""
    return invoice_file(
        transmitter=valid_vat(), progressivo=uuid.uuid4().hex[:5].upper(), client_vat=client_vat, **overrides
    )


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def outbox_of(account_id: int) -> list[MailMessage]:
    with unit_of_work() as session:
        return list(session.scalars(select(MailMessage).where(MailMessage.account_id == account_id)))


def test_a_received_invoice_is_mailed_at_once_with_file_pdf_and_metadata(db, clock, queue, smtp: Inbox):
    account, address = receiving_account(clock)
    content = outside_file(account.vat_code)
    with unit_of_work() as session:
        result = inject(session, content, clock)
    assert result.errors == []
    [invoice] = received_by(account.id)
    queue.drain()  # the delivery job was sent when the SDI transaction committed: no reconciler ran
    [email] = smtp.to(address)
    assert email["Subject"] == f"Fattura ricevuta {invoice.filename}"
    parts = list(email.iter_attachments())
    stem = invoice.filename.removesuffix(".xml")
    assert [p.get_filename() for p in parts] == [invoice.filename, f"{stem}.pdf", f"{stem}_MT_001.xml"]
    assert [p.get_content_type() for p in parts] == ["application/xml", "application/pdf", "application/xml"]
    xml, pdf, metadata = (p.get_content() for p in parts)
    assert xml == content  # the file as received
    text = pdf_text(pdf)
    assert "SOCIETA' ALPHA SRL" in text and account.vat_code in text
    assert all(body.number in text for body in invoice.bodies)
    [(mt, stored_mt)] = notifications(invoice.id)
    assert metadata == stored_mt and mt.type == "MT"
    assert messages.parse(metadata).sdi_id == result.sdi_id
    assert invoice.filename in email.get_body(("plain",)).get_content()


def test_the_receipt_is_sent_once(db, clock, queue, smtp: Inbox):
    account, address = receiving_account(clock)
    with unit_of_work() as session:
        inject(session, outside_file(account.vat_code), clock)
    queue.drain()
    # the safety-net reconciler finds nothing owed, duplicate wake-ups and the job reconciler send nothing
    receipts.queue_pending_receipts(clock)
    clock.advance(timedelta(minutes=10))
    jobs.reconcile(clock)
    queue.drain()
    assert len(smtp.to(address)) == 1
    [message] = outbox_of(account.id)
    assert message.key.startswith("receipt:") and message.transport == "smtp"
    with unit_of_work() as session:
        query = select(MailAttachment).where(MailAttachment.message_id == message.id)
        assert len(session.scalars(query).all()) == 3


def test_a_rolled_back_delivery_queues_no_mail(db, clock, queue, smtp: Inbox):
    account, address = receiving_account(clock)
    with pytest.raises(RuntimeError), unit_of_work() as session:
        inject(session, outside_file(account.vat_code), clock)
        raise RuntimeError("the SDI transaction fails after storing the invoice")
    queue.drain()
    assert smtp.to(address) == [] and outbox_of(account.id) == []
    with unit_of_work() as session:
        assert session.scalars(select(MailReceipt).where(MailReceipt.account_id == account.id)).all() == []


def test_no_mail_when_receipt_is_off(db, clock, queue, smtp: Inbox):
    account, address = receiving_account(clock)
    with unit_of_work() as session:
        receipts.configure(session, account, enabled=False, address=address, clock=clock)
    with unit_of_work() as session:
        inject(session, outside_file(account.vat_code), clock)
    queue.drain()
    assert smtp.to(address) == [] and outbox_of(account.id) == []


@pytest.fixture(scope="module")
def cades_signer() -> signers.SimpleSigner:
    pkcs12 = make_demo_pkcs12("Receipt Signer", datetime.now(UTC), password="p12-pw")  # noqa: TID251 - cert validity
    return signers.SimpleSigner.load_pkcs12_data(pkcs12, other_certs=[], passphrase=b"p12-pw")


def test_a_signed_invoice_is_attached_as_p7m(db, clock, queue, smtp: Inbox, cades_signer):
    account, address = receiving_account(clock)
    xml = outside_file(account.vat_code)
    cades = cades_signer.async_sign_general_data(xml, "sha256", detached=False, use_cades=True)
    signed = run_sync(cades).dump()
    with unit_of_work() as session:
        result = inject(session, signed, clock, f"IT{valid_vat()}_{uuid.uuid4().hex[:5].upper()}.xml.p7m")
    assert result.errors == [], result.errors
    [invoice] = received_by(account.id)
    queue.drain()
    [email] = smtp.to(address)
    parts = list(email.iter_attachments())
    stem = invoice.filename.removesuffix(".xml.p7m")
    assert [p.get_filename() for p in parts] == [invoice.filename, f"{stem}.pdf", f"{stem}_MT_001.xml"]
    assert parts[0].get_content_type() == "application/pkcs7-mime"
    assert parts[0].get_content() == signed  # with its signature, byte for byte
    assert all(body.number in pdf_text(parts[1].get_content()) for body in invoice.bodies)


def test_the_admin_outbox_lists_attachment_names(client, clock, queue):
    account, _ = receiving_account(clock)
    with unit_of_work() as session:
        inject(session, outside_file(account.vat_code), clock)
    [invoice] = received_by(account.id)
    panel_login(client, make_account(is_admin=True).username)
    html = client.get("/panel/admin").text
    stem = invoice.filename.removesuffix(".xml")
    assert f"{invoice.filename}<br>{stem}.pdf<br>{stem}_MT_001.xml" in html


def test_a_failed_sending_is_retried_and_the_message_arrives_once(db, clock, queue, smtp: Inbox):
    account, address = receiving_account(clock)
    smtp.refuse = 1  # the SMTP server is busy at the first attempt
    with unit_of_work() as session:
        inject(session, outside_file(account.vat_code), clock)
    queue.drain()
    assert smtp.to(address) == []
    [waiting] = outbox_of(account.id)
    assert waiting.delivered_at is None
    clock.advance(timedelta(minutes=10))  # the minute reconciler re-sends the failed job
    jobs.reconcile(clock)
    queue.drain()
    jobs.reconcile(clock)
    queue.drain()
    assert len(smtp.to(address)) == 1
    [sent] = outbox_of(account.id)
    assert sent.delivered_at is not None and sent.transport == "smtp"


def test_a_pdf_that_cannot_be_made_leaves_the_mail_without_it_and_says_so(db, clock, queue, smtp: Inbox):
    from varco.core import blobs
    from varco.mail import service as mail

    address = f"fatture-{uuid.uuid4().hex[:8]}@example.it"
    with unit_of_work() as session:
        unreadable = blobs.store(session, "IT1_BAD.xml", b"not xml at all", None, clock.now())
        mail.queue_message(
            session,
            key=f"test:{uuid.uuid4().hex}",
            account_id=None,
            to_address=address,
            subject="unreadable",
            body="body\n",
            clock=clock,
            attachments=[
                mail.Attachment("IT1_BAD.xml", "application/xml", blob_id=unreadable.id),
                mail.Attachment(
                    "IT1_BAD.pdf", "application/pdf", blob_id=unreadable.id, rendered_from="IT1_BAD.xml"
                ),
            ],
        )
    queue.drain()
    [email] = smtp.to(address)
    assert [p.get_filename() for p in email.iter_attachments()] == ["IT1_BAD.xml"]
    assert "IT1_BAD.pdf: the PDF could not be made" in email.get_body(("plain",)).get_content()
