"""What was sent: plain XML, a CAdES `.p7m` (DER or BER), or base64 text of either.

The signature's encoding is reported as "DER", "BER", "XML", or "base64+" one of them.
"""

from __future__ import annotations

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
    """Unwrap `data` down to the invoice XML; 0098 for bad base64, 0092 for unreadable envelopes."""
    sniffed = _open(data, prefix="")
    if sniffed is not None:
        return sniffed
    if data[:64].lstrip().startswith(b"-----BEGIN"):  # PEM armour around the base64 (openssl -outform PEM)
        data = b"\n".join(line for line in data.splitlines() if not line.startswith(b"-----"))
    decoded = decode_base64(data)
    sniffed = _open(decoded, prefix="base64+")
    if sniffed is None:
        raise refuse(
            "0092",
            "The base64 content is neither XML nor a CAdES (.p7m) envelope",
            "Base64-encode the invoice XML or the signed .p7m file itself.",
        )
    return sniffed


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
