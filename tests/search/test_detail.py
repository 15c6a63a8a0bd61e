"""One record: by file name, id or SDI id (v1 and v2), the file when asked, the unsigned XML."""

from __future__ import annotations

from tests.invoices.support import invoice_xml
from tests.search.factories import assert_bad_request, move, received, unb64, upload
from varco.core.db import unit_of_work
from varco.invoices.states import InvoiceEvent
from varco.search.archives import unsigned_xml


def stored(invoice) -> bytes:
    from varco.core.blobs import Blob

    with unit_of_work() as session:
        return session.get(Blob, invoice.blob_id).content


def test_v1_by_filename_with_and_without_the_file(client, supplier):
    sent = upload(client, supplier)
    url = "/services/invoice/out/getByFilename"
    plain = client.get(url, params={"filename": sent.filename}, headers=supplier.headers).json()
    assert (plain["id"], plain["filename"], plain["file"], plain["pdfFile"]) == (
        str(sent.id),
        sent.filename,
        None,
        None,
    )
    for flag in ("true", "True", "1"):
        query = {"filename": sent.filename, "includeFile": flag, "includePdf": "false"}
        body = client.get(url, params=query, headers=supplier.headers).json()
        assert unb64(body["file"]) == stored(sent)
    body = client.get(
        url, params={"filename": sent.filename, "includePdf": "true"}, headers=supplier.headers
    ).json()
    assert unb64(body["pdfFile"]).startswith(b"%PDF-")  # varco.rendering (issue 11)
    assert body["file"] is None  # includePdf alone does not include the XML
    assert_bad_request(client.get(url, headers=supplier.headers), "filename is required")
    assert_bad_request(
        client.get(url, params={"filename": sent.filename, "includeFile": "maybe"}, headers=supplier.headers),
        "includeFile must be true or false",
    )


def test_v1_unknown_file_is_404_in_the_coded_shape(client, supplier):
    response = client.get(
        "/services/invoice/out/getByFilename", params={"filename": "IT0_XXXXX.xml"}, headers=supplier.headers
    )
    assert response.status_code == 404
    body = response.json()
    assert (
        body["errorCode"] == "0002"
        and "no sent invoice with file name 'IT0_XXXXX.xml'" in body["errorDescription"]
    )


def test_v1_by_id_and_by_sdi_id(client, supplier):
    sent = move(upload(client, supplier).id, InvoiceEvent.SENT, sdi_id="777001")
    body = client.get(f"/services/invoice/out/{sent.id}", headers=supplier.headers).json()
    assert (body["filename"], body["idSdi"], body["invoices"][0]["status"]) == (
        sent.filename,
        "777001",
        "Inviata",
    )
    body = client.get(
        "/services/invoice/out/getByIdSdi",
        params={"idSdi": "777001", "includeFile": "true"},
        headers=supplier.headers,
    ).json()
    assert body["filename"] == sent.filename and unb64(body["file"]) == stored(sent)
    assert client.get(f"/services/invoice/in/{sent.id}", headers=supplier.headers).status_code == 404
    assert client.get("/services/invoice/out/999999999", headers=supplier.headers).status_code == 404


def test_v2_detail_takes_exactly_one_identifier(client, supplier):
    sent = move(upload(client, supplier).id, InvoiceEvent.SENT, sdi_id="777002")
    url = "/api/v2/invoices-out/detail"
    for query in ({"id": str(sent.id)}, {"filename": sent.filename}, {"idSdi": "777002"}):
        body = client.get(url, params=query, headers=supplier.headers).json()
        assert (body["id"], body["file"]) == (str(sent.id), None)
        assert "unsignedFile" not in body  # only received invoices have it
    body = client.get(url, params={"id": sent.id, "includeFile": "true"}, headers=supplier.headers).json()
    assert unb64(body["file"]) == stored(sent)
    assert_bad_request(
        client.get(url, headers=supplier.headers), "exactly one of id, filename, idSdi (0 given)"
    )
    both = {"id": sent.id, "filename": sent.filename}
    assert_bad_request(client.get(url, params=both, headers=supplier.headers), "(2 given)")
    assert_bad_request(
        client.get(url, params={"id": "abc"}, headers=supplier.headers), "id must be an integer"
    )
    assert client.get(url, params={"idSdi": "nope"}, headers=supplier.headers).status_code == 404


def test_detail_carries_channel_group_and_shop_name_as_null(client, supplier):
    sent = upload(client, supplier)
    got = received(supplier.account)
    for url, query in (
        ("/api/v2/invoices-out/detail", {"id": sent.id, "includeFile": "true"}),
        ("/api/v2/invoices-in/detail", {"filename": got.filename, "includeUnsignedFile": "true"}),
    ):
        response = client.get(url, params=query, headers=supplier.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["channelGroup"], body["shopName"]) == (None, None), url


def test_received_signed_file_comes_with_its_unsigned_xml(client, supplier, sign):
    xml = invoice_xml()
    got = received(supplier.account, data=xml, signed=sign(xml))
    assert got.filename.endswith(".xml.p7m")
    url = "/services/invoice/in/getInvoiceWithUnsignedFile"
    body = client.get(url, params={"invoiceId": got.id}, headers=supplier.headers).json()
    assert body["signed"] is True and body["file"] is None
    assert unb64(body["unsignedFile"]) == xml
    body = client.get(
        url, params={"filename": got.filename, "includeFile": "true"}, headers=supplier.headers
    ).json()
    assert unb64(body["file"]) == stored(got) and unb64(body["unsignedFile"]) == xml
    assert_bad_request(client.get(url, headers=supplier.headers), "exactly one of invoiceId, filename")

    v2 = "/api/v2/invoices-in/detail"
    body = client.get(v2, params={"id": got.id}, headers=supplier.headers).json()
    assert (body["signed"], body["unsignedFile"]) == (True, None)
    body = client.get(
        v2, params={"id": got.id, "includeUnsignedFile": "true"}, headers=supplier.headers
    ).json()
    assert unb64(body["unsignedFile"]) == xml


def test_received_unsigned_file_is_its_own_unsigned_xml(client, supplier):
    got = received(supplier.account)
    body = client.get(
        "/services/invoice/in/getInvoiceWithUnsignedFile",
        params={"invoiceId": got.id},
        headers=supplier.headers,
    ).json()
    assert body["signed"] is False and unb64(body["unsignedFile"]) == stored(got)


def test_a_xades_signature_is_removed_from_the_unsigned_xml():
    xml = invoice_xml()
    signature = (
        b'<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="s"><ds:SignedInfo/></ds:Signature>'
    )
    closing = xml.rindex(b"</")
    signed = xml[:closing] + signature + xml[closing:]
    result = unsigned_xml(signed)
    assert b"Signature" not in result and b"FatturaElettronicaBody" in result
    assert unsigned_xml(xml) == xml
