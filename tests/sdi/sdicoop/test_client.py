"""The client against a real HTTPS server with mutual TLS on 127.0.0.1, with the hostile environment."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from tests.sdi.sdicoop.servers import Close, RunningServer, Seen, Stall, serve
from varco.sdi.sdicoop import server, transport
from varco.sdi.sdicoop.client import ClientConfig, EndpointMissing, SdiClient
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.errors import MaybeReceived, NotReceived, Reason, SdiCallError
from varco.sdi.sdicoop.payloads import (
    DettaglioArchivio,
    ErroreEsito,
    ErroreInvio,
    EsitoNotifica,
    FileSdI,
    FileSdIBase,
    FileTrasmissione,
    RichiestaEsito,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
    StatoFile,
    TipoFile,
)
from varco.sdi.sdicoop.pki import KeyPair, TestPki

pytestmark = pytest.mark.usefixtures("hostile_env")

NAME = "IT01234567890_00001.xml"
TRICKY = b"\r\n<p:FatturaElettronica/>\r\n\x00\xff\n"
AT = datetime(2026, 11, 23, 9, 0, 0, 123000, tzinfo=timezone(timedelta(hours=1)))


@contextmanager
def sdi(
    pki: TestPki,
    handle: Callable[[Seen], object],
    *,
    timeout: float = 10.0,
    client_pair: KeyPair | None = None,
) -> Iterator[tuple[SdiClient, RunningServer]]:
    """A simulated SDI requiring client certificates of the test CA, and varco's client for it."""
    with serve(handle, cert=pki.sdi_server.cert, key=pki.sdi_server.key, client_ca=pki.ca.cert) as running:  # type: ignore[arg-type]
        pair = client_pair or pki.intermediaries_client["varco"]
        config = ClientConfig(
            cert_path=pair.cert,
            key_path=pair.key,
            ca_path=pki.ca.cert,
            ricevi_file_url=f"{running.url}/ricevi_file",
            ricevi_notifica_url=f"{running.url}/ricevi_notifica",
            trasmissione_file_url=f"{running.url}/dati-fattura",
            timeout_seconds=timeout,
        )
        with SdiClient(config) as client:
            yield client, running


def answering(reply: server.SoapReply) -> Callable[[Seen], server.SoapReply]:
    return lambda _: reply


def test_ricevi_file_success_uses_the_configured_ca_despite_the_environment(pki: TestPki) -> None:
    reply = server.ricevi_file_reply(RispostaRiceviFile(123456789012, AT))
    with sdi(pki, answering(reply)) as (client, running):
        result = client.ricevi_file(NAME, TRICKY)
    assert (result.identificativo_sdi, result.data_ora_ricezione, result.errore) == (123456789012, AT, None)
    [seen] = running.seen
    assert seen.path == "/ricevi_file"
    assert seen.headers["soapaction"] == '"http://www.fatturapa.it/SdIRiceviFile/RiceviFile"'
    # What zeep sent is what the simulated SDI parses, byte for byte the file.
    call = server.parse_request(
        Service.SDI_RICEVI_FILE,
        seen.headers["content-type"],
        seen.body,
        soap_action=seen.headers["soapaction"],
    )
    assert call.payload == FileSdIBase(NAME, TRICKY)
    assert result.exchange is not None
    assert result.exchange.request == seen.body and result.exchange.response == reply.body
    assert result.exchange.status == 200 and result.exchange.url.endswith("/ricevi_file")


