"""The SDICoop surfaces under an attacker's pass: varco's TrasmissioneFatture/RicezioneFatture and
the simulated SDI's face. Whatever arrives is a 400, a 413, a soap:Client Fault that stores nothing,
or, for a well-formed message that cannot be applied, an answer with the message kept aside; never
soap:Server ("could not be stored") while storage works, and memory bounded (a real server's peak
RSS). Each case reproduces a finding of the pass, or pins a refusal that held (docs/security.md)."""

from __future__ import annotations

import base64
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.live_server import LiveServer, live_server
from tests.sdi.factories import invoice_file, send_invoice, state, supplier_account
from varco.core.blobs import Blob
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices.states import InvoiceState as S
from varco.sdi import messages
from varco.sdi.models import SdiExchange, UnmatchedMessage, UnroutableInvoice
from varco.sdi.sdicoop import envelope
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import (
    FileSdI,
    FileSdIBase,
    FileSdIConMetadati,
    FileTrasmissione,
    Request,
    RichiestaEsito,
)
from varco.sdi.simulator import network, signing
from varco.sdi.simulator.soap import app as sim_app
from varco.sdi.simulator.soap import deliveries
from varco.sdi.simulator.soap.config import SimConfig

MB = 1024 * 1024
GROWTH_LIMIT_KB = 60 * 1024  # as tests/test_memory_bodies.py
TYPES_NS = "http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types"
XOP = 'xmlns:xop="http://www.w3.org/2004/08/xop/include"'
TRANSMITTER = "IT05555550028"
BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(b'<!ENTITY %c "%s">' % (c, (b"&%c;" % (c - 1)) * 10) for c in range(ord("b"), ord("j")))
    + b"]>"
)


# -- building hostile messages -------------------------------------------------------------------


def soap(payload: str, *, header: str = "", root_attributes: str = "", declaration: str = "") -> bytes:
    head = f"<soap:Header>{header}</soap:Header>" if header else ""
    return (
        f"{declaration}<soap:Envelope xmlns:soap={envelope.SOAP_ENV_NS!r}{root_attributes}>"
        f"{head}<soap:Body>{payload}</soap:Body></soap:Envelope>"
    ).encode()


def rc_payload(
    sdi_id: str = "123",
    name: str = "IT01234567890_00001_RC_001.xml",
    file: str | None = None,
    *,
    attributes: str = "",
    extra: str = "",
) -> str:
    """A ricevutaConsegna Body element as text, to be bent."""
    content = base64.b64encode(b"<x/>").decode() if file is None else file
    return (
        f'<t:ricevutaConsegna xmlns:t="{TYPES_NS}"{attributes}>{extra}'
        f"<IdentificativoSdI>{sdi_id}</IdentificativoSdI><NomeFile>{name}</NomeFile>"
        f"<File>{content}</File></t:ricevutaConsegna>"
    )


def multipart(*parts: bytes, boundary: bytes = b"B", close: bool = True) -> bytes:
    """Parts given with their headers (`Content-ID: <x>\\r\\n\\r\\ncontent`)."""
    body = b"".join(b"--" + boundary + b"\r\n" + part + b"\r\n" for part in parts)
    return body + (b"--" + boundary + b"--\r\n" if close else b"")


def mtom_root(include: str = f'<xop:Include {XOP} href="cid:file"/>', *, times: int = 1) -> bytes:
    """The root part of an MTOM RicevutaConsegna whose File is an xop:Include (in `times` elements)."""
    extra = "".join(f"<Extra>{include}</Extra>" for _ in range(times - 1))
    return b"Content-ID: <root>\r\n\r\n" + soap(rc_payload(file=include, extra=extra))


ATTRIBUTES = "".join(f' a{i}=""' for i in range(2_000))  # each an XSD error lxml would keep
UTF16 = "<?xml version='1.0' encoding='UTF-16'?>"
MTOM = 'multipart/related; type="application/xop+xml"; boundary="B"; start="<root>"'
XML = envelope.XML_CONTENT_TYPE


@dataclass(frozen=True)
class Case:
    body: bytes
    content_type: str = XML
    soap_action: bytes | None = None


