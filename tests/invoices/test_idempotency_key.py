"""`Idempotency-Key` (varco's addition, docs/upload.md): a blind retry of an upload, an outcome or
a communication gets the first answer and does nothing twice; without the header the contract's
behaviour is unchanged."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest

from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from tests.invoices.test_upload import invoices_of, usage_of
from varco.invoices.states import InvoiceState


@pytest.fixture
def supplier(client):
    account = make_account(vat_code=SUPPLIER_VAT)
    return account, sign_in(client, account.username)


def post(client, token, body: dict, key: str | None, path: str = "/services/invoice/upload"):
    headers = bearer(token) | ({"Idempotency-Key": key} if key else {})
    return client.post(path, json=body, headers=headers)


def test_a_blind_retry_gets_the_first_answer_and_sends_nothing_twice(client, supplier, queue):
    account, token = supplier
    body, key = {"dataFile": b64(invoice_xml())}, str(uuid.uuid4())
    first = post(client, token, body, key)
    assert first.json()["errorCode"] == "0000", first.text
    queue.drain()  # the first reaches the SDI: the contract alone would now accept the same bytes again
    again = post(client, token, body, key)
    assert again.status_code == 200 and again.json() == first.json()
    [invoice] = invoices_of(account.id)
    assert invoice.state == InvoiceState.CONSEGNATA and usage_of(account.id) == 1


def test_the_same_key_for_another_body_is_409_and_changes_nothing(client, supplier):
    account, token = supplier
    key = str(uuid.uuid4())
    assert post(client, token, {"dataFile": b64(invoice_xml())}, key).json()["errorCode"] == "0000"
    other = post(client, token, {"dataFile": b64(invoice_xml())}, key)
    assert other.status_code == 409
    assert other.json()["errorCode"] == "0409" and other.json()["uploadFileName"] is None
    assert "Idempotency-Key" in other.json()["errorDescription"]
    assert len(invoices_of(account.id)) == 1


def test_without_the_header_the_contract_is_unchanged(client, supplier, queue):
    account, token = supplier
    body = {"dataFile": b64(invoice_xml())}
    assert post(client, token, body, None).json()["errorCode"] == "0000"
    queue.drain()
    assert post(client, token, body, None).json()["errorCode"] == "0000"  # a second transmission
    assert len(invoices_of(account.id)) == 2


def test_a_refused_request_is_not_remembered_and_keys_expire(client, supplier, clock):
    account, token = supplier
    key = str(uuid.uuid4())
    refused = post(client, token, {"dataFile": "not base64!"}, key)
    assert refused.json()["errorCode"] == "0098"
    fixed = post(client, token, {"dataFile": b64(invoice_xml())}, key)  # the same key, now valid
    assert fixed.json()["errorCode"] == "0000"
    clock.advance(timedelta(hours=24, seconds=1))
    token = sign_in(client, account.username)
    later = post(client, token, {"dataFile": b64(invoice_xml())}, key)  # past 24 h: a new request
    assert later.json()["errorCode"] == "0000" and later.json() != fixed.json()
    assert len(invoices_of(account.id)) == 2


@pytest.mark.parametrize("key", ["", "a b", "a\tb", "x" * 256])
def test_a_malformed_key_is_refused(client, supplier, key):
    _, token = supplier
    answer = client.post(
        "/services/invoice/upload",
        json={"dataFile": b64(invoice_xml())},
        headers=bearer(token) | {"Idempotency-Key": key},
    )
    assert answer.status_code == 400 and answer.json()["errorCode"] == "0002"


def test_two_copies_sent_at_once_make_one_invoice(client, supplier):
    account, token = supplier
    body, key = {"dataFile": b64(invoice_xml())}, str(uuid.uuid4())
    answers = []
    start = threading.Barrier(2)

    def send() -> None:
        start.wait()
        answers.append(post(client, token, body, key))

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].json() == answers[1].json() and answers[0].json()["errorCode"] == "0000"
    assert len(invoices_of(account.id)) == 1
