"""GET /api/v2/invoices-{out,in}: the 10-day creation window, every filter, paging."""

from __future__ import annotations

from datetime import timedelta

from tests.invoices.support import SUPPLIER_VAT, invoice_xml, set_text
from tests.search.factories import (
    CLIENT_CODE,
    CLIENT_PATH,
    add_supplier_fiscal_code,
    assert_bad_request,
    filenames,
    move,
    received,
    search_v2,
    upload,
)
from varco.invoices.states import InvoiceEvent


def test_both_creation_dates_are_required(client, supplier):
    for query in ({"creationStartDate": "2026-11-20"}, {"creationEndDate": "2026-11-20"}, {}):
        response = client.get("/api/v2/invoices-out", params=query, headers=supplier.headers)
        assert_bad_request(response, "creationStartDate and creationEndDate are both required")
    response = search_v2(client, supplier, creationStartDate="")
    assert_bad_request(response, "both required")


def test_the_window_is_at_most_10_days(client, supplier):
    sent = upload(client, supplier).filename
    assert filenames(
        search_v2(client, supplier, creationStartDate="2026-11-14", creationEndDate="2026-11-23")
    ) == [sent]
    response = search_v2(client, supplier, creationStartDate="2026-11-13", creationEndDate="2026-11-23")
    assert_bad_request(response, "window 2026-11-13..2026-11-23 is longer than 10 days", "at most 10 days")
    response = search_v2(
        client, supplier, creationStartDate="2026-11-13T08:00:00Z", creationEndDate="2026-11-23T08:00:00Z"
    )
    assert response.status_code == 200  # exactly 10 days
    response = search_v2(
        client, supplier, creationStartDate="0001-01-01T00:00:00.0000000", creationEndDate="2026-11-23"
    )
    assert_bad_request(response, "at most 10 days")
    assert_bad_request(
        search_v2(client, supplier, creationStartDate="2026-11-24", creationEndDate="2026-11-23")
    )
    assert_bad_request(search_v2(client, supplier, creationEndDate="tomorrow"), "creationEndDate", "tomorrow")


def test_creation_window_bounds(client, clock, supplier):
    first = upload(client, supplier).filename
    clock.advance(timedelta(days=3))
    second = upload(client, supplier).filename
    assert filenames(
        search_v2(client, supplier, creationStartDate="2026-11-24", creationEndDate="2026-11-30")
    ) == [second]
    window = {"creationStartDate": "2026-11-20T00:00:00Z", "creationEndDate": "2026-11-23T08:00:00.000Z"}
    assert filenames(search_v2(client, supplier, **window)) == [first]
    assert filenames(search_v2(client, supplier)) == [second, first]


def test_status_as_label_or_number(client, supplier):
    delivered = upload(client, supplier)
    move(delivered.id, InvoiceEvent.SENT, InvoiceEvent.RC)
    waiting = upload(client, supplier).filename
    for status in ("Consegnata", "consegnata", "7", " 7 "):
        assert filenames(search_v2(client, supplier, status=status)) == [delivered.filename]
    assert filenames(search_v2(client, supplier, status="Presa in carico")) == [waiting]
    assert filenames(search_v2(client, supplier, status="1")) == [waiting]
    assert filenames(search_v2(client, supplier, status="Scartata")) == []
    assert_bad_request(search_v2(client, supplier, status="Boh"), "status 'Boh' is unknown", "7 Consegnata")
    assert_bad_request(search_v2(client, supplier, status="99"), "unknown")


def test_status_labels_match_in_any_case_and_spacing(client, supplier):
    refused = move(upload(client, supplier).id, InvoiceEvent.CHECKS_FAILED).filename
    waiting = upload(client, supplier).filename
    for status in (
        "Errore elaborazione",
        "errore elaborazione",
        "ERRORE ELABORAZIONE",
        "Errore Elaborazione",
    ):
        assert filenames(search_v2(client, supplier, status=status)) == [refused], status
    for status in ("PRESA IN CARICO", "presa in carico", "Presa In Carico", " presa  in\tcarico "):
        assert filenames(search_v2(client, supplier, status=status)) == [waiting], status
    assert filenames(search_v2(client, supplier, "in", status="RICEVUTA")) == []
    assert_bad_request(search_v2(client, supplier, status="PRESAINCARICO"), "unknown", "1 Presa in carico")


def test_list_records_carry_channel_group_and_shop_name_as_null(client, supplier):
    upload(client, supplier)
    received(supplier.account)
    for direction in ("out", "in"):
        response = search_v2(client, supplier, direction)
        assert response.status_code == 200, response.text
        [record] = response.json()["content"]
        assert (record["channelGroup"], record["shopName"]) == (None, None)


def test_received_invoices_have_state_ricevuta(client, supplier):
    got = received(supplier.account).filename
    assert filenames(search_v2(client, supplier, "in", status="Ricevuta")) == [got]
    assert filenames(search_v2(client, supplier, "in", status="11")) == [got]
    assert filenames(search_v2(client, supplier, "in", status="Consegnata")) == []


