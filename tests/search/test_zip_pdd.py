"""ZIP of an invoice and its notifications; the preservation package (404 while not available)."""

from __future__ import annotations

import json

from tests.search.factories import assert_bad_request, move, notify, received, seal, upload, zip_names
from varco.invoices.states import InvoiceEvent


def test_zip_holds_the_invoice_and_every_notification_as_stored(client, supplier):
    sent = upload(client, supplier)
    rc = notify(sent, "RC")
    ne = notify(sent, "NE", result="EC01")
    stem = sent.filename[: -len(".xml")]
    responses = [
        client.get(
            "/services/invoice/out/getZipByFilename",
            params={"filename": sent.filename},
            headers=supplier.headers,
        ),
        client.get("/api/v2/invoices-out/zip", params={"id": sent.id}, headers=supplier.headers),
        client.get("/api/v2/invoices-out/zip", params={"filename": sent.filename}, headers=supplier.headers),
    ]
    for response in responses:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/zip"
        assert response.headers["content-disposition"] == f"attachment; filename={stem}.zip"
        files = zip_names(response.content)
        assert list(files) == [sent.filename, rc.filename, ne.filename]
        assert files[sent.filename].startswith(b"<?xml")
        assert b'tipo="NE"' in files[ne.filename]
    assert_bad_request(client.get("/services/invoice/out/getZipByFilename", headers=supplier.headers))
    assert_bad_request(client.get("/api/v2/invoices-out/zip", headers=supplier.headers), "exactly one")
    missing = client.get("/api/v2/invoices-in/zip", params={"id": sent.id}, headers=supplier.headers)
    assert missing.status_code == 404


def test_pdd_is_404_until_the_package_exists(client, supplier):
    sent = upload(client, supplier)
    urls = [
        ("/services/invoice/out/pdd", {"invoiceId": sent.id}),
        ("/services/invoice/out/pdd", {"invoiceFilename": sent.filename}),
        ("/api/v2/invoices-out/pdd", {"id": sent.id}),
        ("/api/v2/invoices-out/pdd", {"filename": sent.filename}),
    ]
    for url, query in urls:
        response = client.get(url, params=query, headers=supplier.headers)
        assert response.status_code == 404, response.text
        assert "not available yet" in response.json()["errorDescription"]
    move(sent.id, InvoiceEvent.SENT, InvoiceEvent.RC)
    rc = notify(sent, "RC")
    seal(sent.id)
    record = client.get(f"/services/invoice/out/{sent.id}", headers=supplier.headers).json()
    assert record["pddAvailable"] is True
    stem = sent.filename[: -len(".xml")]
    for url, query in urls:
        response = client.get(url, params=query, headers=supplier.headers)
        assert response.status_code == 200
        assert response.headers["content-disposition"] == f"attachment; filename={stem}.conservazione.zip"
        assert response.headers["accept-ranges"] == "bytes"
        files = zip_names(response.content)
        assert set(files) == {sent.filename, rc.filename, "index.json"}
        index = json.loads(files["index.json"])
        assert index["invoice"]["filename"] == sent.filename
    assert_bad_request(client.get("/services/invoice/out/pdd", headers=supplier.headers), "exactly one")


def test_received_invoice_pdd(client, supplier):
    got = received(supplier.account)
    seal(got.id)
    response = client.get(
        "/api/v2/invoices-in/pdd", params={"filename": got.filename}, headers=supplier.headers
    )
    assert response.status_code == 200
    assert got.filename in zip_names(response.content)
    response = client.get("/services/invoice/in/pdd", params={"invoiceId": got.id}, headers=supplier.headers)
    assert response.status_code == 200
