"""Customer outcome on a received invoice (decisions.md), over HTTP on both databases."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from tests.factories import bearer, make_account, make_basic, sign_in
from tests.sdi.factories import (
    assert_valid_messages,
    invoice_file,
    notifications,
    received_by,
    send_invoice,
    state,
    supplier_account,
    types,
    valid_vat,
)
from varco.core.db import unit_of_work
from varco.invoices.states import InvoiceState as S
from varco.sdi import messages
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator.control import set_scenario
from varco.sdi.simulator.inject import inject

PATH = "/services/invoice/in/sendEsitoCommittente"


@pytest.fixture
def received(db, clock, queue):
    """A client account with one received invoice (from an outside sender), and its token."""
    vat = valid_vat()
    client = make_account(vat_code=vat)
    content = invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo=uuid.uuid4().hex[:5].upper())
    with unit_of_work() as session:
        inject(session, content, clock)
    [invoice] = received_by(client.id)
    return client, invoice


def post(client, token, **body):
    return client.post(PATH, json=body, headers=bearer(token))


def test_accepted_outcome(client, received, queue):
    account, invoice = received
    token = sign_in(client, account.username)
    response = post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["errorCode"] == "0000"
    assert body["esitoFileName"] == invoice.filename.removesuffix(".xml") + "_EC_001.xml"
    status = client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()
    assert (status["status"], status["esito"], status["sdiId"]) == ("SENT", "EC01", invoice.sdi_id)
    queue.drain()
    assert client.get(f"{PATH}/{body['esitoFileName']}", headers=bearer(token)).json()["status"] == "ACCEPTED"
    assert types(invoice.id) == ["MT", "EC"]
    ec = notifications(invoice.id)[1][1]
    assert messages.parse(ec).esito == "EC01"
    assert_valid_messages(invoice.id)


def test_refused_outcome_needs_a_description(client, received, queue):
    account, invoice = received
    token = sign_in(client, account.username)
    response = post(
        client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC02", descrizione=""
    )
    assert response.status_code == 400
    assert response.json()["errorCode"] == "0002" and "descrizione" in response.json()["errorDescription"]
    response = post(
        client,
        token,
        filename=invoice.filename,
        sdiId=invoice.sdi_id,
        esito="EC02",
        descrizione="Prezzo errato",
    )
    assert response.status_code == 200
    queue.drain()
    status = client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()
    assert (status["status"], status["descrizione"]) == ("ACCEPTED", "Prezzo errato")


def test_scenario_se_rejects_the_outcome(client, received, queue, clock):
    account, invoice = received
    with unit_of_work() as session:
        set_scenario(session, clock, filename=invoice.filename, esito_outcome="SE")
    token = sign_in(client, account.username)
    post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01")
    queue.drain()
    assert client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()["status"] == "REJECTED"
    assert types(invoice.id) == ["MT", "EC", "SE"]
    se, content = notifications(invoice.id)[2]
    assert se.filename == invoice.filename.removesuffix(".xml") + "_SE_001.xml"
    assert messages.parse(content).scarto == "EN01"
    assert_valid_messages(invoice.id)


def test_one_outcome_per_invoice(client, received, queue):
    account, invoice = received
    token = sign_in(client, account.username)
    assert (
        post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01").status_code == 200
    )
    again = post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01")
    assert again.status_code == 400 and "one per invoice" in again.json()["errorDescription"]


def test_fifteen_day_window(client, received, clock):
    account, invoice = received
    clock.advance(timedelta(days=15, seconds=1))
    token = sign_in(client, account.username)
    response = post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01")
    assert response.status_code == 400 and "15 days" in response.json()["errorDescription"]


def test_sdi_refuses_an_outcome_late_in_simulated_time(client, received, queue, clock):
    account, invoice = received
    with unit_of_work() as session:  # varco's own window (real clock) is still open
        sim_clock.advance(session, timedelta(days=16), clock)
    token = sign_in(client, account.username)
    assert (
        post(client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC01").status_code == 200
    )
    queue.drain()
    assert client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()["status"] == "REJECTED"


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"esito": None}, "missing required field(s): esito"),
        ({"filename": ""}, "missing required field(s): filename"),
        ({"esito": "EC03"}, "EC01"),
        ({"sdiId": "123"}, "is not the IdentificativoSdI"),
        ({"anno": "duemila"}, "anno"),
        ({"posizione": 2}, "posizione must be between 1 and 1"),
        ({"numero": "NOPE-1"}, "no invoice number"),
        ({"messageId": "x" * 15}, "messageId"),
    ],
)
def test_bad_input_is_a_coded_400(client, received, fields, fragment):
    account, invoice = received
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01", **fields}
    response = post(client, sign_in(client, account.username), **body)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "0002"
    assert fragment in response.json()["errorDescription"]


def test_numero_and_anno_reference_one_invoice(client, received, queue):
    account, invoice = received
    number = invoice.bodies[0].number
    token = sign_in(client, account.username)
    response = post(
        client,
        token,
        filename=invoice.filename,
        sdiId=invoice.sdi_id,
        esito="EC01",
        numero=number,
        anno="",
        posizione="",
    )
    assert response.status_code == 200, response.text
    status = client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()
    assert (status["numero"], status["anno"], status["posizione"]) == (number, 2026, None)
    ref = messages.parse(notifications(invoice.id)[1][1]).ref
    assert (ref.numero, ref.anno) == (number, 2026)


def test_only_the_owner_or_its_delegate(client, received, queue):
    account, invoice = received
    stranger = make_account()
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01"}
    response = post(client, sign_in(client, stranger.username), **body)
    assert response.status_code == 404 and response.json()["errorCode"] == "0002"
    assert (
        client.get(
            f"{PATH}/{invoice.filename}", headers=bearer(sign_in(client, stranger.username))
        ).status_code
        == 404
    )
    assert client.post(PATH, json=body).status_code == 401


def test_delegate_sends_for_the_assignor(client, db, clock, queue):
    premium = make_account(vat_code=valid_vat())
    vat = valid_vat()
    assignor = make_basic(delegate_to=premium, vat_code=vat)
    with unit_of_work() as session:
        inject(session, invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo="D1"), clock)
    [invoice] = received_by(assignor.id)
    response = post(
        client,
        sign_in(client, premium.username),
        filename=invoice.filename,
        sdiId=invoice.sdi_id,
        esito="EC01",
    )
    assert response.status_code == 200, response.text


def test_outcome_between_varco_clients_reaches_the_sender_as_ne(client, db, clock, queue):
    sender = supplier_account()
    vat = valid_vat()
    recipient = make_account(vat_code=vat)
    sent = send_invoice(sender, invoice_file(supplier_vat=sender.vat_code, client_vat=vat))
    queue.drain()
    [invoice] = received_by(recipient.id)
    token = sign_in(client, recipient.username)
    response = post(
        client, token, filename=invoice.filename, sdiId=invoice.sdi_id, esito="EC02", descrizione="No"
    )
    assert response.status_code == 200, response.text
    queue.drain()
    assert client.get(f"{PATH}/{invoice.filename}", headers=bearer(token)).json()["status"] == "ACCEPTED"
    assert state(sent.id) == S.RIFIUTATA
    assert types(sent.id) == ["RC", "NE"]
    ne, content = notifications(sent.id)[1]
    assert ne.result == "EC02" and messages.parse(content).description == "No"
    assert_valid_messages(sent.id)


def test_outcome_on_one_invoice_of_a_batch(client, db, clock, queue):
    vat = valid_vat()
    account = make_account(vat_code=vat)
    content = invoice_file("FPR12_batch.xml", client_vat=vat, transmitter=valid_vat(), progressivo="BT1")
    with unit_of_work() as session:
        inject(session, content, clock)
    [invoice] = received_by(account.id)
    second = invoice.bodies[1].number
    token = sign_in(client, account.username)
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01"}
    wrong = post(client, token, **body, numero=second, posizione=1)
    assert wrong.status_code == 400 and "no invoice number" in wrong.json()["errorDescription"]
    assert post(client, token, **body, numero=second, posizione=2, anno=2026).status_code == 200
    ec, content = notifications(invoice.id)[1]
    assert ec.number == second
    ref = messages.parse(content).ref
    assert (ref.numero, ref.anno, ref.posizione) == (second, 2026, 2)


def test_an_outcome_sent_twice_with_one_idempotency_key_is_sent_once(client, received, queue):
    account, invoice = received
    headers = bearer(sign_in(client, account.username)) | {"Idempotency-Key": uuid.uuid4().hex}
    body = {"filename": invoice.filename, "sdiId": invoice.sdi_id, "esito": "EC01"}
    first = client.post(PATH, json=body, headers=headers)
    again = client.post(PATH, json=body, headers=headers)  # without the key: "one outcome per invoice"
    assert first.status_code == again.status_code == 200 and again.json() == first.json()
    queue.drain()
    assert types(invoice.id) == ["MT", "EC"]
