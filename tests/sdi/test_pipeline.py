"""Through the real upload pipeline: POST /services/invoice/upload, then the workers, then the SDI."""

from __future__ import annotations

import base64

from sqlalchemy import select

from tests.factories import bearer, sign_in
from tests.sdi.factories import assert_valid_messages, invoice_file, state, supplier_account, types
from varco.core.db import unit_of_work
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState as S


def upload(client, account, content: bytes, **fields) -> Invoice:
    token = sign_in(client, account.username)
    body = {"dataFile": base64.b64encode(content).decode(), **fields}
    response = client.post("/services/invoice/upload", json=body, headers=bearer(token))
    assert response.status_code == 200 and response.json()["errorCode"] == "0000", response.text
    with unit_of_work() as session:
        return session.scalar(select(Invoice).where(Invoice.filename == response.json()["uploadFileName"]))


def test_uploaded_invoice_goes_from_1_to_7(client, queue):
    account = supplier_account()
    invoice = upload(client, account, invoice_file(supplier_vat=account.vat_code))
    assert invoice.state == S.PRESA_IN_CARICO
    queue.drain()  # processing (1 → 3, hand-off to the channel), then the simulated SDI (3 → 7)
    assert state(invoice.id) == S.CONSEGNATA
    assert types(invoice.id) == ["RC"]
    assert_valid_messages(invoice.id)


def test_skip_extra_schema_does_not_skip_the_sdi(client, queue):
    account = supplier_account()
    content = invoice_file("00400_line_without_natura.xml", supplier_vat=account.vat_code)
    invoice = upload(client, account, content, skipExtraSchema=True)
    queue.drain()
    assert state(invoice.id) == S.SCARTATA
    with unit_of_work() as session:
        refreshed = session.get(Invoice, invoice.id)
        assert refreshed.sdi_id is not None
        # (its N4 summary is then short of that line: the SDI's own 00422 too, docs/sdi-controls.md)
        assert [e["code"] for e in refreshed.sdi_errors] == ["00400", "00422"]