HOSTILE: dict[str, Case] = {
    "billion laughs in the envelope": Case(BILLION_LAUGHS + soap(rc_payload(sdi_id="&i;"))),
    "external DTD": Case(b'<!DOCTYPE e SYSTEM "file:///etc/passwd">' + soap(rc_payload())),
    "external entity": Case(
        b'<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>' + soap(rc_payload("&x;"))
    ),
    "XInclude": Case(
        soap(rc_payload(name='<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd"/>'))
    ),
    "deep nesting": Case(soap("<a>" * 100_000 + "</a>" * 100_000)),
    "20,000 elements in the Header": Case(soap(rc_payload(), header="<h/>" * 20_000)),
    "2,000 attributes on the payload": Case(soap(rc_payload(attributes=ATTRIBUTES))),
    "2,000 attributes spaced out, in UTF-16": Case(
        soap(rc_payload(attributes=ATTRIBUTES.replace('=""', " = ''")), declaration=UTF16)
        .decode()
        .encode("utf-16")
    ),
    "UTF-7, where markup hides from a byte count": Case(
        soap(rc_payload(), declaration='<?xml version="1.0" encoding="UTF-7"?>')
    ),
    "UTF-32": Case(soap(rc_payload()).decode().encode("utf-32")),
    "declared UTF-16, sent as UTF-8": Case(
        soap(rc_payload(), declaration='<?xml version="1.0" encoding="UTF-16"?>')
    ),
    "an unknown encoding": Case(soap(rc_payload(), declaration='<?xml version="1.0" encoding="x-nope"?>')),
    "EBCDIC": Case(
        soap(rc_payload(), declaration='<?xml version="1.0" encoding="cp037"?>').decode().encode("cp037")
    ),
    "invalid UTF-8": Case(soap(rc_payload()).replace(b"IT01234567890", b"IT0123456789\xff")),
    "invalid base64": Case(soap(rc_payload(file="!!!!"))),
    "base64 without its padding": Case(soap(rc_payload(file="PHgvP"))),
    "IdentificativoSdI beyond 64 bits": Case(soap(rc_payload(sdi_id="9" * 40))),
    "NomeFile with path separators": Case(soap(rc_payload(name="../../../etc/passwd"))),
    "NomeFile with a NUL": Case(soap(rc_payload(name="IT01234567890&#0;_RC_001.xml"))),
    "NomeFile of 500 characters": Case(soap(rc_payload(name="A" * 500))),
    "SOAP 1.2": Case(
        soap(rc_payload()).replace(envelope.SOAP_ENV_NS.encode(), envelope.SOAP12_ENV_NS.encode())
    ),
    "two Bodies": Case(soap(rc_payload()).replace(b"</soap:Body>", b"</soap:Body><soap:Body/>")),
    "an operation of another service": Case(
        soap(rc_payload().replace("ricevutaConsegna", "fileSdIAccoglienza"))
    ),
    "SOAPAction garbage": Case(soap(rc_payload()), soap_action=b'"\xff\xfe urn:x\tnope"'),
    "Content-Type garbage": Case(soap(rc_payload()), content_type="\xff;;;=;=boundary"),
    "Content-Type of another kind": Case(soap(rc_payload()), content_type="application/json"),
    "empty body": Case(b""),
    "multipart without a boundary": Case(multipart(mtom_root()), content_type="multipart/related"),
    "multipart boundary of 200 characters": Case(
        multipart(mtom_root(), boundary=b"b" * 200), content_type=f"multipart/related; boundary={'b' * 200}"
    ),
    "multipart boundary never closed": Case(
        multipart(mtom_root(), b"Content-ID: <file>\r\n\r\nAAAA", close=False), content_type=MTOM
    ),
    "multipart with 1,000 parts": Case(multipart(mtom_root(), *[b"\r\nx"] * 1_000), content_type=MTOM),
    "multipart part header of 100 KB": Case(
        multipart(b"X-Junk: " + b"a" * 100_000 + b"\r\n" + mtom_root()), content_type=MTOM
    ),
    "xop:Include of a missing Content-ID": Case(multipart(mtom_root()), content_type=MTOM),
    "two parts with the same Content-ID": Case(
        multipart(mtom_root(), b"Content-ID: <file>\r\n\r\nAAA", b"Content-ID: <FILE>\r\n\r\nBBB"),
        content_type=MTOM,
    ),
    "one part included twice": Case(
        multipart(mtom_root(times=2), b"Content-ID: <file>\r\n\r\nAAA"), content_type=MTOM
    ),
    "an xop:Include beside text": Case(
        multipart(mtom_root(f'text<xop:Include {XOP} href="cid:file"/>'), b"Content-ID: <file>\r\n\r\nA"),
        content_type=MTOM,
    ),
    "a nested multipart as the root": Case(
        multipart(
            b"Content-ID: <root>\r\nContent-Type: multipart/related; boundary=C\r\n\r\n"
            b"--C\r\n\r\n<a/>\r\n--C--"
        ),
        content_type=MTOM,
    ),
    "a part in invalid base64": Case(
        multipart(mtom_root(), b"Content-ID: <file>\r\nContent-Transfer-Encoding: base64\r\n\r\n!!"),
        content_type=MTOM,
    ),
    "a start naming no part": Case(multipart(mtom_root()), content_type=MTOM.replace("<root>", "<nope>")),
}