def test_calls_close_together_share_one_connection_and_an_idle_one_is_not_reused(
    pki: TestPki, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A mutual-TLS handshake saved per call; but a connection idle for longer than REUSE_WITHIN may
    # be closing at the server's end as we write, and then "sent, no answer" would be ambiguous.
    reply = server.ricevi_file_reply(RispostaRiceviFile(123456789012, AT))
    with sdi(pki, answering(reply)) as (client, running):
        for _ in range(3):
            assert client.ricevi_file(NAME, TRICKY).identificativo_sdi == 123456789012
        monkeypatch.setattr(transport, "REUSE_WITHIN", 0.0)  # every connection is now "idle too long"
        for _ in range(2):
            assert client.ricevi_file(NAME, TRICKY).identificativo_sdi == 123456789012
    peers = [seen.peer for seen in running.seen]
    assert peers[0] == peers[1] == peers[2]
    assert len({peers[2], peers[3], peers[4]}) == 3


def test_a_connection_the_server_closed_is_not_reused(pki: TestPki) -> None:
    closing = server.ricevi_file_reply(RispostaRiceviFile(123456789012, AT))
    closing = replace(closing, headers=(*closing.headers, ("Connection", "close")))
    with sdi(pki, answering(closing)) as (client, running):
        for _ in range(2):
            assert client.ricevi_file(NAME, TRICKY).identificativo_sdi == 123456789012
    assert running.seen[0].peer != running.seen[1].peer


@pytest.mark.parametrize("errore", [ErroreInvio.EI01, ErroreInvio.EI02, ErroreInvio.EI03])
def test_ricevi_file_errors(pki: TestPki, errore: ErroreInvio) -> None:
    reply = server.ricevi_file_reply(RispostaRiceviFile(0, AT, errore))
    with sdi(pki, answering(reply)) as (client, _):
        result = client.ricevi_file(NAME, b"" if errore is ErroreInvio.EI01 else TRICKY)
    assert result.errore is errore


def test_an_error_answer_without_the_mandatory_id_is_still_read(pki: TestPki) -> None:
    body = (
        b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>'
        b'<t:rispostaSdIRiceviFile xmlns:t="http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types">'
        b"<Errore>EI02</Errore></t:rispostaSdIRiceviFile></s:Body></s:Envelope>"
    )
    with sdi(pki, answering(server.SoapReply(200, "text/xml", body))) as (client, _):
        result = client.ricevi_file(NAME, TRICKY)
    assert (result.errore, result.identificativo_sdi) == (ErroreInvio.EI02, None)


def test_a_success_without_identificativo_is_a_bad_answer(pki: TestPki) -> None:
    body = (
        b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>'
        b'<t:rispostaSdIRiceviFile xmlns:t="http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types">'
        b"</t:rispostaSdIRiceviFile></s:Body></s:Envelope>"
    )
    with sdi(pki, answering(server.SoapReply(200, "text/xml", body))) as (client, _):
        with pytest.raises(MaybeReceived) as failure:
            client.ricevi_file(NAME, TRICKY)
    assert failure.value.reason is Reason.BAD_ANSWER


@pytest.mark.parametrize("as_mtom", [False, True], ids=["inline", "mtom"])
def test_notifica_esito_es00_with_scarto(pki: TestPki, as_mtom: bool) -> None:
    scarto = FileSdIBase("IT01234567890_00001_SE_001.xml", TRICKY)
    reply = server.notifica_esito_reply(
        RispostaNotificaEsito(EsitoNotifica.ES00, scarto), mtom_answer=as_mtom
    )
    with sdi(pki, answering(reply)) as (client, running):
        result = client.notifica_esito(111222333, "IT01234567890_00001_EC_001.xml", b"<EC/>")
    assert result.esito is EsitoNotifica.ES00
    assert result.scarto_esito == scarto  # byte-exact, CR/LF at both ends included
    assert result.exchange is not None and result.exchange.response == reply.body  # stored as received
    assert result.exchange.response_content_type.startswith("multipart/related" if as_mtom else "text/xml")
    call = server.parse_request(Service.SDI_RICEVI_NOTIFICA, "text/xml", running.seen[0].body)
    assert call.payload == FileSdI(111222333, "IT01234567890_00001_EC_001.xml", b"<EC/>")


@pytest.mark.parametrize("esito", [EsitoNotifica.ES01, EsitoNotifica.ES02])
def test_notifica_esito_without_scarto(pki: TestPki, esito: EsitoNotifica) -> None:
    with sdi(pki, answering(server.notifica_esito_reply(RispostaNotificaEsito(esito)))) as (client, _):
        result = client.notifica_esito(1, "IT01234567890_00001_EC_001.xml", b"<EC/>")
    assert (result.esito, result.scarto_esito) == (esito, None)


def test_trasmetti_then_esito(pki: TestPki) -> None:
    notifica = FileSdIBase("IT01234567890_DF_00001_ES_001.xml", TRICKY)
    archive = (
        DettaglioArchivio("IT01234567890_DF_00002.xml", 17),
        DettaglioArchivio("IT01234567890_DF_00003.xml", 18),
    )

    def handle(seen: Seen) -> server.SoapReply:
        call = server.parse_request(
            Service.SDI_TRASMISSIONE_FILE,
            seen.headers["content-type"],
            seen.body,
            soap_action=seen.headers["soapaction"],
        )
        if call.name == "Trasmetti":
            assert call.payload == FileTrasmissione("IT01234567890_DF_00001.xml", "DF", TRICKY)
            return server.trasmetti_reply(RispostaTrasmetti(999999999999999, AT))
        assert call.payload == RichiestaEsito(999999999999999)
        return server.esito_reply(RispostaEsito(StatoFile.SF02, notifica, archive), mtom_answer=True)

    with sdi(pki, handle) as (client, _):
        sent = client.trasmetti("IT01234567890_DF_00001.xml", TipoFile.DF, TRICKY)
        assert (sent.id_file, sent.data_ora_ricezione, sent.errore) == (999999999999999, AT, None)
        outcome = client.esito(sent.id_file)  # type: ignore[arg-type]
    assert (outcome.esito, outcome.notifica, outcome.dettaglio_archivio) == (
        StatoFile.SF02,
        notifica,
        archive,
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (RispostaEsito(StatoFile.SF01), (StatoFile.SF01, None)),
        (RispostaEsito(StatoFile.SF03), (StatoFile.SF03, None)),
        (RispostaEsito(StatoFile.SF03, errore=ErroreEsito.EE01), (StatoFile.SF03, ErroreEsito.EE01)),
    ],
)
def test_esito_states(pki: TestPki, answer: RispostaEsito, expected: tuple[object, object]) -> None:
    with sdi(pki, answering(server.esito_reply(answer))) as (client, _):
        result = client.esito(5)
    assert (result.esito, result.errore) == expected


