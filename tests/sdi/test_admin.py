"""The simulator's admin API: operators only, same controls as the CLI."""

from __future__ import annotations

import base64
import uuid

import pytest

from tests.factories import bearer, make_account, sign_in
from tests.sdi.factories import (
    invoice_file,
    received_by,
    send_invoice,
    state,
    supplier_account,
    unique_code,
    valid_vat,
)
from varco.invoices.states import InvoiceState as S

BASE = "/api/v2/admin/sdi"


@pytest.fixture
def admin_token(client):
    admin = make_account(is_admin=True)
    return bearer(sign_in(client, admin.username))


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/scenarios"),
        ("post", "/scenarios"),
        ("delete", "/scenarios"),
        ("post", "/advance"),
        ("post", "/inject"),
        ("get", "/unroutable"),
        ("post", "/redeliver"),
    ],
)
def test_non_admins_get_403(client, method, path):
    token = bearer(sign_in(client, make_account().username))
    response = client.request(method, BASE + path, headers=token, json={})
    assert response.status_code == 403
    body = response.json()
    assert body["errorCode"] == "0012" and "operators" in body["errorDescription"]
    assert client.request(method, BASE + path, json={}).status_code == 401


def test_scenarios_set_list_and_delete(client, admin_token):
    code = unique_code()
    body = {"recipientCode": code, "outcome": "ne-ec02", "delay": "90s"}
    response = client.post(f"{BASE}/scenarios", json=body, headers=admin_token)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "kind": "recipient_code",
        "value": code,
        "outcome": "NE-EC02",
        "esitoOutcome": None,
        "delay": "1m30s",
    }
    listed = client.get(f"{BASE}/scenarios", headers=admin_token).json()
    assert {"kind": "recipient_code", "value": code}.items() <= next(
        r for r in listed["rules"] if r["value"] == code
    ).items()
    assert listed["offset"] == "0s"
    deleted = client.delete(f"{BASE}/scenarios", params={"recipientCode": code}, headers=admin_token)
    assert deleted.json() == {"deleted": 1}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"outcome": "RC"}, "exactly one"),
        ({"recipientCode": "X1", "filename": "f.xml", "outcome": "RC"}, "exactly one"),
        ({"recipientCode": "X1", "outcome": "LOST"}, "invalid outcome"),
        ({"recipientCode": "X1"}, "needs an outcome"),
        ({"recipientCode": "X1", "outcome": "RC", "delay": "soon"}, "invalid duration"),
        ({"recipientCode": "X1", "esitoOutcome": "MAYBE"}, "invalid esito outcome"),
    ],
)
def test_bad_scenarios_are_coded_400(client, admin_token, body, fragment):
    response = client.post(f"{BASE}/scenarios", json=body, headers=admin_token)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "0002" and fragment in response.json()["errorDescription"]


def test_advance_moves_simulated_time_and_runs_dt(client, admin_token, queue):
    code = unique_code()[:6]
    client.post(f"{BASE}/scenarios", json={"recipientCode": code, "outcome": "DT"}, headers=admin_token)
    account = supplier_account()
    sent = send_invoice(
        account, invoice_file("FPA12.xml", supplier_vat=account.vat_code, codice_destinatario=code)
    )
    queue.drain()
    assert state(sent.id) == S.CONSEGNATA
    response = client.post(f"{BASE}/advance", json={"duration": "15d"}, headers=admin_token)
    assert response.status_code == 200, response.text
    assert response.json()["offset"] == "15d" and response.json()["due"] >= 1
    queue.drain()
    assert state(sent.id) == S.DECORRENZA_TERMINI
    assert client.post(f"{BASE}/advance", json={"duration": "-1d"}, headers=admin_token).status_code == 400


def test_inject_delivers_or_keeps_aside(client, admin_token):
    vat = valid_vat()
    content = invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo=uuid.uuid4().hex[:5].upper())
    body = {"file": base64.b64encode(content).decode()}
    kept = client.post(f"{BASE}/inject", json=body, headers=admin_token).json()
    assert kept["status"] == "UNROUTABLE" and kept["unroutableId"]
    listed = client.get(f"{BASE}/unroutable", headers=admin_token).json()
    assert kept["sdiId"] in [row["sdiId"] for row in listed]
    account = make_account(vat_code=vat)
    redelivered = client.post(f"{BASE}/redeliver", json={}, headers=admin_token).json()
    assert kept["unroutableId"] in [row["id"] for row in redelivered]
    assert [r.sdi_id for r in received_by(account.id)] == [kept["sdiId"]]

    other = invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo="A1")
    delivered = client.post(
        f"{BASE}/inject", json={"file": base64.b64encode(other).decode()}, headers=admin_token
    )
    assert delivered.json()["status"] == "DELIVERED" and delivered.json()["username"] == account.username
    bad = client.post(f"{BASE}/inject", json={"file": "%%%"}, headers=admin_token)
    assert bad.status_code == 400 and bad.json()["errorCode"] == "0002"
    refused = invoice_file("00400_line_without_natura.xml", transmitter=valid_vat(), progressivo="A2")
    discarded = client.post(
        f"{BASE}/inject", json={"file": base64.b64encode(refused).decode()}, headers=admin_token
    )
    assert discarded.json()["status"] == "DISCARDED"
    assert discarded.json()["errors"][0]["code"] == "00400"