# -- varco's endpoints -----------------------------------------------------------------------------


@pytest.fixture
def sdicoop(client: TestClient, configure) -> TestClient:
    """varco's app with /sdicoop open (as behind the TLS listener that checks the SDI's certificate)."""
    configure(sdicoop_inbound_open=True)
    return client


def post(client: TestClient, path: str, body: bytes, content_type: str, soap_action: bytes | None = None):
    headers = {"content-type": content_type.encode("latin-1")}
    if soap_action is not None:
        headers["soapaction"] = soap_action
    return client.post(path, content=body, headers=headers)


def call(client: TestClient, service: Service, operation: str, payload: Request, *, as_mtom: bool = False):
    message = build_request(service, operation, payload, as_mtom=as_mtom)
    return client.post(f"/sdicoop/{service.value}", content=message.body, headers=message.headers())


def fault_code(answer: httpx.Response) -> str | None:
    fault = envelope.fault_of(envelope.read(answer.headers["content-type"], answer.content).payload)
    return fault.faultcode if fault else None


def assert_refused(answer: httpx.Response) -> None:
    """A 400/413, or a SOAP Fault that blames the caller (WS-I: with a 500)."""
    if answer.status_code == 500:
        assert fault_code(answer) in ("Client", "VersionMismatch"), answer.text
    else:
        assert answer.status_code in (400, 413), (answer.status_code, answer.text)


def stored() -> tuple[int, int, int]:
    with unit_of_work() as session:
        return (
            session.scalar(select(func.count(SdiExchange.id))) or 0,
            session.scalar(select(func.count(UnmatchedMessage.id))) or 0,
            session.scalar(select(func.count(Blob.id))) or 0,
        )


def kept_aside(filename: str) -> UnmatchedMessage:
    with unit_of_work() as session:
        row = session.scalars(select(UnmatchedMessage).where(UnmatchedMessage.filename == filename)).one()
        session.expunge(row)
        return row


