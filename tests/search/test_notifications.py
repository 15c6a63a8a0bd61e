"""Notifications of sent and received invoices: v1 and v2 paths, the notification record."""

from __future__ import annotations

from datetime import timedelta

from tests.invoices.support import invoice_xml
from tests.search.factories import assert_bad_request, notify, received, unb64, upload


def test_v1_and_v2_list_every_notification_of_an_invoice(client, clock, supplier):
    sent = upload(client, supplier)
    rc = notify(sent, "RC")
    clock.advance(timedelta(hours=1))
    ne = notify(sent, "NE", result="EC01")
    lists = [
        client.get(f"/services/notification/out/{sent.id}", headers=supplier.headers).json(),
        client.get(
            "/services/notification/out/getByInvoiceFilename",
            params={"invoiceFilename": sent.filename},
            headers=supplier.headers,
        ).json(),
        client.get(
            "/api/v2/invoices-out/notifications", params={"id": sent.id}, headers=supplier.headers
        ).json(),
        client.get(
            "/api/v2/invoices-out/notifications", params={"filename": sent.filename}, headers=supplier.headers
        ).json(),
    ]
    for body in lists:
        assert body["count"] == 2
        assert [n["filename"] for n in body["notifications"]] == [rc.filename, ne.filename]
    assert (lists[0]["errorCode"], lists[1]["errorCode"]) == ("0000", "0000")
    assert "errorCode" not in lists[2]
    first, second = lists[0]["notifications"]
    assert first == {
        "date": "2026-11-23T09:00:00.000+01:00",
        "docType": "RC",
        "file": first["file"],
        "filename": f"{sent.filename[:-4]}_RC_001.xml",
        "invoiceId": str(sent.id),
        "notificationDate": "2026-11-23T09:00:00.000+01:00",
        "number": None,
        "result": None,
    }
    assert b"<Notifica" in unb64(first["file"])
    assert (second["docType"], second["result"], second["date"]) == (
        "NE",
        "EC01",
        "2026-11-23T10:00:00.000+01:00",
    )


def test_one_notification_by_file_name(client, supplier):
    sent = upload(client, supplier, invoice_xml("FPR12_batch"))
    ne = notify(sent, "NE", result="EC02", number="2026/131")
    for url, query in (
        ("/services/notification/out/getByFilename", {"filename": ne.filename}),
        ("/api/v2/invoices-out/notifications/detail", {"filename": ne.filename}),
    ):
        body = client.get(url, params=query, headers=supplier.headers).json()
        assert (body["filename"], body["number"], body["result"], body["invoiceId"]) == (
            ne.filename,
            "2026/131",
            "EC02",
            str(sent.id),
        )
    missing = client.get(
        "/api/v2/invoices-out/notifications/detail", params={"filename": "nope.xml"}, headers=supplier.headers
    )
    assert missing.status_code == 404
    assert_bad_request(client.get("/api/v2/invoices-out/notifications/detail", headers=supplier.headers))
    # a notification of a sent invoice is not one of a received invoice
    other_side = client.get(
        "/services/notification/in/getByFilename", params={"filename": ne.filename}, headers=supplier.headers
    )
    assert other_side.status_code == 404


def test_no_notifications_is_an_empty_list(client, supplier):
    sent = upload(client, supplier)
    body = client.get(f"/services/notification/out/{sent.id}", headers=supplier.headers).json()
    assert (body["count"], body["notifications"]) == (0, [])
    body = client.get(
        "/api/v2/invoices-out/notifications", params={"id": sent.id}, headers=supplier.headers
    ).json()
    assert body == {"count": 0, "notifications": []}


def test_received_invoice_notifications(client, supplier):
    got = received(supplier.account)
    mt = notify(got, "MT")
    ec = notify(got, "EC", result="EC01")
    body = client.get(f"/services/notification/in/{got.id}", headers=supplier.headers).json()
    assert [(n["docType"], n["result"]) for n in body["notifications"]] == [("MT", None), ("EC", "EC01")]
    body = client.get(
        "/api/v2/invoices-in/notifications", params={"filename": got.filename}, headers=supplier.headers
    )
    assert [n["filename"] for n in body.json()["notifications"]] == [mt.filename, ec.filename]
    assert client.get(f"/services/notification/out/{got.id}", headers=supplier.headers).status_code == 404


def test_v2_notifications_need_exactly_one_identifier(client, supplier):
    sent = upload(client, supplier)
    url = "/api/v2/invoices-out/notifications"
    assert_bad_request(client.get(url, headers=supplier.headers), "exactly one of id, filename")
    assert_bad_request(
        client.get(url, params={"id": sent.id, "filename": sent.filename}, headers=supplier.headers)
    )
    assert_bad_request(
        client.get("/services/notification/out/getByInvoiceFilename", headers=supplier.headers),
        "invoiceFilename is required",
    )
