"""The simulated SDI's SDICoop face (`varco sdi serve-sdicoop`): its three services as an
intermediary calls them, and what it sends back to intermediaries over mutual TLS.

The face runs here in the test's database with the real job queue; the intermediary is a small
HTTPS server that requires the SDI's client certificate and records what reaches it.
"""

from __future__ import annotations

import base64
import ssl
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from lxml import etree

from tests.comfin.support import li_xml
from tests.live_server import free_port
from tests.sdi.factories import invoice_file
from tests.sdi.sdicoop.servers import Seen, serve
from varco.core import jobs
from varco.core.db import unit_of_work
from varco.sdi import messages
from varco.sdi.sdicoop import envelope, server
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import (
    FileSdI,
    FileSdIBase,
    FileSdIConMetadati,
    FileTrasmissione,
    RichiestaEsito,
)
from varco.sdi.sdicoop.pki import TestPki, make_test_pki
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import engine, network
from varco.sdi.simulator.soap import app as sim_app
from varco.sdi.simulator.soap import deliveries
from varco.sdi.simulator.soap.config import SimConfig, load
from varco.settings import get_settings

TRANSMITTER = "IT05555550028"
OFFICE = "UFVARC"  # a PA office code whose invoices the intermediary takes
PATHS = {
    "/sdicoop/TrasmissioneFatture": Service.TRASMISSIONE_FATTURE,
    "/sdicoop/RicezioneFatture": Service.RICEZIONE_FATTURE,
}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    return make_test_pki(tmp_path_factory.mktemp("pki"), ["varco"])


@dataclass
class Intermediary:
    """Answers 202 / ER01, or a 500 Fault while `down`; keeps every call, parsed."""

    url: str = ""
    down: int = 0
    calls: list[server.InboundCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, seen: Seen) -> server.SoapReply:
        call = server.parse_request(PATHS[seen.path], seen.headers.get("content-type"), seen.body)
        with self.lock:
            if self.down:
                self.down -= 1
                return server.server_fault("down")
            self.calls.append(call)
        return server.ricevi_fatture_reply() if call.name == "RiceviFatture" else server.one_way_reply()

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def about(self, sdi_id: int) -> list[server.InboundCall]:
        return [c for c in self.calls if getattr(c.payload, "identificativo_sdi", None) == sdi_id]


@pytest.fixture
def intermediary(pki: TestPki) -> Iterator[Intermediary]:
    recorded = Intermediary()
    pair = pki.intermediaries_server["varco"]
    with serve(recorded.handle, cert=pair.cert, key=pair.key, client_ca=pki.ca.cert) as running:
        recorded.url = running.url
        yield recorded


def sim_config(pki: TestPki, intermediary_url: str, tmp_path) -> SimConfig:
    path = tmp_path / "sdi.json"
    path.write_text(
        SimConfig.model_validate(
            {
                "server": {
                    "certificate": pki.sdi_server.cert,
                    "key": pki.sdi_server.key,
                    "client_ca": pki.ca.cert,
                },
                "client": {
                    "certificate": pki.sdi_client.cert,
                    "key": pki.sdi_client.key,
                    "ca_bundle": pki.ca.cert,
                },
                "intermediaries": [
                    {
                        "name": "varco",
                        "transmitter_ids": [TRANSMITTER],
                        "recipient_codes": [OFFICE],
                        "trasmissione_fatture_url": f"{intermediary_url}/sdicoop/TrasmissioneFatture",
                        "ricezione_fatture_url": f"{intermediary_url}/sdicoop/RicezioneFatture",
                    }
                ],
            }
        ).model_dump_json()
    )
    return load(path)


@pytest.fixture
def config(pki, intermediary, tmp_path) -> SimConfig:
    return sim_config(pki, intermediary.url, tmp_path)


@pytest.fixture
def sdi(db, queue, clock, config) -> Iterator[TestClient]:
    """The face in this process: its network installed, its delivery jobs in the registry."""
    network.use(deliveries.SoapNetwork(config))
    deliveries.register(jobs.registry())
    try:
        with TestClient(sim_app.create_sdi_app(config)) as client:
            yield client
    finally:
        network.use(None)


def call(sdi: TestClient, path: str, service: Service, operation: str, payload) -> etree._Element:
    message = build_request(service, operation, payload)
    answer = sdi.post(path, content=message.body, headers=message.headers())
    assert answer.status_code == 200, answer.text
    return envelope.read(answer.headers["content-type"], answer.content).payload


def text(element: etree._Element, name: str) -> str | None:
    found = element.xpath(f".//*[local-name()='{name}']")
    return (found[0].text or "").strip() if found else None


def ricevi_file(sdi: TestClient, name: str, content: bytes) -> etree._Element:
    return call(sdi, "/ricevi_file", Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(name, content))


