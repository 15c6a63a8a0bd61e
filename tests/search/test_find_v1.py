"""GET /services/invoice/{out,in}/findByUsername: records, paging, filters, the username rule."""

from __future__ import annotations

from datetime import timedelta

from tests.factories import make_basic
from tests.invoices.support import SUPPLIER_VAT, invoice_xml
from tests.search.factories import (
    CLIENT_CODE,
    CLIENT_PATH,
    add_supplier_fiscal_code,
    assert_bad_request,
    filenames,
    find_v1,
    move,
    premium,
    received,
    upload,
    user,
)
from varco.accounts.models import DelegationStatus
from varco.invoices.states import InvoiceEvent


def test_a_record_has_every_field_of_the_contract(client, supplier):
    sent = upload(client, supplier, invoice_xml(number="2026/77"))
    move(sent.id, InvoiceEvent.SENT, InvoiceEvent.RC, sdi_id="4242")
    body = find_v1(client, supplier).json()
    assert (body["errorCode"], body["errorDescription"]) == ("0000", "Operation done")
    [record] = body["content"]
    assert record == {
        "id": str(sent.id),
        "filename": sent.filename,
        "idSdi": "4242",
        "sender": {
            "description": "SOCIETA' ALPHA SRL",
            "countryCode": "IT",
            "vatCode": SUPPLIER_VAT,
            "fiscalCode": None,
        },
        "receiver": {
            "description": "DITTA BETA",
            "countryCode": "IT",
            "vatCode": "09876540015",
            "fiscalCode": "09876540015",
        },
        "invoiceType": "FPR12",
        "docType": "out",
        "username": supplier.account.username,
        "creationDate": "2026-11-23T09:00:00.000+01:00",
        "lastUpdate": "2026-11-23T09:00:00.000+01:00",
        "pddAvailable": False,
        "file": None,
        "pdfFile": None,
        "channelGroup": None,
        "shopName": None,
        "sdiErrors": [],
        "invoices": [
            {
                "invoiceDate": "2026-10-15T00:00:00.000+02:00",
                "number": "2026/77",
                "documentType": "TD01",
                "status": "Consegnata",
                "statusDescription": "Delivered to the recipient (RC)",
                "totalDocument": 266.88,
                "totalVat": 32.88,
                "netPayable": 266.08,
            }
        ],
    }


def test_a_batch_is_one_element_with_all_its_invoices(client, supplier):
    upload(client, supplier, invoice_xml("FPR12_batch"))
    body = find_v1(client, supplier).json()
    assert body["totalElements"] == 1
    assert [i["totalDocument"] is not None for i in body["content"][0]["invoices"]] == [True, True]


def test_pages_are_1_based_newest_first_and_never_overlap(client, clock, supplier):
    sent = []
    for _ in range(5):
        sent.append(upload(client, supplier).filename)
        clock.advance(timedelta(minutes=1))
    pages = [find_v1(client, supplier, page=p, size=2).json() for p in (1, 2, 3)]
    assert [[r["filename"] for r in p["content"]] for p in pages] == [sent[4:2:-1], sent[2:0:-1], sent[0:1]]
    assert [(p["number"], p["first"], p["last"], p["numberOfElements"]) for p in pages] == [
        (1, True, False, 2),
        (2, False, False, 2),
        (3, False, True, 1),
    ]
    assert {(p["size"], p["totalElements"], p["totalPages"]) for p in pages} == {(2, 5, 3)}


def test_defaults_are_page_1_of_10(client, supplier):
    upload(client, supplier)
    body = find_v1(client, supplier, page="", size="").json()  # empty strings mean "not given"
    assert (body["number"], body["size"], body["first"], body["last"]) == (1, 10, True, True)


def test_an_empty_result_is_one_empty_first_and_last_page(client, supplier):
    body = find_v1(client, supplier).json()
    assert body["content"] == [] and body["numberOfElements"] == 0
    assert (body["totalElements"], body["totalPages"], body["number"]) == (0, 0, 1)
    assert body["first"] is True and body["last"] is True


def test_out_of_range_page_and_size_say_what_to_change(client, supplier):
    upload(client, supplier)
    assert_bad_request(find_v1(client, supplier, page=2), "page 2 is past the last page", "between 1 and 1")
    assert_bad_request(find_v1(client, supplier, page=0), "page must be an integer 1 or more")
    assert_bad_request(find_v1(client, supplier, size=101), "size must be an integer between 1 and 100")
    assert_bad_request(find_v1(client, supplier, size=0), "size must be an integer between 1 and 100")
    assert_bad_request(find_v1(client, supplier, page="two"), "page must be an integer")


