"""What was sent: plain XML, a CAdES `.p7m` (DER or BER), or base64 text of either.

The signature's encoding is reported as "DER", "BER", "XML", or "base64+" one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from varco.fatturapa.cades import CadesEnvelope, open_cades
from varco.fatturapa.decoding import decode_base64, looks_like_base64
from varco.fatturapa.errors import FatturaPAError, refuse

_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class Envelope:
    content: bytes  # the invoice XML
    encoding: str  # how the XML (or the CAdES envelope) was carried
    cades: CadesEnvelope | None  # the signed-data, when the file was a .p7m


def open_envelope(data: bytes) -> Envelope:
    """Unwrap `data` down to the invoice XML; 0092 for a file that is not XML (nor an envelope, nor
    base64 text), 0098 for base64 text that does not decode, 0092 for unreadable envelopes."""
    sniffed = _open(data, prefix="")
    if sniffed is not None:
        return sniffed
    if data[:64].lstrip().startswith(b"-----BEGIN"):  # PEM armour around the base64 (openssl -outform PEM)
        data = b"\n".join(line for line in data.splitlines() if not line.startswith(b"-----"))
    elif not _reads_as_base64(data):
        raise refuse("0092", f"The file is not XML: {_what_it_is(data)}", _NOT_XML_HINT)
    decoded = decode_base64(data)
    sniffed = _open(decoded, prefix="base64+")
    if sniffed is None:
        raise refuse(
            "0092",
            "The file is not XML, and decoded as base64 text it is neither XML nor a CAdES (.p7m) "
            f"envelope: {_what_it_is(decoded)}",
            "Base64-encode the invoice XML or the signed .p7m file itself.",
        )
    return sniffed


_NOT_XML_HINT = (
    "Send the invoice's FatturaPA XML file (it starts with <?xml or <), its signed .p7m, or base64 of "
    "either; not a PDF, an image or another document."
)
_BASE64_HEAD = re.compile(rb"[A-Za-z0-9+/=]{16}")
_MAGIC = (  # what a file sent instead of an invoice most often is
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"{", "JSON"),
)


def _reads_as_base64(data: bytes) -> bool:
    """Whether `data` is meant as base64 text: base64 characters and whitespace as far as the sniff
    reads, or at least a first 16 base64 characters (base64 broken further on: 0098 says where).
    Text with spaces or punctuation early on, binary, a PDF... are files that are not XML."""
    head = data.lstrip()[:16]
    return len(head) == 16 and (_BASE64_HEAD.fullmatch(head) is not None or looks_like_base64(data))


def _what_it_is(data: bytes) -> str:
    """What the bytes look like, for a message: a known kind of file, their text, or their bytes."""
    head = data.lstrip()[:24]
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    if kind is not None:
        return f"it looks like {kind}"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut at the end is still text
        text = head[: exc.start].decode("utf-8") if exc.start >= len(head) - 3 else ""
    if not text or any(c < " " and c not in "\t\r\n" or c == "\x7f" for c in text):
        return f"its first bytes are {head[:8].hex(' ')}"
    return f"it starts with {text!r}"


def _open(data: bytes, prefix: str) -> Envelope | None:
    head = data[:64].lstrip()[:4]
    if head.startswith(b"<") or head.startswith(_BOMS):
        return Envelope(data, f"{prefix}XML", None)
    if head.startswith(b"\x30"):  # ASN.1 SEQUENCE: a ContentInfo
        try:
            cades = open_cades(data)
        except FatturaPAError:
            # "0..." may also start base64 text; only a binary file is a broken envelope.
            if not prefix and looks_like_base64(data):
                return None
            raise
        return Envelope(cades.content, f"{prefix}{cades.encoding}", cades)
    return None
