"""Received invoices: routed by the client's VAT number or tax code, kept aside when nobody matches."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from tests.factories import bearer, make_account, sign_in
from tests.sdi.factories import (
    FIXTURES,
    assert_valid_messages,
    invoice,
    invoice_file,
    notifications,
    received_by,
    send_invoice,
    state,
    supplier_account,
    types,
    valid_vat,
)
from varco.core.blobs import Blob
from varco.core.db import unit_of_work
from varco.events.models import Event
from varco.invoices.states import InvoiceState as S
from varco.sdi import inbound, messages
from varco.sdi import received as routing
from varco.sdi.models import UnroutableInvoice
from varco.sdi.simulator.inject import inject
from varco.settings import get_settings


def outside_file(fixture: str = "FPR12.xml", **overrides) -> bytes:
    """A file from another intermediary (not varco's transmitter code)."""
    return invoice_file(
        fixture, transmitter=valid_vat(), progressivo=uuid.uuid4().hex[:5].upper(), **overrides
    )


def injected(content: bytes, clock, filename: str | None = None):
    with unit_of_work() as session:
        return inject(session, content, clock, filename)


def test_received_by_vat_number(db, clock, queue):
    vat = valid_vat()
    client = make_account(vat_code=vat)
    result = injected(outside_file(client_vat=vat), clock)
    assert result.errors == [] and result.delivery.invoice is not None
    [received] = received_by(client.id)
    assert (received.state, received.direction, received.sdi_id) == (S.RICEVUTA, "in", result.sdi_id)
    assert received.filename == result.filename
    assert received.receiver_vat == vat and received.sender_description == "SOCIETA' ALPHA SRL"
    assert received.outcome_deadline_at == clock.now() + routing.OUTCOME_WINDOW
    [(mt, content)] = notifications(received.id)
    assert mt.type == "MT" and mt.filename == result.filename.removesuffix(".xml") + "_MT_001.xml"
    meta = messages.parse(content)
    assert (meta.sdi_id, meta.recipient_code, meta.format) == (
        result.sdi_id,
        get_settings().recipient_code,
        "FPR12",
    )
    assert_valid_messages(received.id)
    with unit_of_work() as session:
        blob = session.get(Blob, received.blob_id)
        event = session.scalar(
            select(Event).where(Event.account_id == client.id, Event.type == "createInvoice")
        )
    assert blob.account_id == client.id
    assert event.payload["filename"] == received.filename and event.payload["statusDescription"] == "Ricevuta"
    assert (event.payload["notificationType"], event.payload["notificationFilename"]) == ("MT", mt.filename)


def test_received_by_tax_code(db, clock, queue):
    fiscal_code = valid_vat()  # a company's numeric tax code
    client = make_account(vat_code=valid_vat(), fiscal_code=fiscal_code)
    result = injected(
        outside_file("FPA12.xml", client_fiscal_code=fiscal_code, codice_destinatario=None), clock
    )
    [received] = received_by(client.id)
    assert received.sdi_id == result.sdi_id and received.format == "FPA12"


def test_tax_code_equal_to_an_account_vat_number_routes_too(db, clock, queue):
    vat = valid_vat()
    client = make_account(vat_code=vat)
    injected(outside_file(client_vat=None, client_fiscal_code=vat), clock)
    assert len(received_by(client.id)) == 1


def test_batch_is_received_with_its_invoices(db, clock, queue):
    vat = valid_vat()
    client = make_account(vat_code=vat)
    injected(outside_file("FPR12_batch.xml", client_vat=vat), clock)
    [received] = received_by(client.id)
    assert [b.position for b in received.bodies] == [1, 2]


def test_unroutable_is_kept_aside_then_redelivered(db, clock, queue):
    vat = valid_vat()
    result = injected(outside_file(client_vat=vat), clock)
    shelved = result.delivery.unroutable
    assert shelved is not None and vat in shelved.reason
    with unit_of_work() as session:
        assert [r.sdi_id for r in routing.list_unroutable(session) if r.id == shelved.id] == [result.sdi_id]
        routing.redeliver(session, clock)  # nobody has the VAT number yet
        assert session.get(UnroutableInvoice, shelved.id).invoice_id is None
    client = make_account(vat_code=vat)
    assert routing.redeliver_unroutable(clock) >= 1  # the periodic reconciler
    [received] = received_by(client.id)
    assert received.sdi_id == result.sdi_id
    assert types(received.id) == ["MT"]
    with unit_of_work() as session:
        row = session.get(UnroutableInvoice, shelved.id)
        assert (row.invoice_id, row.redelivered_at) == (received.id, clock.now())
    routing.redeliver_unroutable(clock)
    assert len(received_by(client.id)) == 1  # delivered once


def test_same_transmission_delivered_twice_is_one_invoice(db, clock, queue):
    vat = valid_vat()
    client = make_account(vat_code=vat)
    content = outside_file(client_vat=vat)
    result = injected(content, clock)
    [(_, mt)] = notifications(received_by(client.id)[0].id)
    with unit_of_work() as session:
        again = inbound.receive_invoice(session, result.filename, content, mt, clock)
    assert again.invoice.id == received_by(client.id)[0].id
    assert len(received_by(client.id)) == 1


def test_outside_file_failing_the_sdi_checks_is_discarded(db, clock, queue):
    vat = valid_vat()
    client = make_account(vat_code=vat)
    result = injected(outside_file("00400_line_without_natura.xml", client_vat=vat), clock)
    assert [e["code"] for e in result.errors] == ["00400"] and result.delivery is None
    official = (FIXTURES / "IT01234567890_FPR02.xml").read_bytes()  # XSD-invalid (SOURCES.md)
    xsd_invalid = injected(official, clock, "IT01234567890_FPR02.xml")
    assert xsd_invalid.errors[0]["code"] == "00200"  # the library's 0092 is the SDI's 00200
    assert received_by(client.id) == []


def test_bad_or_duplicate_file_names_are_refused(db, clock, queue):
    vat = valid_vat()
    make_account(vat_code=vat)
    assert injected(outside_file(client_vat=vat), clock, "not-a-name.xml").errors[0]["code"] == "00001"
    content = outside_file(client_vat=vat)
    first = injected(content, clock)
    assert first.errors == []
    assert injected(content, clock, first.filename).errors[0]["code"] == "00002"


def test_invoice_to_our_recipient_code_from_a_varco_client_is_delivered_inside(db, clock, queue):
    sender = supplier_account()
    vat = valid_vat()
    client = make_account(vat_code=vat)
    ours = get_settings().recipient_code
    sent = send_invoice(
        sender, invoice_file(supplier_vat=sender.vat_code, client_vat=vat, codice_destinatario=ours)
    )
    queue.drain()
    assert state(sent.id) == S.CONSEGNATA
    [received] = received_by(client.id)
    assert received.sdi_id == sent.sdi_id and received.state == S.RICEVUTA
    # File names are unique per direction: the received copy keeps the SDI name.
    assert received.filename == sent.filename
    [(rc, content)] = notifications(sent.id)
    assert b'IntermediarioConDupliceRuolo="Si"' in content
    assert f"<Codice>{ours}</Codice>".encode() in content
    assert_valid_messages(sent.id)
    assert_valid_messages(received.id)
    assert invoice(sent.id).sdi_id == invoice(received.id).sdi_id


def test_invoice_to_a_client_that_is_a_varco_account_is_delivered_inside(db, clock, queue):
    sender = supplier_account()
    vat = valid_vat()
    client = make_account(vat_code=vat)
    sent = send_invoice(sender, invoice_file("FSM10.xml", supplier_vat=sender.vat_code, client_vat=vat))
    queue.drain()
    assert state(sent.id) == S.CONSEGNATA
    assert [r.sdi_id for r in received_by(client.id)] == [sent.sdi_id]


def test_invoice_to_our_code_for_an_unknown_client_is_delivered_and_kept_aside(db, clock, queue):
    sender = supplier_account()
    vat = valid_vat()
    ours = get_settings().recipient_code
    sent = send_invoice(
        sender, invoice_file(supplier_vat=sender.vat_code, client_vat=vat, codice_destinatario=ours)
    )
    queue.drain()
    assert state(sent.id) == S.CONSEGNATA  # the SDI delivered to varco's channel
    with unit_of_work() as session:
        row = session.scalar(select(UnroutableInvoice).where(UnroutableInvoice.sdi_id == sent.sdi_id))
    assert row is not None and row.invoice_id is None and vat in row.reason


def test_file_sent_between_varco_clients_has_its_sdi_name_on_both_sides(client, db, clock, queue):
    sender = supplier_account()
    vat = valid_vat()
    recipient = make_account(vat_code=vat)
    sent = send_invoice(sender, invoice_file(supplier_vat=sender.vat_code, client_vat=vat))
    queue.drain()
    [copy] = received_by(recipient.id)
    assert copy.filename == sent.filename and copy.sdi_id == sent.sdi_id and copy.id != sent.id
    stem = sent.filename.removesuffix(".xml")
    notes = "/services/notification/{}/getByFilename"
    sender_token, recipient_token = sign_in(client, sender.username), sign_in(client, recipient.username)

    def found(path, token, **params):
        response = client.get(path, params=params, headers=bearer(token))
        return response.status_code, response.json()

    # Each side finds its own copy by the shared name, in its direction only.
    for direction, token, expected in (("out", sender_token, sent.id), ("in", recipient_token, copy.id)):
        status, body = found(f"/api/v2/invoices-{direction}/detail", token, filename=sent.filename)
        assert (status, body["id"], body["filename"]) == (200, str(expected), sent.filename), body
        status, body = found(f"/services/invoice/{direction}/getByFilename", token, filename=sent.filename)
        assert (status, body["id"]) == (200, str(expected)), body
    assert found("/services/invoice/in/getByFilename", sender_token, filename=sent.filename)[0] == 404
    assert found("/services/invoice/out/getByFilename", recipient_token, filename=sent.filename)[0] == 404

    # The sender's notifications stay on the sent invoice; the MT on the received copy.
    assert types(sent.id) == ["RC"] and types(copy.id) == ["MT"]
    status, body = found(notes.format("out"), sender_token, filename=f"{stem}_RC_001.xml")
    assert status == 200 and body["filename"] == f"{stem}_RC_001.xml", body
    status, body = found(notes.format("in"), recipient_token, filename=f"{stem}_MT_001.xml")
    assert status == 200, body

    # The customer outcome names the real file; the NE reaches the sent invoice, not the copy.
    response = client.post(
        "/services/invoice/in/sendEsitoCommittente",
        json={"filename": sent.filename, "sdiId": sent.sdi_id, "esito": "EC01"},
        headers=bearer(recipient_token),
    )
    assert response.status_code == 200 and response.json()["esitoFileName"] == f"{stem}_EC_001.xml"
    queue.drain()
    assert state(sent.id) == S.ACCETTATA and types(sent.id) == ["RC", "NE"]
    assert state(copy.id) == S.RICEVUTA and types(copy.id) == ["MT", "EC"]
    status, body = found(notes.format("out"), sender_token, filename=f"{stem}_NE_001.xml")
    assert status == 200, body
    status, body = found(f"/services/invoice/in/sendEsitoCommittente/{sent.filename}", recipient_token)
    assert (status, body["status"]) == (200, "ACCEPTED"), body
