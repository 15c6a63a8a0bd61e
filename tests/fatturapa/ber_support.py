"""Signed envelopes re-encoded in BER, as some signing tools write them (and as attackers may)."""

from __future__ import annotations

from asn1crypto import cms


def tlv(tag: int, body: bytes) -> bytes:
    size = len(body)
    if size < 0x80:
        return bytes([tag, size]) + body
    length = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(length)]) + length + body


def indefinite(tag: int, *parts: bytes) -> bytes:
    return bytes([tag, 0x80]) + b"".join(parts) + b"\0\0"


def as_ber(der: bytes, chunk: int, *, certificates_padding: bytes = b"") -> bytes:
    """The same signed envelope in BER: indefinite lengths, the invoice in `chunk`-byte pieces."""
    signed = cms.ContentInfo.load(der)["content"]
    encap = signed["encap_content_info"]
    content = encap["content"].native
    pieces = [tlv(0x04, content[i : i + chunk]) for i in range(0, len(content), chunk)]
    certificates = tlv(0xA0, signed["certificates"].contents + certificates_padding)
    body = indefinite(
        0x30,
        signed["version"].dump(),
        signed["digest_algorithms"].dump(),
        indefinite(0x30, encap["content_type"].dump(), indefinite(0xA0, indefinite(0x24, *pieces))),
        certificates,
        signed["signer_infos"].dump(),
    )
    return indefinite(0x30, tlv(0x06, bytes.fromhex("2a864886f70d010702")), indefinite(0xA0, body))
