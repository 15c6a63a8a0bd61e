"""SOAP 1.1 envelopes: reading one from an HTTP body (plain or MTOM), writing one, and Faults."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from varco.sdi.sdicoop import mtom
from varco.sdi.sdicoop.schemas import InvalidXml, parse_untrusted

SOAP_ENV_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_ENV_NS = "http://www.w3.org/2003/05/soap-envelope"
ENVELOPE = f"{{{SOAP_ENV_NS}}}Envelope"
BODY = f"{{{SOAP_ENV_NS}}}Body"
HEADER = f"{{{SOAP_ENV_NS}}}Header"
FAULT = f"{{{SOAP_ENV_NS}}}Fault"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
XML_CONTENT_TYPE = "text/xml; charset=utf-8"  # SOAP 1.1 over HTTP (WS-I BP R1109 wants text/xml)


class NotSoap(ValueError):
    """Not a SOAP envelope at all (HTTP 400, WS-I BP R1113)."""


class VersionMismatch(ValueError):
    """A SOAP 1.2 envelope where SOAP 1.1 is spoken (SOAP 1.1 §4.4: faultcode VersionMismatch)."""


class BadEnvelope(ValueError):
    """A SOAP 1.1 envelope whose structure is wrong (a Client fault)."""


@dataclass(frozen=True)
class Envelope:
    root: etree._Element
    payload: etree._Element  # the only element child of soap:Body (document/literal, WS-I R9981)
    is_mtom: bool


@dataclass(frozen=True)
class Fault:
    faultcode: str  # local part, e.g. "Client", "Server"
    faultstring: str

    @property
    def is_client(self) -> bool:
        # "Client" and its dotted refinements ("Client.Authentication", SOAP 1.1 §4.4.1)
        return self.faultcode.split(".", 1)[0] == "Client"


def parse_root(content_type: str | None, body: bytes) -> tuple[etree._Element, bool]:
    """(root element, is_mtom): MTOM is turned into plain XML with inline base64 first."""
    if not body.strip():
        raise NotSoap("empty body")
    media = mtom.media_type(content_type)
    try:
        if media == "multipart/related":
            return mtom.decode(content_type or "", body), True
        if media not in ("", "text/xml", "application/xml", "application/soap+xml"):
            raise NotSoap(f"Content-Type {media} is not SOAP")
        return parse_untrusted(body), False
    except (InvalidXml, mtom.MtomError) as exc:
        raise NotSoap(str(exc)) from None


def read(content_type: str | None, body: bytes) -> Envelope:
    """The SOAP 1.1 envelope of an HTTP body. Raises NotSoap, VersionMismatch or BadEnvelope."""
    root, is_mtom = parse_root(content_type, body)
    if etree.QName(root).localname == "Envelope" and etree.QName(root).namespace == SOAP12_ENV_NS:
        raise VersionMismatch("a SOAP 1.2 envelope: this service speaks SOAP 1.1")
    if root.tag != ENVELOPE:
        raise NotSoap(f"the document is {etree.QName(root).localname!r}, not a SOAP 1.1 Envelope")
    children = [child for child in root if isinstance(child.tag, str)]
    bodies = [child for child in children if child.tag == BODY]
    if len(bodies) != 1 or children[-1] is not bodies[0] or any(c.tag != HEADER for c in children[:-1]):
        raise BadEnvelope("the Envelope must hold an optional Header and one Body, in that order")
    payload = [child for child in bodies[0] if isinstance(child.tag, str)]
    if len(payload) != 1:
        raise BadEnvelope(f"the Body must hold exactly one element, it holds {len(payload)}")
    return Envelope(root, payload[0], is_mtom)


def fault_of(payload: etree._Element) -> Fault | None:
    """The Fault carried by a Body element, if it is one."""
    if payload.tag != FAULT:
        return None
    code = (payload.findtext("faultcode") or "").strip()
    return Fault(code.rpartition(":")[2] or "Server", (payload.findtext("faultstring") or "").strip())


def _skeleton() -> tuple[etree._Element, etree._Element]:
    root = etree.Element(ENVELOPE, nsmap={"soap": SOAP_ENV_NS})
    return root, etree.SubElement(root, BODY)


def _serialise(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def write(payload: etree._Element) -> bytes:
    """A SOAP 1.1 envelope around a payload element, UTF-8 with declaration."""
    root, body = _skeleton()
    body.append(payload)
    return _serialise(root)


def fault_envelope(faultcode: str, faultstring: str) -> bytes:
    """A SOAP 1.1 Fault; faultcode is the local name in the envelope namespace (Client, Server, ...)."""
    root, body = _skeleton()
    fault = etree.SubElement(body, FAULT)
    etree.SubElement(fault, "faultcode").text = f"soap:{faultcode}"
    # lxml refuses control characters; a faultstring may quote what the caller sent
    etree.SubElement(fault, "faultstring").text = _NOT_XML.sub("\ufffd", faultstring)
    return _serialise(root)
