"""The official SDICoop schemas from package data, compiled offline, and the hardened XML parser."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

# Byte-for-byte copies of the official files (sha256 in shared/fatturapa/SOURCES.md); flat, so the
# WSDLs' relative schemaLocation imports resolve next to them.
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "sdicoop"
XMLDSIG_XSD = "xmldsig-core-schema.xsd"
MESSAGGI_XSD = "MessaggiTypes_v1.1.xsd"  # RC, NS, MC, NE, DT, AT, MT, EC, SE (ns .../sdi/messaggi/v1.0)
DATI_FATTURA_MESSAGGI_XSD = "DatiFatturaMessaggi_v2.0.xsd"  # EsitoFile of SdITrasmissioneFile (LI/DF)


# Bounds on untrusted XML, checked on the bytes before libxml2 builds a tree: a tree costs about 30
# times its text (7 MB of `<a/>` took 220 MB), and the XSD keeps a report of about a kilobyte for
# each unexpected attribute (7 MB of them: 870 MB). SDICoop envelopes and SDI messages have dozens.
MAX_ELEMENTS = 10_000
MAX_ATTRIBUTES = 1_000  # as fatturapa.parsing
# Encodings in which '<', '=' and quotes are the bytes counted below (WS-I R4003: UTF-8, UTF-16).
# libxml2 would also read UTF-7, ISO-2022-JP, ... through iconv, where markup hides from a byte count.
ACCEPTED_ENCODINGS = frozenset(
    {"UTF-8", "UTF8", "UTF-16", "UTF-16LE", "UTF-16BE", "US-ASCII", "ASCII", "ISO-8859-1", "LATIN1"}
)
_DECLARED = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*<\?xml\s[^>]*?encoding\s*=\s*["\']([^"\']{0,40})["\']')
_ATTRIBUTE = re.compile(rb"=[\x00\s]*[\"']")  # `a="`, `a = '`, also as UTF-16/32 code units


class InvalidXml(ValueError):
    """Not well-formed, or it carries a DTD: untrusted XML is refused before anything reads it."""


class NotWellFormed(InvalidXml):
    """libxml2 could not parse it (as opposed to refusing what it could have parsed)."""


def check_bounds(data: bytes) -> None:
    """Refuse what would cost memory out of proportion before it is parsed (over-estimates: a '<'
    in a comment counts too); `parse_untrusted` counts the attributes exactly afterwards."""
    declared = _DECLARED.match(data)
    if declared and declared.group(1).decode("ascii", "replace").upper() not in ACCEPTED_ENCODINGS:
        raise InvalidXml(f"encoding {declared.group(1).decode('ascii', 'replace')!r}: send UTF-8 or UTF-16")
    if data.count(b"<") > 2 * MAX_ELEMENTS:
        raise InvalidXml(f"more than {MAX_ELEMENTS} elements")
    if _more_than(5 * MAX_ATTRIBUTES, _ATTRIBUTE.finditer(data)):
        raise InvalidXml(f"more than {MAX_ATTRIBUTES} attributes")


def _more_than(limit: int, matches: Iterator[object]) -> bool:
    return any(True for _ in itertools.islice(matches, limit, None))


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
    """Parse XML from the network: refuses DTDs (so entities too), anything not well-formed, other
    encodings than UTF-8/UTF-16 (and ASCII, Latin-1), and more elements or attributes than a message has."""
    check_bounds(data)
    try:
        root = etree.fromstring(data, _untrusted_parser())
    except etree.XMLSyntaxError as exc:
        raise NotWellFormed(f"not well-formed XML: {exc}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise InvalidXml("a DTD is not allowed")
    if (docinfo.encoding or "UTF-8").upper() not in ACCEPTED_ENCODINGS:  # e.g. UTF-32, told by a BOM
        raise InvalidXml(f"encoding {docinfo.encoding}: send UTF-8 or UTF-16")
    if int(_COUNT_ATTRIBUTES(root)) > MAX_ATTRIBUTES:  # in an encoding the byte count cannot read
        raise InvalidXml(f"more than {MAX_ATTRIBUTES} attributes")
    return root


_COUNT_ATTRIBUTES = etree.XPath("count(//@*)")


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
