"""A small SDICoop world for varco's channel tests: a programmable SDI over HTTPS with mutual TLS
(what it answers RiceviFile, NotificaEsito, Trasmetti, Esito), varco's own listener
(`varco serve --sdicoop-port`, in this process), and the SDI's side of a call to varco."""

from __future__ import annotations

import itertools
import random
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import update

from tests.live_server import free_port
from tests.sdi.sdicoop.servers import Close, Seen, serve
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.sdi.models import SdiTransmission
from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import (
    ErroreEsito,
    ErroreInvio,
    EsitoNotifica,
    FileSdIBase,
    Request,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
    StatoFile,
)
from varco.sdi.sdicoop.pki import TestPki
from varco.settings import get_settings

# IdentificativoSdI are unique in the SDI: one sequence for every test of the session's databases.
_IDS = itertools.count(random.randrange(10**9, 9 * 10**9, 10**6))
PATHS = {
    "/SdIRiceviFile": Service.SDI_RICEVI_FILE,
    "/SdIRiceviNotifica": Service.SDI_RICEVI_NOTIFICA,
    "/SdITrasmissioneFile": Service.SDI_TRASMISSIONE_FILE,
}


@dataclass
class FakeSdi:
    """Answers each call with the next planned behaviour ("ok" when none is left): "ok", an
    error code (EI02, EI03, ES02, ...), "close" (read, then hang up: maybe received), or a callable
    returning the reply. `calls` holds every request that reached it, parsed."""

    url: str = ""
    plan: list[object] = field(default_factory=list)
    calls: list[server.InboundCall] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=lambda: _IDS)
    esito: StatoFile = StatoFile.SF02
    outcome: FileSdIBase | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def handle(self, seen: Seen) -> server.SoapReply | Close:
        service = PATHS[seen.path]
        try:
            call = server.parse_request(
                service,
                seen.headers.get("content-type"),
                seen.body,
                soap_action=seen.headers.get("soapaction"),
            )
        except server.SoapRequestRefused as refused:
            return refused.reply
        with self.lock:
            self.calls.append(call)
            behaviour = self.plan.pop(0) if self.plan else "ok"
        if behaviour == "close":
            return Close()
        if callable(behaviour):
            return behaviour(call)
        now = current_clock().now()
        if call.name == "RiceviFile":
            if behaviour != "ok":
                return server.ricevi_file_reply(RispostaRiceviFile(1, now, ErroreInvio(behaviour)))
            return server.ricevi_file_reply(RispostaRiceviFile(next(self.ids), now))
        if call.name == "NotificaEsito":
            esito = EsitoNotifica.ES01 if behaviour == "ok" else EsitoNotifica(behaviour)
            return server.notifica_esito_reply(RispostaNotificaEsito(esito))
        if call.name == "Trasmetti":
            if behaviour != "ok":
                return server.trasmetti_reply(RispostaTrasmetti(1, now, ErroreInvio(behaviour)))
            return server.trasmetti_reply(RispostaTrasmetti(next(self.ids), now))
        if behaviour != "ok":
            return server.esito_reply(RispostaEsito(StatoFile.SF03, errore=ErroreEsito(behaviour)))
        return server.esito_reply(RispostaEsito(self.esito, self.outcome))


@contextmanager
def fake_sdi(pki: TestPki, configure: Callable[..., None]) -> Iterator[FakeSdi]:
    """The SDI, and varco configured to call it over SDICoop with its test certificates.

    The test database lives for the whole session (one per xdist worker): jobs and transmissions
    that other tests left open would run here, over SOAP, when a test moves the clock on, so
    they are closed first."""
    with unit_of_work() as session:
        session.execute(update(JobRow).where(JobRow.status == "pending").values(status="failed"))
        session.execute(
            update(SdiTransmission)
            .where(SdiTransmission.status.not_in(("DONE", "FAILED")))
            .values(status="FAILED", last_error="closed by the test world")
        )
    sdi = FakeSdi()
    with serve(
        sdi.handle, cert=pki.sdi_server.cert, key=pki.sdi_server.key, client_ca=pki.ca.cert
    ) as running:
        sdi.url = running.url
        client = pki.intermediaries_client["varco"]
        configure(
            sdi_channel="sdicoop",
            sdicoop_cert=client.cert,
            sdicoop_key=client.key,
            sdicoop_ca=pki.ca.cert,
            sdicoop_ricevi_file_url=f"{running.url}/SdIRiceviFile",
            sdicoop_ricevi_notifica_url=f"{running.url}/SdIRiceviNotifica",
            sdicoop_trasmissione_file_url=f"{running.url}/SdITrasmissioneFile",
            sdicoop_timeout_seconds=5,
        )
        yield sdi


@dataclass(frozen=True)
class Listener:
    url: str  # https://127.0.0.1:port/sdicoop
    pki: TestPki

    def client(self, pair_cert: Path | None = None, pair_key: Path | None = None) -> httpx.Client:
        """An HTTPS client as the SDI (its client certificate), or with another certificate."""
        context = ssl.create_default_context(cafile=str(self.pki.ca.cert))
        context.load_cert_chain(pair_cert or self.pki.sdi_client.cert, pair_key or self.pki.sdi_client.key)
        return httpx.Client(verify=context, timeout=10, trust_env=False)

    def call(
        self, service: Service, operation: str, payload: Request, *, as_mtom: bool = False
    ) -> httpx.Response:
        """What the SDI sends (inline base64, or MTOM), as the SDI."""
        message = build_request(service, operation, payload, as_mtom=as_mtom)
        with self.client() as client:
            return client.post(f"{self.url}/{service.value}", content=message.body, headers=message.headers())


@contextmanager
def varco_listener(pki: TestPki, configure: Callable[..., None]) -> Iterator[Listener]:
    """varco's SDICoop listener, as `varco serve --sdicoop-port` starts it, in this process."""
    from varco.sdicoop_listener import sdicoop_listener

    server_pair = pki.intermediaries_server["varco"]
    configure(
        sdicoop_server_cert=server_pair.cert,
        sdicoop_server_key=server_pair.key,
        sdicoop_client_ca=pki.ca.cert,
    )
    port = free_port()
    listener = sdicoop_listener(get_settings(), "127.0.0.1", port)
    listener.start()
    try:
        yield Listener(f"https://127.0.0.1:{port}/sdicoop", pki)
    finally:
        listener.stop()


def new_sdi_id() -> str:
    return str(next(_IDS))


def accepting_as(sdi_id: str) -> Callable[[server.InboundCall], server.SoapReply]:
    """A RiceviFile answer with that IdentificativoSdI."""
    return lambda _: server.ricevi_file_reply(RispostaRiceviFile(int(sdi_id), current_clock().now()))