def sent(sdi: TestClient, queue, content: bytes, progressive: str) -> tuple[int, str]:
    name = f"{TRANSMITTER}_{progressive}.xml"
    answer = ricevi_file(sdi, name, content)
    assert text(answer, "Errore") is None
    sdi_id = int(text(answer, "IdentificativoSdI"))
    queue.drain()
    return sdi_id, name


def progressive() -> str:
    """A ProgressivoInvio no other test of the session uses (the SDI refuses a name seen before)."""
    return uuid.uuid4().hex[:5].upper()


def test_a_file_is_taken_checked_and_its_receipt_sent_to_the_sender(sdi, queue, intermediary):
    sdi_id, name = sent(sdi, queue, invoice_file(transmitter=TRANSMITTER[2:]), progressive())
    [rc] = intermediary.about(sdi_id)
    assert rc.name == "RicevutaConsegna" and rc.is_mtom  # as the real SDI sends files
    assert rc.payload.nome_file == name.removesuffix(".xml") + "_RC_001.xml"
    parsed = messages.parse(rc.payload.file)
    assert (parsed.type, parsed.sdi_id) == ("RC", str(sdi_id))


def test_a_delivery_taken_is_not_sent_again_and_one_lost_before_its_post_is(
    sdi, queue, intermediary, clock, monkeypatch
):
    """The post runs after the job's commit (no lock held while the intermediary answers); the same
    delivery, queued in that transaction, is cancelled by a post that was taken, and otherwise runs."""
    sdi_id, _ = sent(sdi, queue, invoice_file(transmitter=TRANSMITTER[2:]), progressive())
    clock.advance(get_settings().stale_job_after * 3)
    jobs.reconcile(clock)
    queue.drain()
    assert [c.name for c in intermediary.about(sdi_id)] == ["RicevutaConsegna"]  # once

    monkeypatch.setattr(deliveries, "_post", lambda *args: None)  # the process died after its commit
    lost, _ = sent(sdi, queue, invoice_file(transmitter=TRANSMITTER[2:]), progressive())
    monkeypatch.undo()
    assert intermediary.about(lost) == []
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    jobs.reconcile(clock)
    queue.drain()
    assert [c.name for c in intermediary.about(lost)] == ["RicevutaConsegna"]


def test_the_same_name_twice_is_a_new_file_refused_as_a_duplicate(sdi, queue, intermediary):
    content, number = invoice_file(transmitter=TRANSMITTER[2:]), progressive()
    first, _ = sent(sdi, queue, content, number)
    second, _ = sent(sdi, queue, content, number)
    assert second != first
    [ns] = intermediary.about(second)
    assert ns.name == "NotificaScarto"
    assert [e["code"] for e in messages.parse(ns.payload.file).errors][0] == "00002"
    assert [c.name for c in intermediary.about(first)] == ["RicevutaConsegna"]


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [(f"{TRANSMITTER}_00001.xml", b"", "EI01"), ("IT99999999999_00001.xml", b"<x/>", "EI03")],
    ids=["empty", "not-an-accredited-sender"],
)
def test_files_refused_at_once(sdi, queue, intermediary, name, content, code):
    answer = ricevi_file(sdi, name, content)
    assert text(answer, "Errore") == code
    queue.drain()
    assert intermediary.calls == []


def pa_invoice_handed_over(sdi, queue, intermediary) -> tuple[int, str]:
    content = invoice_file("FPA12.xml", transmitter=TRANSMITTER[2:], codice_destinatario=OFFICE)
    sdi_id, name = sent(sdi, queue, content, progressive())
    assert [c.name for c in intermediary.about(sdi_id)] == ["RiceviFatture", "RicevutaConsegna"]
    return sdi_id, name


def test_an_invoice_for_an_intermediarys_code_is_handed_over_then_the_rc_goes_out(sdi, queue, intermediary):
    sdi_id, name = pa_invoice_handed_over(sdi, queue, intermediary)
    delivery = intermediary.about(sdi_id)[0].payload
    assert isinstance(delivery, FileSdIConMetadati)
    assert delivery.nome_file == name and delivery.nome_file_metadati.endswith("_MT_001.xml")
    metadata = messages.parse(delivery.metadati)
    assert (metadata.type, metadata.sdi_id) == ("MT", str(sdi_id))


def test_a_recipient_down_is_tried_again_and_the_rc_waits_for_it(sdi, queue, intermediary, clock):
    intermediary.down = 1
    content = invoice_file("FPA12.xml", transmitter=TRANSMITTER[2:], codice_destinatario=OFFICE)
    sdi_id, _ = sent(sdi, queue, content, progressive())
    assert intermediary.about(sdi_id) == []  # no RC before the recipient has it
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    jobs.reconcile(clock)
    queue.drain()
    assert [c.name for c in intermediary.about(sdi_id)] == ["RiceviFatture", "RicevutaConsegna"]