def test_start_and_end_dates_in_every_tolerated_form(client, clock, supplier):
    first = upload(client, supplier).filename  # 2026-11-23 09:00 Italian time
    clock.advance(timedelta(days=2))
    second = upload(client, supplier).filename  # 2026-11-25
    assert filenames(find_v1(client, supplier, startDate="2026-11-24")) == [second]
    assert filenames(find_v1(client, supplier, endDate="2026-11-23")) == [first]  # the whole day
    assert filenames(
        find_v1(client, supplier, startDate="2026-11-23T08:00:00Z", endDate="2026-11-23T08:00:00Z")
    ) == [first]
    assert filenames(find_v1(client, supplier, startDate="2026-11-23T09:00:01+01:00")) == [second]
    assert filenames(
        find_v1(
            client, supplier, startDate="0001-01-01T00:00:00.0000000", endDate="2026-11-23T23:59:59.9999999"
        )
    ) == [first]
    # a percent-encoded colon, as some clients send it (encoded once more on the way)
    assert filenames(find_v1(client, supplier, startDate="2026-11-25T00%3A00%3A00")) == [second]
    # an unencoded "+" of the offset arrives as a space
    response = client.get(
        "/services/invoice/out/findByUsername?endDate=2026-11-23T10:00:00+01:00", headers=supplier.headers
    )
    assert filenames(response) == [first]
    assert_bad_request(find_v1(client, supplier, startDate="23/11/2026"), "startDate", "accepted forms")
    assert_bad_request(find_v1(client, supplier, startDate="2026-11-25", endDate="2026-11-24"), "swap")


def test_sender_and_receiver_filters(client, supplier):
    plain = upload(client, supplier).filename
    other_client = upload(
        client, supplier, **{CLIENT_PATH: "12345670017", CLIENT_CODE: "12345670017"}
    ).filename
    with_code = upload(
        client, supplier, invoice_xml(edit=add_supplier_fiscal_code("RSSMRA80A01H501U"))
    ).filename
    every = {plain, other_client, with_code}
    assert set(filenames(find_v1(client, supplier, countrySender="it", vatcodeSender=SUPPLIER_VAT))) == every
    assert filenames(find_v1(client, supplier, fiscalcodeSender="rssmra80a01h501u")) == [with_code]
    assert filenames(find_v1(client, supplier, vatcodeReceiver="12345670017")) == [other_client]
    assert set(filenames(find_v1(client, supplier, fiscalcodeReceiver="09876540015"))) == {plain, with_code}
    assert filenames(find_v1(client, supplier, countryReceiver="FR")) == []
    assert set(filenames(find_v1(client, supplier, countryReceiver="IT", vatcodeSender=""))) == every


def test_sent_and_received_are_separate(client, supplier):
    sent = upload(client, supplier).filename
    got = received(supplier.account).filename
    assert filenames(find_v1(client, supplier, "out")) == [sent]
    [record] = find_v1(client, supplier, "in").json()["content"]
    assert (record["filename"], record["docType"], record["idSdi"] is not None) == (got, "in", True)
    assert record["invoices"][0]["status"] == "Ricevuta"
    assert record["receiver"]["vatCode"] == supplier.account.vat_code


def test_username_a_premium_user_may_name_a_delegated_user(client, supplier):
    assignor = make_basic(delegate_to=supplier.account, vat_code="12345670017")
    own = upload(client, supplier).filename
    theirs = upload(client, supplier, invoice_xml(supplier_vat="12345670017")).filename
    assert set(filenames(find_v1(client, supplier))) == {own, theirs}  # no username: everything visible
    assert filenames(find_v1(client, supplier, username=assignor.username)) == [theirs]
    assert filenames(find_v1(client, supplier, username=supplier.account.username)) == [own]
    basic = user(client, assignor)
    assert filenames(find_v1(client, basic)) == [theirs]
    assert filenames(find_v1(client, basic, username=assignor.username)) == [theirs]


def test_username_anything_else_is_403(client, supplier):
    pending = make_basic(delegate_to=supplier.account, status=DelegationStatus.PENDING)
    stranger = premium(client)
    assignor = user(client, make_basic(delegate_to=supplier.account))
    for name in (pending.username, stranger.account.username, "nobody-at-all"):
        response = find_v1(client, supplier, username=name)
        assert response.status_code == 403, response.text
        assert "has not delegated you" in response.json()["errorDescription"]
    response = find_v1(client, assignor, username=supplier.account.username)  # a basic user naming another
    assert response.status_code == 403
    assert "basic user can only search its own" in response.json()["errorDescription"]