def test_document_type(client, supplier):
    td01 = upload(client, supplier).filename
    td02 = upload(
        client, supplier, invoice_xml(edit=set_text(".//DatiGeneraliDocumento/TipoDocumento", "TD02"))
    ).filename
    assert filenames(search_v2(client, supplier, documentType="TD02")) == [td02]
    assert filenames(search_v2(client, supplier, documentType="td01")) == [td01]
    assert filenames(search_v2(client, supplier, documentType="TD04")) == []
    assert_bad_request(search_v2(client, supplier, documentType="invoice"), "documentType", "TD01")


def test_sender_and_receiver(client, supplier):
    plain = upload(client, supplier).filename
    other = upload(client, supplier, **{CLIENT_PATH: "12345670017", CLIENT_CODE: "12345670017"}).filename
    assert set(filenames(search_v2(client, supplier, senderCountry="IT", senderVatcode=SUPPLIER_VAT))) == {
        plain,
        other,
    }
    assert filenames(search_v2(client, supplier, senderVatcode="00000000000")) == []
    assert filenames(search_v2(client, supplier, receiverVatcode="12345670017")) == [other]
    assert filenames(search_v2(client, supplier, receiverFiscalcode="09876540015")) == [plain]
    assert filenames(search_v2(client, supplier, receiverCountry="it", receiverVatcode="09876540015")) == [
        plain
    ]
    assert filenames(search_v2(client, supplier, receiverCountry="DE")) == []
    # empty strings for unused optional fields are ignored
    empty = {
        "senderCountry": "",
        "receiverVatcode": "",
        "status": "",
        "documentType": "",
        "modifiedStartDate": "",
    }
    assert len(filenames(search_v2(client, supplier, **empty, modifiedEndDate=""))) == 2


def test_sender_tax_code(client, supplier):
    coded = upload(client, supplier, invoice_xml(edit=add_supplier_fiscal_code("RSSMRA80A01H501U"))).filename
    upload(client, supplier)
    assert filenames(search_v2(client, supplier, senderFiscalcode="RSSMRA80A01H501U")) == [coded]


def test_received_filters_on_the_sender(client, supplier):
    one = received(supplier.account, sender_vat="12345670017").filename
    received(supplier.account, sender_vat="07111110032")
    assert filenames(search_v2(client, supplier, "in", senderVatcode="12345670017")) == [one]


def test_modified_dates_come_as_a_pair(client, clock, supplier):
    early = upload(client, supplier)
    late = upload(client, supplier)
    clock.advance(timedelta(days=1))
    move(late.id, InvoiceEvent.SENT)  # lastUpdate moves to 2026-11-24
    pair = {"modifiedStartDate": "2026-11-24", "modifiedEndDate": "2026-11-24"}
    assert filenames(search_v2(client, supplier, **pair)) == [late.filename]
    pair = {"modifiedStartDate": "2026-11-23T00:00:00+01:00", "modifiedEndDate": "2026-11-23T23:59:59+01:00"}
    assert filenames(search_v2(client, supplier, **pair)) == [early.filename]
    for half in ({"modifiedStartDate": "2026-11-24"}, {"modifiedEndDate": "2026-11-24"}):
        assert_bad_request(search_v2(client, supplier, **half), "both modifiedStartDate and modifiedEndDate")
    assert_bad_request(
        search_v2(client, supplier, modifiedStartDate="2026-11-25", modifiedEndDate="2026-11-24"), "swap"
    )


def test_paging_invariants(client, clock, supplier):
    for _ in range(3):
        upload(client, supplier)
        clock.advance(timedelta(seconds=1))
    one, two = (search_v2(client, supplier, size=2, page=p).json() for p in (1, 2))
    assert (one["first"], one["last"], one["number"], one["numberOfElements"]) == (True, False, 1, 2)
    assert (two["first"], two["last"], two["number"], two["numberOfElements"]) == (False, True, 2, 1)
    assert (one["totalElements"], one["totalPages"], two["size"]) == (3, 2, 2)
    assert "errorCode" not in one  # the version-2 page has no error fields
    assert_bad_request(search_v2(client, supplier, size=2, page=3), "past the last page", "between 1 and 2")
    assert_bad_request(search_v2(client, supplier, size=1000), "size must be an integer between 1 and 100")
    empty = search_v2(client, supplier, senderCountry="ZZ").json()
    assert (empty["content"], empty["first"], empty["last"], empty["totalPages"]) == ([], True, True, 0)


def test_tolerant_dates_over_http(client, supplier):
    sent = upload(client, supplier).filename
    headers = {**supplier.headers, "Content-Type": "application/json"}  # some clients send it on GET
    url = (
        "/api/v2/invoices-out?creationStartDate=2026-11-22T00%3A00%3A00.0000000"
        "&creationEndDate=2026-11-23T10:00:00+01:00"
    )
    response = client.get(url, headers=headers)
    assert filenames(response) == [sent]
