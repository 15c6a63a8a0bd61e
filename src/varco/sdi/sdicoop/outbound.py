"""Request messages built without zeep: what a simulated SDI sends to an intermediary, and test input."""

from __future__ import annotations

from dataclasses import dataclass

from varco.sdi.sdicoop import envelope, mtom
from varco.sdi.sdicoop.contracts import Service, contract
from varco.sdi.sdicoop.payloads import Request, to_element
from varco.sdi.sdicoop.schemas import schema, validation_error


@dataclass(frozen=True)
class RequestMessage:
    content_type: str
    body: bytes
    soap_action: str  # the HTTP SOAPAction header, quoted as SOAP 1.1 §6.1.1 wants

    def headers(self) -> dict[str, str]:
        return {"Content-Type": self.content_type, "SOAPAction": self.soap_action}


def build_request(
    service: Service, operation: str, payload: Request, *, as_mtom: bool = False
) -> RequestMessage:
    """The SOAP request of that operation, checked against the XSD; MTOM moves File/Metadati to parts."""
    spec = contract(service)
    op = spec.operation(operation)
    element = to_element(op.input, payload)
    error = validation_error(schema(spec.types_file), element)
    if error:
        raise ValueError(f"{op.input.localname} would not match {spec.types_file}: {error}")
    body = envelope.write(element)
    content_type = envelope.XML_CONTENT_TYPE
    if as_mtom:
        content_type, body = mtom.encode(body)
    return RequestMessage(content_type, body, f'"{op.soap_action}"')
