"""preflightSdiControls (varco's addition): an account that asks gets the Exchange System's control
at upload, 0096 in the contract's shape, instead of the SDI's NS later; set through the API and the
panel; off by default, when the contract's answers are unchanged."""

from __future__ import annotations

import base64

from lxml import etree

from tests.factories import bearer, make_account, sign_in
from tests.panel.support import NEW_PASSWORD, csrf_of, panel_login
from tests.sdi.factories import invoice_file, state
from tests.sdi.test_sdi_controls import total_off_by
from varco.core.db import unit_of_work
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState as S

SETTINGS = "/api/v2/account/settings"


def post(client, token: str, content: bytes):
    body = {"dataFile": base64.b64encode(content).decode()}
    return client.post("/services/invoice/upload", json=body, headers=bearer(token)).json()


def test_the_setting_through_the_api(client):
    account = make_account()
    token = sign_in(client, account.username)
    assert client.get(SETTINGS, headers=bearer(token)).json() == {"preflightSdiControls": False}
    put = client.put(SETTINGS, json={"preflightSdiControls": True}, headers=bearer(token))
    assert (put.status_code, put.json()) == (200, {"preflightSdiControls": True})
    assert client.get(SETTINGS, headers=bearer(token)).json() == {"preflightSdiControls": True}
    for bad in ({}, {"preflightSdiControls": "maybe"}, {"preflightSdiControls": True, "other": 1}):
        refused = client.put(SETTINGS, json=bad, headers=bearer(token))
        assert refused.status_code == 400 and refused.json()["errorCode"] == "0002", refused.text
    assert client.get(SETTINGS).status_code == 401


def test_off_by_default_the_upload_answers_as_the_contract_says(client):
    account = make_account(vat_code="01234560017")
    token = sign_in(client, account.username)
    wrong = total_off_by(invoice_file(supplier_vat=account.vat_code), "2.00")
    assert post(client, token, wrong)["errorCode"] == "0000"


def test_on_a_wrong_total_is_refused_with_00423_and_nothing_is_stored(client):
    account = make_account(vat_code="01234560017")
    token = sign_in(client, account.username)
    client.put(SETTINGS, json={"preflightSdiControls": True}, headers=bearer(token))
    answer = post(client, token, total_off_by(invoice_file(supplier_vat=account.vat_code), "2.00"))
    assert answer["errorCode"] == "0096" and answer["uploadFileName"] is None
    assert "00423 - " in answer["errorDescription"]
    with unit_of_work() as session:
        assert session.query(Invoice).filter(Invoice.account_id == account.id).count() == 0
    assert post(client, token, invoice_file(supplier_vat=account.vat_code))["errorCode"] == "0000"


def test_on_an_invoice_sent_before_is_refused_with_00404(client, queue):
    account = make_account(vat_code="01234560017")
    token = sign_in(client, account.username)
    content = invoice_file(supplier_vat=account.vat_code)
    first = post(client, token, content)
    queue.drain()
    client.put(SETTINGS, json={"preflightSdiControls": True}, headers=bearer(token))
    again = etree.fromstring(content)
    again.find(".//Causale").text = "copia"
    answer = post(client, token, etree.tostring(again, xml_declaration=True, encoding="UTF-8"))
    assert answer["errorCode"] == "0096" and "00404 - " in answer["errorDescription"]
    with unit_of_work() as session:
        sent = (Invoice.filename == first["uploadFileName"], Invoice.direction == "out")
        stored = session.query(Invoice).filter(*sent).one()
    assert state(stored.id) == S.CONSEGNATA


def test_the_setting_through_the_panel(client):
    account = make_account()
    page = panel_login(client, account.username)
    settings = client.get("/panel/settings")
    assert 'id="sdi-controls"' in settings.text and "00423" in settings.text
    form = {"csrf_token": csrf_of(page.text), "enabled": "yes"}
    saved = client.post("/panel/settings/sdi-controls", data=form)
    assert saved.status_code == 200  # redirected back to the page
    section = client.get("/panel/settings").text.split('id="sdi-controls"')[1]
    assert 'name="enabled" value="yes" checked' in section
    forged = client.post("/panel/settings/sdi-controls", data={"csrf_token": "x", "enabled": ""})
    assert forged.status_code in (400, 403)
    token = sign_in(client, account.username, password=NEW_PASSWORD)  # changed at registration
    assert client.get(SETTINGS, headers=bearer(token)).json() == {"preflightSdiControls": True}
