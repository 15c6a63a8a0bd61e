"""Inbound SOAP: every operation of both sides, inline base64 and MTOM, and the refusals."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from lxml import etree

from varco.sdi.sdicoop import envelope, server
from varco.sdi.sdicoop.contracts import Service, contract
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import (
    EsitoNotifica,
    FileSdI,
    FileSdIBase,
    FileSdIConMetadati,
    FileTrasmissione,
    Request,
    RichiestaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
)
from varco.sdi.sdicoop.schemas import data_file

# Bytes that a careless MIME or base64 round trip would alter: CR/LF at both ends, NUL, high bytes.
TRICKY = b"\r\n<?xml version='1.0'?><p:FatturaElettronica/>\r\n\x00\xff\n"
INVOICE_NAME = "IT01234567890_00001.xml"

INBOUND: list[tuple[Service, str, Request]] = [
    *[
        (Service.TRASMISSIONE_FATTURE, op, FileSdI(111222333, f"IT01234567890_00001_{kind}_001.xml", TRICKY))
        for op, kind in [
            ("RicevutaConsegna", "RC"),
            ("NotificaMancataConsegna", "MC"),
            ("NotificaScarto", "NS"),
            ("NotificaEsito", "NE"),
            ("NotificaDecorrenzaTermini", "DT"),
            ("AttestazioneTrasmissioneFattura", "AT"),
        ]
    ],
    (
        Service.RICEZIONE_FATTURE,
        "RiceviFatture",
        FileSdIConMetadati(999999999999, INVOICE_NAME, TRICKY, "IT01234567890_00001_MT_001.xml", b"<MT/>"),
    ),
    (
        Service.RICEZIONE_FATTURE,
        "NotificaDecorrenzaTermini",
        FileSdI(42, "IT01234567890_00001_DT_001.xml", b"x"),
    ),
    (Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(INVOICE_NAME, TRICKY)),
    (Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", FileSdI(7, "IT01234567890_00001_EC_001.xml", TRICKY)),
    (
        Service.SDI_TRASMISSIONE_FILE,
        "Trasmetti",
        FileTrasmissione("IT01234567890_DF_00001.xml", "DF", TRICKY),
    ),
    (Service.SDI_TRASMISSIONE_FILE, "Esito", RichiestaEsito(999999999999999)),
]


def _refusal(service: Service, content_type: str | None, body: bytes, **kwargs: object) -> server.SoapReply:
    with pytest.raises(server.SoapRequestRefused) as refused:
        server.parse_request(service, content_type, body, **kwargs)  # type: ignore[arg-type]
    return refused.value.reply


def _fault(reply: server.SoapReply) -> envelope.Fault:
    assert reply.status == 500
    assert reply.content_type and reply.content_type.startswith("text/xml")
    fault = envelope.fault_of(envelope.read(reply.content_type, reply.body).payload)
    assert fault is not None
    return fault


@pytest.mark.parametrize("as_mtom", [False, True], ids=["inline", "mtom"])
@pytest.mark.parametrize(
    ("service", "operation", "payload"), INBOUND, ids=[f"{s}.{o}" for s, o, _ in INBOUND]
)
def test_every_operation_parses_the_same_twice(
    service: Service, operation: str, payload: Request, as_mtom: bool
) -> None:
    message = build_request(service, operation, payload, as_mtom=as_mtom)
    assert (b"xop:Include" in message.body) == (as_mtom and not isinstance(payload, RichiestaEsito))
    first = server.parse_request(service, message.content_type, message.body, soap_action=message.soap_action)
    second = server.parse_request(
        service, message.content_type, message.body, soap_action=message.soap_action
    )
    assert first == second
    assert first.name == operation
    assert first.payload == payload
    assert first.is_mtom is as_mtom
    assert first.operation.is_one_way is (contract(service).operation(operation).output is None)


def _cxf_style_mtom(file: bytes, metadati: bytes) -> tuple[str, bytes]:
    """An MTOM request as other stacks write it: root not first, a base64 part, a URL-encoded cid,
    xmime:contentType on the element, nothing after the close delimiter."""
    xop = 'xmlns:xop="http://www.w3.org/2004/08/xop/include"'
    xml = (
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
        '<ns2:fileSdIConMetadati xmlns:ns2="http://www.fatturapa.gov.it/sdi/ws/ricezione/v1.0/types">'
        "<IdentificativoSdI>4321</IdentificativoSdI><NomeFile>IT01234567890_00002.xml</NomeFile>"
        '<File xmlns:xmime="http://www.w3.org/2005/05/xmlmime" xmime:contentType="application/octet-stream">'
        f'<xop:Include {xop} href="cid:file%401.sdi"/></File>'
        "<NomeFileMetadati>IT01234567890_00002_MT_001.xml</NomeFileMetadati>"
        f'<Metadati><xop:Include {xop} href="cid:meta@1.sdi"/>'
        "</Metadati></ns2:fileSdIConMetadati></soap:Body></soap:Envelope>"
    ).encode()
    b = "uuid:0a1b2c3d-0000-4000-8000-000000000001"
    body = (
        f"--{b}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n"
        f"Content-ID: <file@1.sdi>\r\n\r\n".encode()
        + file
        + f'\r\n--{b}\r\nContent-Type: application/xop+xml; charset=UTF-8; type="text/xml"\r\n'
        f"Content-Transfer-Encoding: binary\r\nContent-ID: <root.message@cxf.apache.org>\r\n\r\n".encode()
        + xml
        + f"\r\n--{b}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n"
        f"Content-ID: <meta@1.sdi>\r\n\r\n".encode()
        + base64.encodebytes(metadati)
        + f"\r\n--{b}--".encode()
    )
    content_type = (
        f'multipart/related; type="application/xop+xml"; boundary="{b}"; '
        'start="<root.message@cxf.apache.org>"; start-info="text/xml"'
    )
    return content_type, body


def test_mtom_from_another_stack() -> None:
    content_type, body = _cxf_style_mtom(TRICKY, b"<MetadatiInvioFile/>\n")
    for _ in range(2):
        call = server.parse_request(Service.RICEZIONE_FATTURE, content_type, body)
        assert call.payload == FileSdIConMetadati(
            4321,
            "IT01234567890_00002.xml",
            TRICKY,
            "IT01234567890_00002_MT_001.xml",
            b"<MetadatiInvioFile/>\n",
        )


def test_soap_action_is_checked_when_given() -> None:
    message = build_request(
        Service.TRASMISSIONE_FATTURE, "NotificaScarto", FileSdI(1, "IT01234567890_0_NS_001.xml", b"x")
    )
    for action in (None, '""', "", message.soap_action, message.soap_action.strip('"')):
        server.parse_request(
            Service.TRASMISSIONE_FATTURE, message.content_type, message.body, soap_action=action
        )
    other = contract(Service.TRASMISSIONE_FATTURE).operation("RicevutaConsegna").soap_action
    reply = _refusal(
        Service.TRASMISSIONE_FATTURE, message.content_type, message.body, soap_action=f'"{other}"'
    )
    fault = _fault(reply)
    assert fault.faultcode == "Client" and "RicevutaConsegna" in fault.faultstring


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/xml", b""),
        ("text/plain", b"hello"),
        ("application/json", b'{"NomeFile": "x"}'),
        ("text/xml", b"<notSoap/>"),
        ("text/xml", b"<soap:Envelope xmlns:soap='http://schemas.xmlsoap.org/soap/envelope/'>"),
        ("text/xml", b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><x>&b;</x>'),
        ('multipart/related; boundary="nope"', b"--other\r\n\r\nx\r\n--other--"),
    ],
    ids=["empty", "text", "json", "other-xml", "truncated", "dtd", "broken-multipart"],
)
def test_not_a_soap_envelope_is_400(content_type: str, body: bytes) -> None:
    reply = _refusal(Service.TRASMISSIONE_FATTURE, content_type, body)
    assert reply.status == 400
    assert reply.body.startswith(b"not a SOAP 1.1 request")


def test_entities_are_never_expanded() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE soap:Envelope [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>&x;</soap:Body>'
        b"</soap:Envelope>"
    )
    reply = _refusal(Service.TRASMISSIONE_FATTURE, "text/xml", body)
    assert reply.status == 400 and b"root:" not in reply.body


def test_too_large_is_413() -> None:
    message = build_request(Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(INVOICE_NAME, b"x" * 4096))
    reply = _refusal(Service.SDI_RICEVI_FILE, message.content_type, message.body, max_body_bytes=1024)
    assert reply.status == 413


def test_soap_12_is_a_version_mismatch_fault() -> None:
    body = (
        b'<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>'
        b"<x/></env:Body></env:Envelope>"
    )
    assert (
        _fault(_refusal(Service.TRASMISSIONE_FATTURE, "application/soap+xml", body)).faultcode
        == "VersionMismatch"
    )


def _ricevuta(**texts: str | None) -> bytes:
    """A ricevutaConsegna envelope with the given child texts (None: element left out)."""
    values = {"IdentificativoSdI": "123", "NomeFile": "IT01234567890_00001_RC_001.xml", "File": "PHgvPg=="}
    values.update(texts)  # type: ignore[arg-type]
    children = "".join(f"<{k}>{v}</{k}>" for k, v in values.items() if v is not None)
    return (
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
        f'<t:ricevutaConsegna xmlns:t="http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types">{children}'
        "</t:ricevutaConsegna></soap:Body></soap:Envelope>"
    ).encode()


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_ricevuta(NomeFile="a.xml"), "NomeFile"),  # shorter than 9
        (_ricevuta(NomeFile="IT0123 4567890_RC_001.xml"), "NomeFile"),  # space
        (_ricevuta(NomeFile="IT01234567890_00001_RC_001.xml/../x"), "NomeFile"),
        (_ricevuta(NomeFile="A" * 51), "NomeFile"),
        (_ricevuta(IdentificativoSdI="1234567890123"), "IdentificativoSdI"),  # 13 digits
        (_ricevuta(IdentificativoSdI="12a"), "IdentificativoSdI"),
        (_ricevuta(NomeFile=None), "NomeFile"),  # missing
        (_ricevuta(File=None), "File"),
        (_ricevuta(File="not base64!"), "File"),
        (_ricevuta(Extra="x"), "Extra"),
    ],
    ids=[
        "short-name",
        "space",
        "slash",
        "long-name",
        "13-digits",
        "not-a-number",
        "no-name",
        "no-file",
        "bad-base64",
        "extra",
    ],
)
def test_payload_not_matching_the_xsd_is_a_client_fault(body: bytes, needle: str) -> None:
    fault = _fault(_refusal(Service.TRASMISSIONE_FATTURE, "text/xml; charset=utf-8", body))
    assert fault.faultcode == "Client"
    assert needle in fault.faultstring and "RicevutaConsegna" in fault.faultstring


def test_twelve_digits_are_fine() -> None:
    call = server.parse_request(
        Service.TRASMISSIONE_FATTURE, "text/xml", _ricevuta(IdentificativoSdI="999999999999")
    )
    assert call.payload.identificativo_sdi == 999999999999  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "body",
    [
        _ricevuta().replace(b"ricevutaConsegna", b"ricevutaQualcosa"),  # no such element
        _ricevuta().replace(b"v1.0/types", b"v9.9/types"),  # wrong namespace
        build_request(
            Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(INVOICE_NAME, b"x")
        ).body,  # other service
    ],
    ids=["unknown-element", "wrong-namespace", "other-service"],
)
def test_unknown_operation_is_a_client_fault(body: bytes) -> None:
    fault = _fault(_refusal(Service.TRASMISSIONE_FATTURE, "text/xml", body))
    assert fault.faultcode == "Client" and "has no operation" in fault.faultstring


def test_body_with_two_elements_is_a_client_fault() -> None:
    body = _ricevuta().replace(b"</soap:Body>", b"<x/></soap:Body>")
    assert _fault(_refusal(Service.TRASMISSIONE_FATTURE, "text/xml", body)).faultcode == "Client"


def test_headers_are_ignored() -> None:
    body = _ricevuta().replace(
        b"<soap:Body>", b"<soap:Header><h:Trace xmlns:h='urn:x'>1</h:Trace></soap:Header><soap:Body>"
    )
    assert server.parse_request(Service.TRASMISSIONE_FATTURE, "text/xml", body).name == "RicevutaConsegna"


def test_server_fault_asks_to_send_again() -> None:
    fault = _fault(server.server_fault())
    assert fault.faultcode == "Server" and "again" in fault.faultstring


def test_get_without_wsdl_is_405() -> None:
    for query in ("", "foo=1"):
        reply = server.get_reply(
            Service.TRASMISSIONE_FATTURE, query, "https://varco.test/sdicoop/trasmissione"
        )
        assert reply.status == 405 and ("Allow", "GET, POST") in reply.headers
    assert server.method_not_allowed().status == 405


@pytest.mark.parametrize("service", list(Service))
@pytest.mark.parametrize("query", ["wsdl", "WSDL", "wsdl="])
def test_wsdl_has_only_its_address_rewritten(service: Service, query: str) -> None:
    address = "https://varco.test:8443/sdicoop/x?a=1&b=2"
    reply = server.get_reply(service, query, address)
    assert reply.status == 200
    official = data_file(contract(service).wsdl_file).read_bytes()
    root = etree.fromstring(reply.body)
    ns = {"s": "http://schemas.xmlsoap.org/wsdl/soap/"}
    assert root.xpath("//s:address/@location", namespaces=ns) == [address]
    old = etree.fromstring(official).xpath("//s:address/@location", namespaces=ns)[0]
    assert reply.body.replace(b"https://varco.test:8443/sdicoop/x?a=1&amp;b=2", old.encode()) == official


def test_imported_xsd_is_served_and_nothing_else() -> None:
    name = contract(Service.TRASMISSIONE_FATTURE).types_file
    reply = server.get_reply(Service.TRASMISSIONE_FATTURE, f"xsd={name}", "https://x")
    assert reply.status == 200 and reply.body == data_file(name).read_bytes()
    for other in ("../../../../etc/passwd", "xmldsig-core-schema.xsd", ""):
        assert server.get_reply(Service.TRASMISSIONE_FATTURE, f"xsd={other}", "https://x").status == 404


def test_one_way_reply_is_202_without_body() -> None:
    reply = server.one_way_reply()
    assert (reply.status, reply.body) == (202, b"")


def test_ricevi_fatture_reply_is_er01() -> None:
    reply = server.ricevi_fatture_reply()
    assert reply.status == 200
    payload = envelope.read(reply.content_type, reply.body).payload
    assert etree.QName(payload).localname == "rispostaRiceviFatture" and payload.findtext("Esito") == "ER01"


def test_answers_the_xsd_forbids_are_never_built() -> None:
    at = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    with pytest.raises(ValueError, match="IdentificativoSdI"):
        server.ricevi_file_reply(RispostaRiceviFile(10**12, at))
    with pytest.raises(ValueError, match="aware"):
        server.ricevi_file_reply(RispostaRiceviFile(1, datetime(2026, 11, 23, 8, 0)))
    with pytest.raises(ValueError, match="NomeFile"):
        server.notifica_esito_reply(RispostaNotificaEsito(EsitoNotifica.ES00, FileSdIBase("x", b"")))
    with pytest.raises(ValueError, match="IDFile"):
        server.trasmetti_reply(RispostaTrasmetti(0, at))