@pytest.mark.parametrize("errore", list(ErroreInvio))
def test_trasmetti_errors(pki: TestPki, errore: ErroreInvio) -> None:
    with sdi(pki, answering(server.trasmetti_reply(RispostaTrasmetti(1, AT, errore)))) as (client, _):
        assert client.trasmetti("IT01234567890_LI_00001.xml", "XX", b"x").errore is errore


def test_client_certificate_of_another_ca_is_certainly_not_received(pki: TestPki) -> None:
    with sdi(pki, answering(server.one_way_reply()), client_pair=pki.other_client) as (client, running):
        # TLS 1.3: refused while we write, or by an alert when we read; both "certainly not received"
        for content in (TRICKY * 20000, b"small", TRICKY * 20000, b"small"):
            with pytest.raises(NotReceived) as failure:
                client.ricevi_file(NAME, content)
            assert failure.value.reason is Reason.TLS_REFUSED
            assert failure.value.may_have_been_received is False
    assert running.seen == []


def test_server_certificate_not_from_the_configured_ca_is_refused(pki: TestPki) -> None:
    with serve(
        answering(server.one_way_reply()), cert=pki.sdi_server.cert, key=pki.sdi_server.key
    ) as running:
        pair = pki.intermediaries_client["varco"]
        config = ClientConfig(pair.cert, pair.key, pki.other_ca.cert, ricevi_file_url=running.url)
        with SdiClient(config) as client, pytest.raises(NotReceived) as failure:
            client.ricevi_file(NAME, b"x")
    assert failure.value.reason is Reason.TLS_REFUSED and running.seen == []


def test_connection_refused_is_certainly_not_received(pki: TestPki) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pair = pki.intermediaries_client["varco"]
    config = ClientConfig(pair.cert, pair.key, pki.ca.cert, ricevi_file_url=f"https://127.0.0.1:{port}/x")
    with SdiClient(config) as client, pytest.raises(NotReceived) as failure:
        client.ricevi_file(NAME, b"x")
    assert failure.value.reason is Reason.CONNECTION_FAILED
    assert failure.value.exchange.request  # what would have been sent is still there to store


def test_connection_closed_after_the_request_maybe_received(pki: TestPki) -> None:
    with sdi(pki, lambda _: Close()) as (client, running):
        with pytest.raises(MaybeReceived) as failure:
            client.ricevi_file(NAME, TRICKY)
    assert failure.value.reason is Reason.CONNECTION_LOST and failure.value.may_have_been_received
    assert len(running.seen) == 1 and failure.value.exchange.request == running.seen[0].body


