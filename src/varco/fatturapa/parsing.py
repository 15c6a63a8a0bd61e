"""Hardened XML parsing: no DTD, no entities, no network, UTF-8 only.

A document with a DOCTYPE is refused outright (XXE, billion laughs): FatturaPA never needs one.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import NoReturn

from lxml import etree

from varco.fatturapa.errors import refuse

_HINT = "Send a well-formed UTF-8 XML file without DOCTYPE, as the FatturaPA specification requires."
_local = threading.local()  # lxml parsers must not be shared between threads
_WHITESPACE = frozenset(b" \t\r\n")  # XML's white space, as byte values


def hardened_parser() -> etree.XMLParser:
    """This thread's parser: entities kept unresolved, no DTD loading, no network, no huge trees."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_blank_text=False,
        )
        _local.parser = parser
    return parser


def parse_xml(content: bytes) -> etree._Element:
    """Parse an invoice; 0092 with the parser's line and message when it is not acceptable XML."""
    # Refuse before parsing, so libxml2 never reads the DTD (entity amplification, external ids).
    line = _prolog_doctype_line(content)
    if line is not None:
        _refuse_doctype(line)
    # An attribute bomb costs its memory in the parse already: count before (an over-estimate,
    # `="` in text counts too), exactly after. At least one `=` per attribute bounds both counts
    # below; it is counted only as far as they need.
    equals = _count_up_to(content, b"=", 5 * MAX_ATTRIBUTES + 1)
    if equals > 5 * MAX_ATTRIBUTES and content.count(b'="') + content.count(b"='") > 5 * MAX_ATTRIBUTES:
        _refuse_attributes(f"more than {5 * MAX_ATTRIBUTES}")
    try:
        root = etree.fromstring(content, hardened_parser())
    except etree.XMLSyntaxError as exc:
        raise refuse(
            "0092",
            f"The file is not well-formed XML: line {exc.lineno}, column {exc.position[1]}: {_reason(exc)}",
            _HINT,
        ) from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:  # e.g. a UTF-16 prolog the byte scan cannot read
        _refuse_doctype(1)
    encoding = (docinfo.encoding or "UTF-8").upper()
    if encoding not in ("UTF-8", "UTF8"):
        raise refuse("0092", f"line 1: the file is encoded as {docinfo.encoding}; it must be UTF-8", _HINT)
    # The XSD reports every attribute it does not expect, and lxml keeps each report (about a
    # kilobyte): 400,000 attributes cost half a gigabyte. Invoices and signatures have dozens.
    # Without a DTD every attribute is written with its own `=`: with few `=` in the file, the
    # exact count (a walk over the whole tree) cannot exceed the limit.
    if equals > MAX_ATTRIBUTES:
        attributes = int(_COUNT_ATTRIBUTES(root))
        if attributes > MAX_ATTRIBUTES:
            _refuse_attributes(str(attributes))
    return root


def _count_up_to(data: bytes, byte: bytes, limit: int) -> int:
    """The occurrences of `byte` in `data`, `limit` at most: `find` jumps from one to the next
    (memchr), where `count` reads every byte; an invoice has a few dozen `=`."""
    count, position = 0, data.find(byte)
    while position >= 0 and count < limit:
        count += 1
        position = data.find(byte, position + 1)
    return count


def _refuse_attributes(how_many: str) -> None:
    raise refuse("0092", f"The file has {how_many} attributes; at most {MAX_ATTRIBUTES} are accepted", _HINT)


MAX_ATTRIBUTES = 1000
_COUNT_ATTRIBUTES = etree.XPath("count(//@*)")


def text_at(element: etree._Element, path: str) -> str | None:
    """Text of the first element at `path` below `element`; None when absent or empty."""
    return _string_of(path)(element) or None


def texts_at(element: etree._Element, path: str) -> list[str]:
    """Texts of every element at `path` below `element`, in document order."""
    return _texts_of(path)(element)


# Compiled XPath is ~3x faster than ElementPath's find/findtext for multi-step paths.
@lru_cache(maxsize=256)
def _string_of(path: str) -> etree.XPath:
    return etree.XPath(f"string({path})")


@lru_cache(maxsize=256)
def _texts_of(path: str) -> etree.XPath:
    return etree.XPath(f"{path}/text()", smart_strings=False)


def _prolog_doctype_line(content: bytes) -> int | None:
    """Line of a DOCTYPE in the prolog (after BOM, declaration, comments, PIs), in one linear scan."""
    pos = 3 if content.startswith(b"\xef\xbb\xbf") else 0
    size = len(content)
    while True:
        # A plain loop over the usual blank or two costs less than a regex match and its match object.
        while pos < size and content[pos] in _WHITESPACE:
            pos += 1
        for opener, closer in ((b"<?", b"?>"), (b"<!--", b"-->")):
            if content.startswith(opener, pos):
                end = content.find(closer, pos + len(opener))
                if end < 0:
                    return None  # unterminated: the parser reports it
                pos = end + len(closer)
                break
        else:
            return content.count(b"\n", 0, pos) + 1 if content.startswith(b"<!DOCTYPE", pos) else None


def _refuse_doctype(line: int) -> NoReturn:
    raise refuse("0092", f"line {line}: a DOCTYPE declaration is not allowed in an invoice", _HINT)


def xpath_of(element: etree._Element) -> str:
    """Absolute path of an element, as the rules report it (RuleContext.xpath_of)."""
    return element.getroottree().getpath(element)


def _reason(exc: etree.XMLSyntaxError) -> str:
    message = exc.msg or str(exc)
    # libxml2 appends ", line N, column M" which the message already says.
    head, sep, _ = message.rpartition(", line ")
    reason = head if sep else message
    if "encoding" in reason or "UTF-8" in reason:
        reason += " (the file must be UTF-8)"
    return reason
