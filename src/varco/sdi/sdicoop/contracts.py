"""The five SDICoop services as their official WSDLs define them: operations, soapActions, elements."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from xml.sax.saxutils import quoteattr

from lxml import etree

from varco.sdi.sdicoop.schemas import data_file

WSDL_NS = "http://schemas.xmlsoap.org/wsdl/"
SOAPBIND_NS = "http://schemas.xmlsoap.org/wsdl/soap/"
XSD_NS = "http://www.w3.org/2001/XMLSchema"
_NS = {"wsdl": WSDL_NS, "soapbind": SOAPBIND_NS, "xsd": XSD_NS}


class Service(StrEnum):
    # varco's side (the SDI calls them)
    TRASMISSIONE_FATTURE = "TrasmissioneFatture"
    RICEZIONE_FATTURE = "RicezioneFatture"
    # the SDI's side (varco calls them; the simulated SDI serves them)
    SDI_RICEVI_FILE = "SdIRiceviFile"
    SDI_RICEVI_NOTIFICA = "SdIRiceviNotifica"
    SDI_TRASMISSIONE_FILE = "SdITrasmissioneFile"


WSDL_FILES: dict[Service, str] = {
    Service.TRASMISSIONE_FATTURE: "TrasmissioneFatture_v1.1.wsdl",
    Service.RICEZIONE_FATTURE: "RicezioneFatture_v1.0.wsdl",
    Service.SDI_RICEVI_FILE: "SdIRiceviFile_v1.0.wsdl",
    Service.SDI_RICEVI_NOTIFICA: "SdIRiceviNotifica_v1.0.wsdl",
    Service.SDI_TRASMISSIONE_FILE: "SdITrasmissioneFile_v2.0.wsdl",
}


@dataclass(frozen=True)
class Operation:
    service: Service
    name: str  # the WSDL operation name, e.g. "RicevutaConsegna"
    soap_action: str
    input: etree.QName  # the Body element of the request
    output: etree.QName | None  # the Body element of the answer; None for one-way operations

    @property
    def is_one_way(self) -> bool:
        return self.output is None


@dataclass(frozen=True)
class Contract:
    service: Service
    wsdl_file: str
    types_file: str  # the XSD the WSDL imports (two services share a namespace with different types)
    binding: etree.QName
    operations: tuple[Operation, ...]

    def operation(self, name: str) -> Operation:
        for operation in self.operations:
            if operation.name == name:
                return operation
        raise KeyError(f"{self.service} has no operation {name}")

    def operation_for(self, element: etree.QName) -> Operation | None:
        """The operation whose request is that Body element (unique within each official WSDL)."""
        return next((op for op in self.operations if op.input == element), None)


def _qname(root: etree._Element, prefixed: str) -> etree.QName:
    prefix, _, local = prefixed.rpartition(":")
    return etree.QName(root.nsmap[prefix or None], local)


@cache
def contract(service: Service) -> Contract:
    """The contract of a service, read from its packaged WSDL."""
    root = etree.parse(str(data_file(WSDL_FILES[service])), etree.XMLParser(no_network=True)).getroot()
    elements = {
        message.get("name"): _qname(root, message.find("wsdl:part", _NS).get("element"))
        for message in root.iterfind("wsdl:message", _NS)
    }

    def message_of(node: etree._Element | None) -> etree.QName | None:
        return None if node is None else elements[_qname(root, node.get("message")).localname]

    binding = root.find("wsdl:binding", _NS)
    actions = {
        op.get("name"): op.find("soapbind:operation", _NS).get("soapAction")
        for op in binding.iterfind("wsdl:operation", _NS)
    }
    operations = tuple(
        Operation(
            service=service,
            name=op.get("name"),
            soap_action=actions[op.get("name")],
            input=message_of(op.find("wsdl:input", _NS)),
            output=message_of(op.find("wsdl:output", _NS)),
        )
        for op in root.find("wsdl:portType", _NS).iterfind("wsdl:operation", _NS)
    )
    types_file = root.find("wsdl:types/xsd:schema/xsd:import", _NS).get("schemaLocation")
    binding_name = etree.QName(root.get("targetNamespace"), binding.get("name"))
    return Contract(service, WSDL_FILES[service], types_file, binding_name, operations)


_ADDRESS = re.compile(rb'(<[A-Za-z_][\w.-]*:address\s+location=)"[^"]*"')


def wsdl_document(service: Service, address: str) -> bytes:
    """The official WSDL, byte for byte, but for the soap:address location, which becomes `address`."""
    original = data_file(WSDL_FILES[service]).read_bytes()
    location = quoteattr(address).encode()
    rewritten, count = _ADDRESS.subn(lambda match: match.group(1) + location, original)
    if count != 1:
        raise RuntimeError(f"{WSDL_FILES[service]}: expected one soap:address, found {count}")
    return rewritten