def test_no_answer_in_time_maybe_received(pki: TestPki) -> None:
    with sdi(pki, lambda _: Stall(), timeout=0.5) as (client, running):
        with pytest.raises(MaybeReceived) as failure:
            client.ricevi_file(NAME, TRICKY)
    assert failure.value.reason is Reason.TIMEOUT and len(running.seen) == 1


@pytest.mark.parametrize(
    ("reply", "kind", "reason"),
    [
        (server.server_fault(), MaybeReceived, Reason.SOAP_FAULT),
        (server.client_fault("NomeFile non valido"), NotReceived, Reason.SOAP_FAULT),
        (server.SoapReply(503, "text/plain", b"busy"), NotReceived, Reason.HTTP_STATUS),
        (server.SoapReply(502, None, b""), MaybeReceived, Reason.HTTP_STATUS),
        (server.SoapReply(500, "text/html", b"<html>oops</html>"), MaybeReceived, Reason.HTTP_STATUS),
        (server.SoapReply(404, "text/plain", b"no"), NotReceived, Reason.HTTP_STATUS),
        (
            server.SoapReply(302, None, b"", (("Location", "https://elsewhere/"),)),
            NotReceived,
            Reason.HTTP_STATUS,
        ),
        (server.SoapReply(200, "text/xml", b"<not/>"), MaybeReceived, Reason.BAD_ANSWER),
        (server.SoapReply(200, "text/xml", b"garbage"), MaybeReceived, Reason.BAD_ANSWER),
        (server.SoapReply(202, None, b""), MaybeReceived, Reason.BAD_ANSWER),
        (
            server.SoapReply(200, server.server_fault().content_type, server.server_fault().body),
            MaybeReceived,
            Reason.SOAP_FAULT,
        ),
    ],
    ids=[
        "server-fault",
        "client-fault",
        "503",
        "502",
        "500-html",
        "404",
        "302",
        "wrong-xml",
        "garbage",
        "202",
        "fault-200",
    ],
)
def test_http_failures(
    pki: TestPki, reply: server.SoapReply, kind: type[SdiCallError], reason: Reason
) -> None:
    with sdi(pki, answering(reply)) as (client, running):
        with pytest.raises(kind) as failure:
            client.ricevi_file(NAME, TRICKY)
    assert failure.value.reason is reason
    assert len(running.seen) == 1 and failure.value.exchange.response == reply.body
    if reason is Reason.SOAP_FAULT:
        assert failure.value.fault is not None


def test_invalid_request_is_refused_before_any_io(pki: TestPki) -> None:
    with sdi(pki, answering(server.one_way_reply())) as (client, running):
        with pytest.raises(ValueError, match="NomeFile"):
            client.ricevi_file("bad name.xml", b"x")
        with pytest.raises(ValueError, match="IdentificativoSdI"):
            client.notifica_esito(10**12, "IT01234567890_00001_EC_001.xml", b"x")
    assert running.seen == []


def test_missing_endpoint_is_a_configuration_error(pki: TestPki) -> None:
    pair = pki.intermediaries_client["varco"]
    with SdiClient(ClientConfig(pair.cert, pair.key, pki.ca.cert)) as client:
        with pytest.raises(EndpointMissing, match="SdITrasmissioneFile"):
            client.esito(1)
        assert not issubclass(EndpointMissing, ValueError)  # ValueError is a permanent refusal


def test_calls_are_logged_at_debug_without_secrets(pki: TestPki, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="varco.sdi.sdicoop")
    reply = server.ricevi_file_reply(RispostaRiceviFile(5, AT))
    with sdi(pki, answering(reply)) as (client, _):
        client.ricevi_file(NAME, b"<FatturaElettronica/>")
    assert "SDICoop → " in caplog.text and "RiceviFile" in caplog.text
    assert "SDICoop ← " in caplog.text and "<IdentificativoSdI>5</IdentificativoSdI>" in caplog.text
    key = pki.intermediaries_client["varco"].key.read_text()
    assert "PRIVATE KEY" not in caplog.text and key.splitlines()[1] not in caplog.text
