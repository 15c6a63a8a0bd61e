"""MTOM/XOP (multipart/related, application/xop+xml) to and from plain SOAP with inline base64.

The Exchange System sends and answers with MTOM (sdicoop-notes.md). We do our own decoding rather
than rely on zeep's: zeep strips CR/LF from both ends of every `binary` part (a file ending in a
newline, or a .p7m whose last byte is 0x0a, comes out altered), ignores the `start` parameter and
needs Content-ID in angle brackets. Here parts are byte-exact.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from email.message import Message
from urllib.parse import unquote

from lxml import etree

from varco.sdi.sdicoop.schemas import parse_untrusted

XOP_NS = "http://www.w3.org/2004/08/xop/include"
XOP_INCLUDE = f"{{{XOP_NS}}}Include"
MAX_PARTS = 64  # the SDICoop messages carry at most two binaries (File, Metadati)
_MAX_HEADER_BYTES = 16 * 1024


class MtomError(ValueError):
    """Not a readable multipart/related XOP message."""


@dataclass(frozen=True)
class Part:
    headers: dict[str, str]  # lower-case names
    content: bytes

    @property
    def content_id(self) -> str | None:
        value = self.headers.get("content-id")
        return value.strip().removeprefix("<").removesuffix(">") if value else None


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_multipart(content_type: str | None) -> bool:
    return media_type(content_type) == "multipart/related"


def _params(content_type: str) -> Message:
    message = Message()
    message["content-type"] = content_type
    return message


def _headers(block: bytes) -> dict[str, str]:
    if len(block) > _MAX_HEADER_BYTES:
        raise MtomError("part headers too long")
    headers: dict[str, str] = {}
    name = None
    for line in block.decode("latin-1").splitlines():
        if line[:1] in (" ", "\t") and name:  # folded continuation
            headers[name] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise MtomError(f"bad part header line {line[:60]!r}")
        name = name.strip().lower()
        headers[name] = value.strip()
    return headers


def _decode(part_headers: dict[str, str], content: bytes) -> bytes:
    encoding = part_headers.get("content-transfer-encoding", "binary").strip().lower()
    try:
        if encoding == "base64":
            return base64.b64decode(b"".join(content.split()), validate=True)
        if encoding == "quoted-printable":
            return quopri.decodestring(content)
    except binascii.Error as exc:
        raise MtomError(f"bad base64 part: {exc}") from None
    if encoding in ("binary", "8bit", "7bit"):
        return content
    raise MtomError(f"unsupported Content-Transfer-Encoding {encoding!r}")


def split(content_type: str, body: bytes) -> list[Part]:
    """The parts of a multipart body, contents decoded and byte-exact (the CRLF before a delimiter
    belongs to the delimiter, RFC 2046 §5.1.1)."""
    boundary = _params(content_type).get_param("boundary")
    if not isinstance(boundary, str) or not boundary:
        raise MtomError("multipart/related without a boundary")
    if len(boundary) > 70 or not boundary.isascii():  # RFC 2046 §5.1.1: 1 to 70 ASCII characters
        raise MtomError("the multipart boundary must be 1 to 70 ASCII characters")
    delimiter = b"--" + boundary.encode("ascii")
    newline = b"\r\n" if (b"\r\n" + delimiter) in body or body.startswith(delimiter + b"\r\n") else b"\n"
    parts = []
    for chunk in _chunks(newline + body, newline + delimiter):  # the preamble is skipped
        if chunk.startswith(b"--"):  # the close delimiter: the rest is epilogue
            break
        if len(parts) == MAX_PARTS:  # checked before the part is read: a body of empty parts stays cheap
            raise MtomError(f"more than {MAX_PARTS} parts")
        _, found, rest = chunk.partition(newline)  # after the delimiter: transport padding, newline
        if not found:
            raise MtomError("malformed multipart delimiter line")
        if rest.startswith(newline):  # no headers at all
            head, content = b"", rest[len(newline) :]
        else:
            head, found, content = rest.partition(newline + newline)
            if not found:
                raise MtomError("part without a header/body separator")
        headers = _headers(head)
        parts.append(Part(headers, _decode(headers, content)))
    else:
        raise MtomError("multipart body without its close delimiter" if parts else "no multipart delimiter")
    if not parts:
        raise MtomError("multipart body without parts")
    return parts


def _chunks(body: bytes, delimiter: bytes) -> Iterator[bytes]:
    """What follows each delimiter up to the next (or the end), one at a time: never a list of them all."""
    start = body.find(delimiter)
    while start >= 0:
        start += len(delimiter)
        end = body.find(delimiter, start)
        yield body[start:] if end < 0 else body[start:end]
        start = end


def _cid(href: str) -> str:
    return unquote(href.removeprefix("cid:"))  # RFC 2392: the href is URL-encoded


def decode(content_type: str, body: bytes) -> etree._Element:
    """The root XML part, parsed (hardened), with every xop:Include replaced by its part in base64."""
    parts = split(content_type, body)
    start = _params(content_type).get_param("start")
    start_id = start.strip().removeprefix("<").removesuffix(">") if isinstance(start, str) else None
    root_part = next((p for p in parts if p.content_id == start_id), None) if start_id else parts[0]
    if root_part is None:
        raise MtomError(f"no part has the start Content-ID <{start_id}>")
    by_id: dict[str, Part] = {}
    for part in parts:
        if part.content_id and part is not root_part:
            if part.content_id.lower() in by_id:  # which one was meant? (Content-IDs are unique, RFC 2392)
                raise MtomError(f"two parts have the Content-ID <{part.content_id}>")
            by_id[part.content_id.lower()] = part
    root = parse_untrusted(root_part.content)
    for include in list(root.iter(XOP_INCLUDE)):
        href = include.get("href") or ""
        # A part is inlined once: a thousand includes of one 5 MB part would be 6.7 GB of base64.
        part = by_id.pop(_cid(href).lower(), None)
        if part is None:
            raise MtomError(f"xop:Include {href!r} names no part, or a part included already")
        parent = include.getparent()
        if parent is None or len(parent) != 1 or (parent.text or "").strip():
            raise MtomError("xop:Include must be the only content of its element")
        parent.remove(include)
        parent.text = base64.b64encode(part.content).decode("ascii")
    return root


def decode_to_bytes(content_type: str, body: bytes) -> bytes:
    """`decode`, serialised: a plain SOAP envelope with inline base64 (UTF-8)."""
    return etree.tostring(decode(content_type, body), xml_declaration=True, encoding="utf-8")


def encode(
    envelope: bytes, element_names: Iterable[str] = ("File", "Metadati"), *, start_info: str = "text/xml"
) -> tuple[str, bytes]:
    """(content_type, body): the envelope as MTOM, the base64 text of every unqualified element with
    one of those names moved to a binary part (what the Exchange System does with File/Metadati)."""
    root = parse_untrusted(envelope)
    names = set(element_names)
    token = uuid.uuid4().hex
    boundary = f"MIMEBoundary_{token}"
    root_id = f"root.{token}@varco"
    attachments: list[tuple[str, bytes]] = []
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag not in names or len(element):
            continue
        cid = f"{len(attachments)}.{token}@varco"
        attachments.append((cid, base64.b64decode("".join((element.text or "").split()), validate=True)))
        element.text = None
        etree.SubElement(element, XOP_INCLUDE, nsmap={"xop": XOP_NS}, href=f"cid:{cid}")
    xml = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    out = [
        f"--{boundary}\r\n"
        f'Content-Type: application/xop+xml; charset=UTF-8; type="{start_info}"\r\n'
        "Content-Transfer-Encoding: binary\r\n"
        f"Content-ID: <{root_id}>\r\n\r\n".encode(),
        xml,
    ]
    for cid, content in attachments:
        out.append(
            f"\r\n--{boundary}\r\n"
            "Content-Type: application/octet-stream\r\n"
            "Content-Transfer-Encoding: binary\r\n"
            f"Content-ID: <{cid}>\r\n\r\n".encode()
        )
        out.append(content)
    out.append(f"\r\n--{boundary}--\r\n".encode())
    content_type = (
        f'multipart/related; type="application/xop+xml"; boundary="{boundary}"; '
        f'start="<{root_id}>"; start-info="{start_info}"'
    )
    return content_type, b"".join(out)