def test_an_accepted_outcome_is_es01_and_reaches_the_sender_as_ne(sdi, queue, intermediary):
    sdi_id, name = pa_invoice_handed_over(sdi, queue, intermediary)
    ec = messages.serialize(messages.esito_committente(str(sdi_id), "EC01", None, None, "EC1"))
    ec_name = name.removesuffix(".xml") + "_EC_001.xml"
    answer = call(
        sdi, "/ricevi_notifica", Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", FileSdI(sdi_id, ec_name, ec)
    )
    assert text(answer, "Esito") == "ES01"
    queue.drain()
    assert [c.name for c in intermediary.about(sdi_id)] == [
        "RiceviFatture",
        "RicevutaConsegna",
        "NotificaEsito",
    ]
    assert messages.parse(intermediary.about(sdi_id)[-1].payload.file).esito == "EC01"


def test_an_outcome_on_a_file_never_delivered_is_es00_with_the_scarto(sdi, queue):
    ec = messages.serialize(messages.esito_committente("123", "EC01", None, None, "EC1"))
    payload = FileSdI(123, f"{TRANSMITTER}_ZZZZZ_EC_001.xml", ec)
    answer = call(sdi, "/ricevi_notifica", Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", payload)
    assert text(answer, "Esito") == "ES00"
    scarto = base64.b64decode(text(answer, "File"))
    assert messages.parse(scarto).type == "SE"


def test_no_outcome_in_fifteen_days_is_a_dt_to_both_ends(sdi, queue, intermediary, clock):
    sdi_id, _ = pa_invoice_handed_over(sdi, queue, intermediary)
    with unit_of_work() as session:
        sim_clock.advance(session, timedelta(days=15, minutes=1), clock)
    engine.run_due(clock)
    queue.drain()
    dts = [c for c in intermediary.about(sdi_id) if c.name == "NotificaDecorrenzaTermini"]
    assert sorted(c.service for c in dts) == [Service.RICEZIONE_FATTURE, Service.TRASMISSIONE_FATTURE]


def test_a_communication_is_taken_and_its_outcome_asked_for(sdi, queue):
    def esito(id_file: int) -> etree._Element:
        return call(sdi, "/dati-fattura", Service.SDI_TRASMISSIONE_FILE, "Esito", RichiestaEsito(id_file))

    name = f"{TRANSMITTER}_LI_{progressive()}.xml"
    payload = FileTrasmissione(name, "LI", li_xml())
    answer = call(sdi, "/dati-fattura", Service.SDI_TRASMISSIONE_FILE, "Trasmetti", payload)
    id_file = int(text(answer, "IDFile"))
    assert text(esito(id_file), "Esito") == "SF01"  # checked by a job
    queue.drain()
    done = esito(id_file)
    assert text(done, "Esito") == "SF02"
    outcome = etree.fromstring(base64.b64decode(text(done, "File")))
    assert text(outcome, "IDFile") == str(id_file) and text(outcome, "Esito") in ("ES01", "ES02")
    assert text(esito(999_999_999), "Esito") == "SF03"
    wrong = FileTrasmissione(f"{TRANSMITTER}_XX_00001.xml", "XX", b"<x/>")
    assert (
        text(call(sdi, "/dati-fattura", Service.SDI_TRASMISSIONE_FILE, "Trasmetti", wrong), "Errore")
        == "EI04"
    )


def test_envelopes_the_wsdl_does_not_allow_are_faults_and_the_wsdl_is_served(sdi):
    unknown = envelope.write(etree.Element("{urn:elsewhere}Prendi"))
    answer = sdi.post("/ricevi_file", content=unknown, headers={"Content-Type": envelope.XML_CONTENT_TYPE})
    assert answer.status_code == 500 and b"soap:Client" in answer.content
    assert (
        sdi.post("/ricevi_file", content=b"<nope/>", headers={"Content-Type": "text/xml"}).status_code == 400
    )
    wsdl = sdi.get("/ricevi_file?wsdl")
    assert wsdl.status_code == 200 and b'location="http://testserver/ricevi_file"' in wsdl.content
    assert sdi.get("/elsewhere?wsdl").status_code == 404


def test_only_a_client_certificate_of_the_configured_ca_gets_through(db, queue, config, pki):
    port = free_port()
    listener = uvicorn.Server(
        sim_app.uvicorn_config(sim_app.create_sdi_app(config), config, "127.0.0.1", port)
    )
    thread = threading.Thread(target=listener.run, daemon=True)
    thread.start()
    try:
        while not listener.started:
            assert thread.is_alive()
            time.sleep(0.02)

        def get(client_pair) -> int:
            context = ssl.create_default_context(cafile=pki.ca.cert)
            if client_pair is not None:
                context.load_cert_chain(client_pair.cert, client_pair.key)
            return httpx.get(f"https://127.0.0.1:{port}/ricevi_file?wsdl", verify=context).status_code

        assert get(pki.intermediaries_client["varco"]) == 200
        for refused in (pki.other_client, None):
            with pytest.raises(
                (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, ssl.SSLError)
            ):
                get(refused)
    finally:
        listener.should_exit = True
        thread.join(10)