@pytest.mark.parametrize("case", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_requests_are_refused_and_change_nothing(sdicoop, case: Case):
    before = stored()
    answer = post(sdicoop, "/sdicoop/TrasmissioneFatture", case.body, case.content_type, case.soap_action)
    assert_refused(answer)
    assert stored() == before


def test_the_refusals_say_what_is_wrong(sdicoop):
    def said(name: str) -> str:
        case = HOSTILE[name]
        answer = post(sdicoop, "/sdicoop/TrasmissioneFatture", case.body, case.content_type, case.soap_action)
        return answer.text

    assert "amplification" in said("billion laughs in the envelope")  # libxml2's own guard, before ours
    assert "a DTD is not allowed" in said("external entity")
    assert "more than 10000 elements" in said("20,000 elements in the Header")
    assert "more than 1000 attributes" in said("2,000 attributes on the payload")
    assert "more than 1000 attributes" in said("2,000 attributes spaced out, in UTF-16")
    assert "'UTF-7': send UTF-8 or UTF-16" in said("UTF-7, where markup hides from a byte count")
    assert "UTF-32" in said("UTF-32")
    assert "totalDigits" in said("IdentificativoSdI beyond 64 bits")
    assert "two parts have the Content-ID" in said("two parts with the same Content-ID")
    assert "names no part, or a part included already" in said("one part included twice")


def test_a_body_over_the_limit_is_413_and_nothing_is_stored(sdicoop, configure):
    configure(max_file_body_bytes=64 * 1024)
    before = stored()
    body = soap(rc_payload(file=base64.b64encode(b"x" * 100_000).decode()))
    answer = post(sdicoop, "/sdicoop/TrasmissioneFatture", body, XML)
    assert answer.status_code == 413
    answer = post(sdicoop, "/sdicoop/TrasmissioneFatture", multipart(mtom_root(), b"\r\n" + b"x" * MB), MTOM)
    assert answer.status_code == 413
    assert stored() == before


def signed(element) -> bytes:
    with unit_of_work() as session:
        return messages.serialize(signing.sign(session, element, current_clock()))


def rc_file(sdi_id: str, invoice_name: str, delivered: str | None = None) -> bytes:
    """The SDI's RicevutaConsegna, signed; DataOraConsegna replaced by `delivered` as sent."""
    now = current_clock().now()
    xml = signed(messages.ricevuta_consegna(sdi_id, invoice_name, now, now, ("ABC1234", "x"), "1"))
    if delivered is not None:
        start, end = (
            xml.index(b"<DataOraConsegna>") + len(b"<DataOraConsegna>"),
            xml.index(b"</DataOraConsegna>"),
        )
        xml = xml[:start] + delivered.encode() + xml[end:]
    return xml


def with_prolog(prolog: bytes, xml: bytes) -> bytes:
    return prolog + xml.split(b"?>", 1)[1]


@pytest.fixture
def sent(db, clock):
    account = supplier_account()
    return send_invoice(account, invoice_file(supplier_vat=account.vat_code))


NOTIFICATIONS = {
    # name: (the RC file, bent; what the reason kept says)
    "billion laughs": (
        lambda rc: with_prolog(BILLION_LAUGHS, rc.replace(b"<MessageId>1", b"<MessageId>&i;")),
        "amplification",
    ),
    "an external entity": (
        lambda rc: with_prolog(b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', rc),
        "DTD",
    ),
    "2,000 attributes": (
        lambda rc: rc.replace(b"<MessageId>", f"<MessageId{ATTRIBUTES}>".encode()),
        "attributes",
    ),
    "UTF-7": (lambda rc: rc.replace(b"encoding='UTF-8'", b"encoding='UTF-7'"), "UTF-7"),
    "not XML": (lambda rc: b"\x00\xff garbage", "not well-formed"),
    "an MT": (
        lambda rc: messages.serialize(
            messages.metadati("123", "IT01234567890_1.xml", "ABC1234", "FPR12", "1")
        ),
        "MT is not sent to a transmitter",
    ),
}
TIMES = {  # DataOraConsegna values the XSD's dateTime allows and Python's datetime cannot hold
    "year 10000": "10000-01-01T00:00:00",
    "hour 24": "2026-01-01T24:00:00",
    "year 9999 at -14:00, past UTC's end": "9999-12-31T23:59:59-14:00",
    "year 1 at +14:00, before UTC's start": "0001-01-01T00:00:00+14:00",
}


@pytest.mark.parametrize("name", NOTIFICATIONS)
def test_notification_files_that_cannot_be_read_are_kept_aside(sdicoop, sent, name):
    bend, reason = NOTIFICATIONS[name]
    file = bend(rc_file(sent.sdi_id, sent.filename))
    filename = messages.message_name(sent.filename, "RC", 1)
    answer = call(
        sdicoop, Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", FileSdI(int(sent.sdi_id), filename, file)
    )
    assert (answer.status_code, answer.content) == (202, b"")
    assert reason in kept_aside(filename).reason
    assert state(sent.id) == S.INVIATA


@pytest.mark.parametrize("delivered", TIMES.values(), ids=TIMES.keys())
@pytest.mark.parametrize("as_mtom", [False, True], ids=["inline", "mtom"])
def test_a_delivery_time_python_cannot_hold_is_kept_aside(sdicoop, sent, delivered, as_mtom):
    filename = messages.message_name(sent.filename, "RC", 1)
    payload = FileSdI(int(sent.sdi_id), filename, rc_file(sent.sdi_id, sent.filename, delivered))
    answer = call(sdicoop, Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", payload, as_mtom=as_mtom)
    assert answer.status_code == 202
    reason = kept_aside(filename).reason
    assert "DataOraConsegna" in reason or "isoformat" in reason or "hour must be" in reason, reason
    assert state(sent.id) == S.INVIATA


def test_leading_zeros_in_identificativo_sdi_name_the_same_invoice(sdicoop, sent):
    # 40 zeros: the XSD counts significant digits only; the key stored and looked up is canonical
    # (a 52-character IdentificativoSdI overflowed PostgreSQL's VARCHAR(32): soap:Server)
    padded = "0" * 40 + sent.sdi_id
    filename = messages.message_name(sent.filename, "RC", 1)
    payload = FileSdI(int(sent.sdi_id), filename, rc_file(padded, sent.filename))
    assert call(sdicoop, Service.TRASMISSIONE_FATTURE, "RicevutaConsegna", payload).status_code == 202
    assert state(sent.id) == S.CONSEGNATA
    body = soap(rc_payload(sdi_id="0" * 4_000 + "7", name=messages.message_name(sent.filename, "MC", 1)))
    assert post(sdicoop, "/sdicoop/TrasmissioneFatture", body, XML).status_code == 202  # kept aside
    with unit_of_work() as session:
        assert session.scalar(select(SdiExchange.sdi_id).order_by(SdiExchange.id.desc()).limit(1)) == "7"


def metadata(sdi_id: str, filename: str) -> bytes:
    return messages.serialize(messages.metadati(sdi_id, filename, "ABC1234", "FPR12", "1"))


def invoice_name() -> str:
    return f"IT01234567890_{uuid.uuid4().hex[:5].upper()}.xml"


def test_ricevi_fatture_whose_metadata_is_not_an_mt_is_kept_aside(sdicoop, clock):
    for metadati, reason in [
        (rc_file("555", "IT01234567890_1.xml"), "expected MetadatiInvioFile, got RC"),
        (b"<MetadatiInvioFile/>", "is not an SDI message"),
        (with_prolog(BILLION_LAUGHS, metadata("555", "x.xml")), "a DTD is not allowed"),
        (metadata("555", "x.xml").replace(b"<Formato>", f"<Formato{ATTRIBUTES}>".encode()), "attributes"),
    ]:
        name = invoice_name()
        payload = FileSdIConMetadati(555, name, b"<x/>", messages.message_name(name, "MT", 1), metadati)
        answer = call(sdicoop, Service.RICEZIONE_FATTURE, "RiceviFatture", payload)
        assert answer.status_code == 200 and b"<Esito>ER01</Esito>" in answer.content
        assert reason in kept_aside(name).reason


@pytest.mark.parametrize(
    "content",
    [
        b"\x00 not an invoice",
        b"",
        b"0\x82\xff\xff" + b"\x00" * 64,
        b"<p:FatturaElettronica/>",
        BILLION_LAUGHS + b"<r/>",
    ],
    ids=["garbage", "empty", "a broken p7m", "no body", "billion laughs"],
)
def test_ricevi_fatture_whose_file_is_not_an_invoice_is_shelved(sdicoop, content):
    name = invoice_name()
    sdi_id = str(next(IDS))
    mt = metadata("0" * 30 + sdi_id, name)  # zeros too: the key is canonical
    payload = FileSdIConMetadati(int(sdi_id), name, content, messages.message_name(name, "MT", 1), mt)
    answer = call(sdicoop, Service.RICEZIONE_FATTURE, "RiceviFatture", payload, as_mtom=True)
    assert answer.status_code == 200 and b"<Esito>ER01</Esito>" in answer.content
    with unit_of_work() as session:
        row = session.scalars(select(UnroutableInvoice).where(UnroutableInvoice.filename == name)).one()
        assert (row.sdi_id, row.reason) == (sdi_id, "the client (1.4) cannot be read")


IDS = iter(range(700_000_000_000, 800_000_000_000, 7919))  # per process: xdist workers have their own DB


@pytest.mark.parametrize(
    "path",
    [
        "/sdicoop/TrasmissioneFatture?xsd=../../../../etc/passwd",
        "/sdicoop/TrasmissioneFatture?xsd=/etc/passwd",
        "/sdicoop/TrasmissioneFatture?xsd=",
        "/sdicoop/TrasmissioneFatture?xsd=TrasmissioneTypes_v1.1.xsd%00",
        "/sdicoop/..%2F..%2F..%2Fetc%2Fpasswd.xsd",
        "/sdicoop/%2E%2E.xsd",
        "/sdicoop/%00.xsd",
        "/sdicoop/xmldsig-core-schema.xsd",  # packaged, but no WSDL imports it from here
        "/sdicoop/Nothing?wsdl",
    ],
)
def test_schema_requests_outside_the_published_files_are_404(sdicoop, path):
    answer = sdicoop.get(path)
    assert answer.status_code == 404
    assert b"root:" not in answer.content


@pytest.mark.parametrize(
    "query", ["wsdl", "WSDL=%ZZ", "wsdl=../../etc/passwd", "wsdl&xsd=x", "wsdl=" + "w" * 4000]
)
def test_odd_wsdl_queries_serve_the_wsdl(sdicoop, query):
    answer = sdicoop.get(f"/sdicoop/RicezioneFatture?{query}")
    assert answer.status_code == 200 and b"<wsdl:definitions" in answer.content
    assert sdicoop.get("/sdicoop/RicezioneFatture?wsdI").status_code == 405  # R1114: GET is ?wsdl only


# -- the simulated SDI -----------------------------------------------------------------------------


SIM_CONFIG = {
    "server": {"certificate": "c", "key": "k", "client_ca": "ca"},
    "client": {"certificate": "c", "key": "k", "ca_bundle": "ca"},
    "intermediaries": [
        {
            "name": "varco",
            "transmitter_ids": [TRANSMITTER],
            "trasmissione_fatture_url": "https://127.0.0.1:9/sdicoop/TrasmissioneFatture",
            "ricezione_fatture_url": "https://127.0.0.1:9/sdicoop/RicezioneFatture",
        }
    ],
}


@pytest.fixture
def sdi(db, queue, clock) -> Iterator[TestClient]:
    """The face in this process, configured with one intermediary (no TLS: nothing is delivered)."""
    config = SimConfig.model_validate(SIM_CONFIG)
    network.use(deliveries.SoapNetwork(config))
    try:
        with TestClient(sim_app.create_sdi_app(config)) as client:
            yield client
    finally:
        network.use(None)


SDI_PATHS = {
    Service.SDI_RICEVI_FILE: "/ricevi_file",
    Service.SDI_RICEVI_NOTIFICA: "/ricevi_notifica",
    Service.SDI_TRASMISSIONE_FILE: "/dati-fattura",
}


def sdi_call(sdi: TestClient, service: Service, operation: str, payload: Request) -> httpx.Response:
    message = build_request(service, operation, payload)
    return sdi.post(SDI_PATHS[service], content=message.body, headers=message.headers())


def answered(answer: httpx.Response, name: str) -> str | None:
    assert answer.status_code == 200, answer.text
    found = envelope.read(answer.headers["content-type"], answer.content).payload.find(name)
    return found.text if found is not None else None


def test_the_simulator_refuses_a_file_name_without_a_transmitter(sdi):
    for name in ["ABCDEFGHIJKL.xml", "IT99999999999_00001.xml", "_________"]:
        answer = sdi_call(sdi, Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(name, b"<x/>"))
        assert answered(answer, "Errore") == "EI03"


def test_the_simulator_answers_sf03_for_an_idfile_no_column_holds(sdi):
    # 15 digits are valid in the XSD; PostgreSQL's INTEGER key refused them: soap:Server
    for id_file in [999_999_999_999_999, 2**31, 2**31 - 1]:
        answer = sdi_call(sdi, Service.SDI_TRASMISSIONE_FILE, "Esito", RichiestaEsito(id_file))
        assert answered(answer, "Esito") == "SF03"


def ec_file(anno: str = "2026") -> bytes:
    xml = messages.serialize(
        messages.esito_committente("100000001", "EC01", messages.InvoiceRef("1", 2026), None, "1")
    )
    return xml.replace(b"<AnnoFattura>2026", f"<AnnoFattura>{anno}".encode())


@pytest.mark.parametrize(
    "file",
    [
        with_prolog(BILLION_LAUGHS, ec_file()),
        with_prolog(b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', ec_file()),
        ec_file().replace(b"<Esito>", f"<Esito{ATTRIBUTES}>".encode()),
    ],
    ids=["billion laughs", "external entity", "2,000 attributes"],
)
def test_the_simulator_refuses_an_outcome_it_cannot_read(sdi, file):
    before = stored()
    payload = FileSdI(100000001, f"{TRANSMITTER}_ZZZZZ_EC_001.xml", file)
    answer = sdi_call(sdi, Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", payload)
    assert fault_code(answer) == "Client" and answer.status_code == 500
    assert "cannot be read" in answer.text
    assert stored() == before


def test_the_simulator_answers_es00_to_an_outcome_that_is_no_ec(sdi):
    unreadable = [b"garbage", rc_file("100000001", f"{TRANSMITTER}_ZZZZZ.xml", "10000-01-01T00:00:00")[:-30]]
    for file in [*unreadable, ec_file("0" * 5_000 + "2026")]:  # the last: a year Python cannot hold
        payload = FileSdI(100000001, f"{TRANSMITTER}_ZZZZY_EC_001.xml", file)
        answer = sdi_call(sdi, Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", payload)
        assert answered(answer, "Esito") == "ES00"


def test_the_simulator_refuses_hostile_envelopes(sdi):
    for case in [
        HOSTILE[n]
        for n in (
            "2,000 attributes on the payload",
            "one part included twice",
            "UTF-7, where markup hides from a byte count",
        )
    ]:
        body = case.body.replace(b"ricevutaConsegna", b"fileSdIAccoglienza").replace(
            b"<IdentificativoSdI>123</IdentificativoSdI>", b""
        )
        assert_refused(post(sdi, "/ricevi_file", body, case.content_type))
    for path in [
        "/ricevi_file?xsd=../../etc/passwd",
        "/..%2Fetc%2Fpasswd.xsd",
        "/TrasmissioneTypes_v1.1.xsd%00",
    ]:
        assert sdi.get(path).status_code == 404


def test_the_simulator_refuses_a_body_over_its_limit(db, queue, clock, configure):
    configure(max_file_body_bytes=64 * 1024)  # read when the app is made
    app = sim_app.create_sdi_app(SimConfig.model_validate({**SIM_CONFIG, "intermediaries": []}))
    payload = FileTrasmissione(f"{TRANSMITTER}_LI_ZZZZZ.xml", "LI", b"x" * 100_000)
    before = stored()
    with TestClient(app) as client:
        assert sdi_call(client, Service.SDI_TRASMISSIONE_FILE, "Trasmetti", payload).status_code == 413
    assert stored() == before


# -- memory: a real `varco serve` -------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(
        tmp_path_factory.mktemp("sdicoop-hostile"), VARCO_SDICOOP_INBOUND_OPEN="true"
    ) as running:
        yield running


def _stream(server: LiveServer, path: str, total: int) -> bytes:
    """`total` bytes of chunked body; what the server answered (it may close before the end)."""
    head = f"POST {path} HTTP/1.1\r\nHost: {server.host}\r\nContent-Type: text/xml\r\n"
    piece = b"<a>" * (MB // 3)
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
        try:
            for _ in range(total // len(piece)):
                sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return answer


@pytest.mark.parametrize("service", ["TrasmissioneFatture", "RicezioneFatture"])
def test_a_200_mb_chunked_envelope_is_413_in_bounded_memory(server, service):
    before = server.reset_peak()
    answer = _stream(server, f"/sdicoop/{service}", 200 * MB)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB


BOMBS = {  # each within the body limit; before the fixes: 220 MB, 430 MB and 400 MB more peak RSS
    "1.7 million elements in the Header": (soap(rc_payload(), header="<h/>" * 1_700_000), XML),
    "300,000 attributes on the payload": (
        soap(rc_payload(attributes="".join(f' a{i}=""' for i in range(300_000)))),
        XML,
    ),
    "a 3 MB part included 100 times": (
        multipart(mtom_root(times=100), b"Content-ID: <file>\r\n\r\n" + b"x" * 3 * MB),
        MTOM,
    ),
}


@pytest.mark.parametrize("bomb", BOMBS.values(), ids=BOMBS.keys())
def test_an_envelope_bomb_is_refused_in_bounded_memory(server, bomb):
    body, content_type = bomb
    before = server.reset_peak()
    answer = httpx.post(
        f"{server.base}/sdicoop/TrasmissioneFatture",
        content=body,
        headers={"Content-Type": content_type},
        timeout=60,
    )
    assert answer.status_code in (400, 500) and b"soap:Server" not in answer.content, answer.text[:300]
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB
