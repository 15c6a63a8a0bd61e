"""zeep itself, on the official WSDLs, as a third-party client of server.py served by a tiny WSGI app:
the server is checked against the WSDL by code we did not write."""

from __future__ import annotations

import threading
import wsgiref.simple_server
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

import pytest
import requests
import zeep
import zeep.exceptions

from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.contracts import Service, contract
from varco.sdi.sdicoop.payloads import (
    EsitoNotifica,
    FileSdI,
    FileSdIBase,
    FileSdIConMetadati,
    FileTrasmissione,
    RichiestaEsito,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
    StatoFile,
)
from varco.sdi.sdicoop.schemas import data_file

TRICKY = b"\r\n<x>\xc3\xa8</x>\r\n\x00"
AT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
ROUTES = {f"/sdicoop/{service.value}": service for service in Service}
ANSWERS: dict[str, server.SoapReply] = {
    "RiceviFatture": server.ricevi_fatture_reply(),
    "RiceviFile": server.ricevi_file_reply(RispostaRiceviFile(1234, AT)),
    "NotificaEsito": server.notifica_esito_reply(
        RispostaNotificaEsito(EsitoNotifica.ES00, FileSdIBase("IT01234567890_00001_SE_001.xml", TRICKY))
    ),
    "Trasmetti": server.trasmetti_reply(RispostaTrasmetti(77, AT)),
    "Esito": server.esito_reply(
        RispostaEsito(StatoFile.SF02, FileSdIBase("IT01234567890_DF_1_ES_001.xml", TRICKY))
    ),
}


def _app(received: list[server.InboundCall]) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        service = ROUTES.get(path)
        if service is None and method == "GET":  # the XSD a ?wsdl imports, relative to the endpoint
            try:
                reply = server.SoapReply(200, "text/xml", server.schema_document(path.rsplit("/", 1)[-1]))
            except FileNotFoundError:
                reply = server.SoapReply(404, "text/plain", b"")
        elif service is None:
            reply = server.SoapReply(404, "text/plain", b"")
        elif method == "GET":
            address = f"http://{environ['HTTP_HOST']}{path}"
            reply = server.get_reply(service, environ.get("QUERY_STRING", ""), address)
        elif method == "POST":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            try:
                call = server.parse_request(
                    service, environ.get("CONTENT_TYPE"), body, soap_action=environ.get("HTTP_SOAPACTION")
                )
            except server.SoapRequestRefused as refused:
                reply = refused.reply
            else:
                received.append(call)
                reply = server.one_way_reply() if call.operation.is_one_way else ANSWERS[call.name]
        else:
            reply = server.method_not_allowed()
        headers = [*reply.headers, ("Content-Length", str(len(reply.body)))]
        if reply.content_type:
            headers.append(("Content-Type", reply.content_type))
        start_response(f"{reply.status} {HTTPStatus(reply.status).phrase}", headers)
        return [reply.body]

    return app


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[server.InboundCall]]]:
    received: list[server.InboundCall] = []
    httpd = wsgiref.simple_server.make_server("127.0.0.1", 0, _app(received), handler_class=_QuietHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", received
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


def _zeep_service(service: Service, base: str) -> Any:
    session = requests.Session()
    session.trust_env = False
    client = zeep.Client(
        str(data_file(contract(service).wsdl_file)), transport=zeep.Transport(session=session)
    )
    return client.create_service(contract(service).binding.text, f"{base}/sdicoop/{service.value}")


NOTIFICATIONS = [
    "RicevutaConsegna",
    "NotificaMancataConsegna",
    "NotificaScarto",
    "NotificaEsito",
    "NotificaDecorrenzaTermini",
    "AttestazioneTrasmissioneFattura",
]


@pytest.mark.parametrize("operation", NOTIFICATIONS)
def test_trasmissione_fatture_one_way(endpoint: tuple[str, list[server.InboundCall]], operation: str) -> None:
    base, received = endpoint
    proxy = _zeep_service(Service.TRASMISSIONE_FATTURE, base)
    name = f"IT01234567890_00001_{operation[:2].upper()}_001.xml"
    assert (
        getattr(proxy, operation)(IdentificativoSdI=999999999999, NomeFile=name, File=TRICKY) is None
    )  # 202
    [call] = received
    assert call.name == operation and call.payload == FileSdI(999999999999, name, TRICKY)


def test_ricezione_fatture(endpoint: tuple[str, list[server.InboundCall]]) -> None:
    base, received = endpoint
    proxy = _zeep_service(Service.RICEZIONE_FATTURE, base)
    answer = proxy.RiceviFatture(
        IdentificativoSdI=4321,
        NomeFile="IT01234567890_00002.xml",
        File=TRICKY,
        NomeFileMetadati="IT01234567890_00002_MT_001.xml",
        Metadati=b"<MetadatiInvioFile/>",
    )
    assert answer == "ER01"  # zeep unwraps a response of one element
    assert (
        proxy.NotificaDecorrenzaTermini(
            IdentificativoSdI=4321, NomeFile="IT01234567890_00002_DT_001.xml", File=b"<DT/>"
        )
        is None
    )
    assert [c.payload for c in received] == [
        FileSdIConMetadati(
            4321, "IT01234567890_00002.xml", TRICKY, "IT01234567890_00002_MT_001.xml", b"<MetadatiInvioFile/>"
        ),
        FileSdI(4321, "IT01234567890_00002_DT_001.xml", b"<DT/>"),
    ]


def test_simulated_sdi_side(endpoint: tuple[str, list[server.InboundCall]]) -> None:
    base, received = endpoint
    ricevi = _zeep_service(Service.SDI_RICEVI_FILE, base).RiceviFile(
        NomeFile="IT01234567890_00003.xml", File=TRICKY
    )
    assert (ricevi.IdentificativoSdI, ricevi.DataOraRicezione, ricevi.Errore) == (1234, AT, None)
    esito = _zeep_service(Service.SDI_RICEVI_NOTIFICA, base).NotificaEsito(
        IdentificativoSdI=1234, NomeFile="IT01234567890_00003_EC_001.xml", File=b"<EC/>"
    )
    assert (esito.Esito, esito.ScartoEsito.File) == ("ES00", TRICKY)
    dati = _zeep_service(Service.SDI_TRASMISSIONE_FILE, base)
    assert dati.Trasmetti(NomeFile="IT01234567890_DF_00001.xml", TipoFile="DF", File=TRICKY).IDFile == 77
    assert dati.Esito(IDFile=77).Notifica.File == TRICKY
    assert [c.payload for c in received] == [
        FileSdIBase("IT01234567890_00003.xml", TRICKY),
        FileSdI(1234, "IT01234567890_00003_EC_001.xml", b"<EC/>"),
        FileTrasmissione("IT01234567890_DF_00001.xml", "DF", TRICKY),
        RichiestaEsito(77),
    ]


def test_invalid_values_come_back_as_a_client_fault(endpoint: tuple[str, list[server.InboundCall]]) -> None:
    base, received = endpoint
    proxy = _zeep_service(Service.TRASMISSIONE_FATTURE, base)
    with pytest.raises(zeep.exceptions.Fault) as fault:
        proxy.RicevutaConsegna(IdentificativoSdI=10**12, NomeFile="IT01234567890_00001_RC_001.xml", File=b"x")
    assert fault.value.code == "soap:Client" and "IdentificativoSdI" in fault.value.message
    with pytest.raises(zeep.exceptions.Fault):
        proxy.NotificaScarto(IdentificativoSdI=1, NomeFile="short", File=b"x")
    assert received == []


def test_zeep_reads_our_wsdl_over_http(endpoint: tuple[str, list[server.InboundCall]]) -> None:
    base, received = endpoint
    session = requests.Session()
    session.trust_env = False
    client = zeep.Client(
        f"{base}/sdicoop/TrasmissioneFatture?wsdl", transport=zeep.Transport(session=session)
    )
    client.service.RicevutaConsegna(IdentificativoSdI=1, NomeFile="IT01234567890_00001_RC_001.xml", File=b"x")
    assert [c.name for c in received] == ["RicevutaConsegna"]  # sent to the rewritten address
    assert session.get(f"{base}/sdicoop/TrasmissioneFatture").status_code == 405
