"""The services the Exchange System calls on varco over SDICoop (docs/sdicoop.md):
TrasmissioneFatture (notifications on invoices varco sent) and RicezioneFatture (invoices for
varco's clients, and the DT on them). SOAP 1.1, inline base64 or MTOM, as the official WSDLs
define them; GET ?wsdl serves them with this endpoint's address.

The SDI proves who it is with a client certificate. TLS checks it on the listener of
`varco serve --sdicoop-port` (only these routes); behind a reverse proxy that checks it, the proxy
says so in `VARCO_SDICOOP_CLIENT_VERIFY_HEADER`, believed only from `VARCO_TRUSTED_PROXIES`.
Anywhere else these routes answer 403.

A message is stored before the answer goes: the SDI takes a 202 (ER01 for an invoice) as
"delivered", a fault as "deliver again". What cannot be applied (an unknown IdentificativoSdI, a
malformed notification) is kept aside and answered, never lost and never re-requested.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from varco.core.bodies import BodyTooLarge, carries_file
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.limits import ip
from varco.sdi import inbound
from varco.sdi.models import SdiExchange
from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.payloads import FileSdI, FileSdIConMetadati
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.sdicoop.inbound")

MTLS_STATE = "sdicoop_mtls"  # app.state flag: this app is served behind TLS that checks client certs
PREFIX = "/sdicoop"
_SERVICES = {s.value: s for s in (Service.TRASMISSIONE_FATTURE, Service.RICEZIONE_FATTURE)}

router = APIRouter(prefix=PREFIX, include_in_schema=False)


def _send(reply: server.SoapReply) -> Response:
    headers = dict(reply.headers)
    if reply.content_type:
        headers["Content-Type"] = reply.content_type
    return Response(reply.body, status_code=reply.status, headers=headers)


def _text(status: int, text: str) -> Response:
    return Response(f"{text}\n", status_code=status, media_type="text/plain")


def is_the_sdi(request: Request, settings: Settings) -> bool:
    """Whether the caller proved to be the SDI (module docstring)."""
    if getattr(request.app.state, MTLS_STATE, False) or settings.sdicoop_inbound_open:
        return True
    header = settings.sdicoop_client_verify_header
    peer = request.client.host if request.client else ""
    return bool(header) and ip.is_trusted_proxy(peer, settings) and request.headers.get(header) == "SUCCESS"


def _refusal(request: Request, service: str) -> Response | None:
    if service not in _SERVICES:
        return _text(404, f"no SDICoop service {service!r} here: TrasmissioneFatture or RicezioneFatture")
    if not is_the_sdi(request, get_settings()):
        log.warning("SDICoop %s refused: the caller did not prove to be the SDI", service)
        return _text(403, "this service answers the Exchange System only (client certificate required)")
    return None


@router.get("/{name}.xsd")
def schema(name: str) -> Response:
    """The XSD a served WSDL imports (its schemaLocation is relative to the endpoint)."""
    try:
        return Response(server.schema_document(f"{name}.xsd"), media_type="text/xml")
    except FileNotFoundError:
        return _text(404, "no such schema")


@router.get("/{service}")
def describe(request: Request, service: str) -> Response:
    """?wsdl: the official WSDL with this endpoint's address; anything else is 405."""
    if service not in _SERVICES:
        return _text(404, f"no SDICoop service {service!r} here: TrasmissioneFatture or RicezioneFatture")
    address = str(request.url.replace(query=""))
    return _send(server.get_reply(_SERVICES[service], request.url.query, address))


@router.post("/{service}")
@carries_file
async def call(request: Request, service: str) -> Response:
    """One SOAP call from the SDI: parsed against the WSDL, stored, answered."""
    refused = _refusal(request, service)
    if refused is not None:
        return refused
    try:
        body = await request.body()
    except BodyTooLarge as exc:  # the rest is not read: close, or the connection would have to drain it
        headers = (("Connection", "close"),)
        return _send(server.SoapReply(413, server.TEXT_CONTENT_TYPE, f"{exc.detail}\n".encode(), headers))
    try:
        soap = server.parse_request(
            _SERVICES[service],
            request.headers.get("content-type"),
            body,
            soap_action=request.headers.get("soapaction"),
            max_body_bytes=len(body),  # counted already, within the route's limit
        )
    except server.SoapRequestRefused as refused_call:
        return _send(refused_call.reply)
    del body
    try:
        reply = await run_in_threadpool(_store, soap, current_clock())
    except Exception:  # noqa: BLE001 - storage failed: nothing was kept, the SDI sends it again
        log.exception("SDICoop %s.%s: the message was not stored", service, soap.name)
        return _send(server.server_fault())
    return _send(reply)


def _store(soap: server.InboundCall, clock: Clock) -> server.SoapReply:
    """The message applied, or kept aside, in one transaction; the answer the operation has."""
    handle = _HANDLERS[soap.name]
    with unit_of_work() as session:
        reply = handle(session, soap.payload, clock)
        sdi_id = getattr(soap.payload, "identificativo_sdi", None)
        session.add(
            SdiExchange(
                direction="in",
                operation=soap.name,
                status=reply.status,
                sdi_id=str(sdi_id) if sdi_id is not None else None,
                at=clock.now(),
            )
        )
    return reply


def _notification(session: UnitOfWork, payload: object, clock: Clock) -> server.SoapReply:
    """RicevutaConsegna, NotificaScarto, ... (TrasmissioneFatture), NotificaDecorrenzaTermini
    (both services): one-way, 202 once stored."""
    assert isinstance(payload, FileSdI)
    try:
        inbound.receive_notification(session, payload.nome_file, payload.file, clock)
    except inbound.NotificationRefused as exc:
        inbound.unmatched(session, payload.nome_file, payload.file, None, str(exc), clock)
    return server.one_way_reply()


def _invoice(session: UnitOfWork, payload: object, clock: Clock) -> server.SoapReply:
    """RiceviFatture: the invoice for one of varco's clients, with its metadata; ER01 once stored."""
    assert isinstance(payload, FileSdIConMetadati)
    try:
        inbound.receive_invoice(session, payload.nome_file, payload.file, payload.metadati, clock)
    except inbound.NotificationRefused as exc:
        inbound.unmatched(session, payload.nome_file, payload.file, None, str(exc), clock)
    return server.ricevi_fatture_reply()


_HANDLERS: dict[str, Callable[[UnitOfWork, object, Clock], server.SoapReply]] = {
    "RicevutaConsegna": _notification,
    "NotificaMancataConsegna": _notification,
    "NotificaScarto": _notification,
    "NotificaEsito": _notification,
    "NotificaDecorrenzaTermini": _notification,
    "AttestazioneTrasmissioneFattura": _notification,
    "RiceviFatture": _invoice,
}
