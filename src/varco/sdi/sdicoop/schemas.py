"""The official SDICoop schemas from package data, compiled offline, and the hardened XML parser."""

from __future__ import annotations

import threading
from pathlib import Path

from lxml import etree

# Byte-for-byte copies of the official files (sha256 in shared/fatturapa/SOURCES.md); flat, so the
# WSDLs' relative schemaLocation imports resolve next to them.
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "sdicoop"
XMLDSIG_XSD = "xmldsig-core-schema.xsd"
MESSAGGI_XSD = "MessaggiTypes_v1.1.xsd"  # RC, NS, MC, NE, DT, AT, MT, EC, SE (ns .../sdi/messaggi/v1.0)
DATI_FATTURA_MESSAGGI_XSD = "DatiFatturaMessaggi_v2.0.xsd"  # EsitoFile of SdITrasmissioneFile (LI/DF)


class InvalidXml(ValueError):
    """Not well-formed, or it carries a DTD: untrusted XML is refused before anything reads it."""


def data_file(name: str) -> Path:
    """A packaged SDICoop file by its official name (no directories: nothing outside DATA_DIR)."""
    path = DATA_DIR / name
    if "/" in name or "\\" in name or not path.is_file():
        raise FileNotFoundError(f"no SDICoop file {name!r} in package data")
    return path


def _untrusted_parser() -> etree.XMLParser:
    # No DTD, no entity expansion, no network, no huge trees (libxml2's depth and size limits stay on).
    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        dtd_validation=False,
        no_network=True,
        huge_tree=False,
        remove_pis=True,
    )


def parse_untrusted(data: bytes) -> etree._Element:
    """Parse XML from the network: refuses DTDs (so entities too) and anything not well-formed."""
    try:
        root = etree.fromstring(data, _untrusted_parser())
    except etree.XMLSyntaxError as exc:
        raise InvalidXml(f"not well-formed XML: {exc}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise InvalidXml("a DTD is not allowed")
    return root


class _XmldsigResolver(etree.Resolver):
    """Maps the xmldsig import, relative or W3C absolute, to the packaged copy; nothing else is loaded."""

    def resolve(self, system_url, public_id, context):  # (lxml's signature)
        if system_url and system_url.endswith(XMLDSIG_XSD):
            return self.resolve_filename(str(data_file(XMLDSIG_XSD)), context)
        return None


def _compile(name: str) -> etree.XMLSchema:
    # Trusted package data: the xmldsig schema needs its internal DTD subset (entities), never the network.
    parser = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=True)
    parser.resolvers.add(_XmldsigResolver())
    document = etree.parse(str(data_file(name)), parser)
    return etree.XMLSchema(document)


_compiled = threading.local()  # an XMLSchema keeps the error log of its last run: one per thread


def schema(name: str) -> etree.XMLSchema:
    """The compiled XSD of that packaged file (cached per thread)."""
    cached: dict[str, etree.XMLSchema] = _compiled.__dict__.setdefault("schemas", {})
    if name not in cached:
        cached[name] = _compile(name)
    return cached[name]


def validation_error(validator: etree.XMLSchema, element: etree._Element) -> str | None:
    """None when the element is valid, else the first error, short enough for a faultstring."""
    if validator.validate(element):
        return None
    error = next(iter(validator.error_log), None)
    return (error.message if error is not None else "invalid")[:300]
