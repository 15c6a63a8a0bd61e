"""Inbound SOAP, framework-agnostic: parse a request for one service, build the HTTP answer.

Used by varco's endpoints (TrasmissioneFatture, RicezioneFatture) and by a simulated SDI
(SdIRiceviFile, SdIRiceviNotifica, SdITrasmissioneFile). The HTTP layer does:

    try:
        call = parse_request(service, content_type, body, soap_action=header, max_body_bytes=limit)
    except SoapRequestRefused as refused:
        return refused.reply            # 400 / 413 / 500 + soap:Fault
    ...store call.payload durably...
    return one_way_reply()              # or ricevi_fatture_reply(), ricevi_file_reply(...), ...

Status codes (WS-I BP 1.1, sdicoop-notes.md): not a SOAP envelope → 400 (R1113); an envelope that
does not match the WSDL → 500 with a `soap:Client` Fault (SOAP 1.1 §6.2, R1126); one-way → 202 with
an empty body (R2714; zeep, like most stacks, reads a 200 with an empty body as a broken answer);
GET without ?wsdl → 405 (R1114).

GET ?wsdl serves the official WSDL with the endpoint's own address. Its types import is relative
(`TrasmissioneTypes_v1.1.xsd`, ...), so a client that follows it asks for that file next to the
endpoint: route GET `<endpoint's directory>/<file>.xsd` to `schema_document(file)`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import parse_qs

from lxml import etree

from varco.sdi.sdicoop import envelope, mtom
from varco.sdi.sdicoop.contracts import Operation, Service, contract, wsdl_document
from varco.sdi.sdicoop.payloads import (
    Answer,
    Request,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFatture,
    RispostaRiceviFile,
    RispostaTrasmetti,
    request_from_element,
    to_element,
)
from varco.sdi.sdicoop.schemas import data_file, schema, validation_error

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a 5 MB file is ~6.7 MB in base64, two of them with Metadati
TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
XMIME_NS = "http://www.w3.org/2005/05/xmlmime"


@dataclass(frozen=True)
class SoapReply:
    """What the HTTP layer sends back, as is."""

    status: int
    content_type: str | None
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class InboundCall:
    operation: Operation
    payload: Request
    is_mtom: bool

    @property
    def service(self) -> Service:
        return self.operation.service

    @property
    def name(self) -> str:
        return self.operation.name


class SoapRequestRefused(Exception):
    """The request cannot be processed; `reply` says why in the status the profile asks for."""

    def __init__(self, reply: SoapReply, reason: str) -> None:
        super().__init__(reason)
        self.reply = reply


# --- replies ----------------------------------------------------------------------------------


def fault_reply(faultcode: str, faultstring: str) -> SoapReply:
    """HTTP 500 with a SOAP 1.1 Fault (R1126: every Fault travels with a 500)."""
    return SoapReply(500, envelope.XML_CONTENT_TYPE, envelope.fault_envelope(faultcode, faultstring))


def client_fault(faultstring: str) -> SoapReply:
    """The request is wrong: sending it again as is will not help."""
    return fault_reply("Client", faultstring)


def server_fault(faultstring: str = "the message could not be stored now: send it again") -> SoapReply:
    """We could not take the message now (storage down): the sender should send it again."""
    return fault_reply("Server", faultstring)


def bad_request(reason: str) -> SoapReply:
    return SoapReply(400, TEXT_CONTENT_TYPE, f"not a SOAP 1.1 request: {reason}\n".encode())


def method_not_allowed() -> SoapReply:
    return SoapReply(
        405, TEXT_CONTENT_TYPE, b"POST a SOAP request, or GET ?wsdl\n", (("Allow", "GET, POST"),)
    )


def one_way_reply() -> SoapReply:
    """The answer to a one-way operation: 202 and no body."""
    return SoapReply(202, None, b"")


def _answer(service: Service, operation: str, answer: Answer, *, mtom_answer: bool = False) -> SoapReply:
    op = contract(service).operation(operation)
    if op.output is None:
        raise ValueError(f"{operation} is one-way: answer with one_way_reply()")
    element = to_element(op.output, answer)
    error = validation_error(schema(contract(service).types_file), element)
    if error:  # our own bug, or a caller's bad values: never send an answer the WSDL forbids
        raise ValueError(f"{op.output.localname} would not match the XSD: {error}")
    body = envelope.write(element)
    if mtom_answer:
        content_type, body = mtom.encode(body)
        return SoapReply(200, content_type, body)
    return SoapReply(200, envelope.XML_CONTENT_TYPE, body)


def ricevi_fatture_reply(answer: RispostaRiceviFatture | None = None) -> SoapReply:
    """RicezioneFatture.RiceviFatture: Esito ER01, only once the file is stored durably."""
    return _answer(Service.RICEZIONE_FATTURE, "RiceviFatture", answer or RispostaRiceviFatture())


def ricevi_file_reply(answer: RispostaRiceviFile, *, mtom_answer: bool = False) -> SoapReply:
    """SdIRiceviFile.RiceviFile (simulated SDI): IdentificativoSdI + DataOraRicezione [+ Errore]."""
    return _answer(Service.SDI_RICEVI_FILE, "RiceviFile", answer, mtom_answer=mtom_answer)


def notifica_esito_reply(answer: RispostaNotificaEsito, *, mtom_answer: bool = False) -> SoapReply:
    """SdIRiceviNotifica.NotificaEsito (simulated SDI): ES00 + ScartoEsito, ES01 or ES02."""
    return _answer(Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", answer, mtom_answer=mtom_answer)


def trasmetti_reply(answer: RispostaTrasmetti, *, mtom_answer: bool = False) -> SoapReply:
    """SdITrasmissioneFile.Trasmetti (simulated SDI): IDFile + DataOraRicezione [+ Errore]."""
    return _answer(Service.SDI_TRASMISSIONE_FILE, "Trasmetti", answer, mtom_answer=mtom_answer)


def esito_reply(answer: RispostaEsito, *, mtom_answer: bool = False) -> SoapReply:
    """SdITrasmissioneFile.Esito (simulated SDI): SF01/SF02/SF03 [+ Notifica] or Errore EE01/EE02."""
    return _answer(Service.SDI_TRASMISSIONE_FILE, "Esito", answer, mtom_answer=mtom_answer)


# --- GET --------------------------------------------------------------------------------------


def schema_document(name: str) -> bytes:
    """An XSD a packaged WSDL imports (its schemaLocation is relative: serve it next to the endpoint)."""
    if name not in {contract(service).types_file for service in Service}:
        raise FileNotFoundError(name)
    return data_file(name).read_bytes()


def get_reply(service: Service, query: str, address: str) -> SoapReply:
    """GET on an endpoint: ?wsdl (address rewritten to `address`), ?xsd=<imported XSD>, else 405."""
    params = parse_qs(query, keep_blank_values=True)
    keys = {key.lower() for key in params}
    if "wsdl" in keys:
        return SoapReply(200, "text/xml; charset=utf-8", wsdl_document(service, address))
    if "xsd" in keys:
        name = next(v for k, vs in params.items() if k.lower() == "xsd" for v in vs)
        try:
            return SoapReply(200, "text/xml; charset=utf-8", schema_document(name))
        except FileNotFoundError:
            return SoapReply(404, TEXT_CONTENT_TYPE, b"no such schema\n")
    return method_not_allowed()


# --- POST -------------------------------------------------------------------------------------


def _refuse(reply: SoapReply, reason: str) -> SoapRequestRefused:
    logger.info("SDICoop request refused (%d): %s", reply.status, reason)
    return SoapRequestRefused(reply, reason)


def _check_action(operation: Operation, soap_action: str | None) -> None:
    if soap_action is None:
        return
    action = soap_action.strip().strip('"')
    if action and action != operation.soap_action:  # "" = intent not given (SOAP 1.1 §6.1.1)
        raise _refuse(
            client_fault(f"SOAPAction {action!r} does not match {operation.name} ({operation.soap_action})"),
            "SOAPAction mismatch",
        )


def parse_request(
    service: Service,
    content_type: str | None,
    body: bytes,
    *,
    soap_action: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> InboundCall:
    """The operation and payload of a POST to `service`, plain or MTOM; raises SoapRequestRefused."""
    if len(body) > max_body_bytes:
        raise _refuse(SoapReply(413, TEXT_CONTENT_TYPE, b"request too large\n"), "too large")
    try:
        message = envelope.read(content_type, body)
    except envelope.NotSoap as exc:
        raise _refuse(bad_request(str(exc)), str(exc)) from None
    except envelope.VersionMismatch as exc:
        raise _refuse(fault_reply("VersionMismatch", str(exc)), str(exc)) from None
    except envelope.BadEnvelope as exc:
        raise _refuse(client_fault(str(exc)), str(exc)) from None
    element = etree.QName(message.payload)
    spec = contract(service)
    operation = spec.operation_for(element)
    if operation is None:
        text = f"{service} has no operation taking {{{element.namespace}}}{element.localname}"
        raise _refuse(client_fault(text), text)
    _check_action(operation, soap_action)
    _drop_xmime_attributes(message.payload)
    error = validation_error(schema(spec.types_file), message.payload)
    if error:
        text = f"{operation.name}: {element.localname} does not match {spec.types_file}: {error}"
        raise _refuse(client_fault(text), text)
    try:
        payload = request_from_element(message.payload)
    except ValueError as exc:
        raise _refuse(client_fault(f"{operation.name}: {exc}"), str(exc)) from None
    logger.debug(
        "SDICoop request %s.%s (%d bytes%s)",
        service,
        operation.name,
        len(body),
        ", MTOM" if message.is_mtom else "",
    )
    return InboundCall(operation, payload, message.is_mtom)


def _drop_xmime_attributes(payload: etree._Element) -> None:
    # Some MTOM stacks mark binaries with xmime:contentType; the XSD types (base64Binary) have no
    # attributes, and the hint carries nothing we use.
    for node in payload.iter():
        for name in [n for n in node.attrib if n.startswith(f"{{{XMIME_NS}}}")]:
            del node.attrib[name]
