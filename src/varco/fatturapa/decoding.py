"""Base64 as clients send it: `dataFile` in JSON bodies, or `.p7m` files saved as base64 text."""

from __future__ import annotations

import base64
import binascii
import re

from varco.fatturapa.errors import FatturaPAError, refuse

_WHITESPACE = re.compile(rb"\s+")
_ALPHABET = re.compile(rb"[A-Za-z0-9+/]*={0,2}")


def decode_base64(data: str | bytes | None) -> bytes:
    """Decode standard base64, tolerating line wrapping and missing padding.

    Empty or missing input is 0002 (`dataFile` missing); anything else that is not base64 is 0098.
    """
    if data is None:
        raise refuse("0002", "dataFile is missing", "Send the invoice file base64-encoded in dataFile.")
    if isinstance(data, str):
        try:
            data = data.encode("ascii")
        except UnicodeEncodeError as exc:
            raise _invalid(f"non-ASCII character at offset {exc.start}") from None
    if data and len(data) % 4 == 0 and not data.endswith(b"==="):
        # What most clients send, padded base64 on one line: decoded at C speed.
        try:
            return binascii.a2b_base64(data, strict_mode=True)
        except binascii.Error:
            pass  # wrapped, unpadded or broken: the checks below tolerate or explain it
    compact = _WHITESPACE.sub(b"", data)
    if not compact:
        raise refuse("0002", "dataFile is empty", "Send the invoice file base64-encoded in dataFile.")
    if not _ALPHABET.fullmatch(compact):
        bad = re.search(rb"[^A-Za-z0-9+/=]", compact) or re.search(rb"=+[^=]", compact)
        offset = bad.start() if bad else 0
        raise _invalid(f"character {compact[offset : offset + 1]!r} at offset {offset} is not base64")
    if len(compact) % 4 == 1:
        raise _invalid(f"length {len(compact)} cannot be base64 (truncated?)")
    # Some clients drop the padding: restore it rather than refuse an otherwise sound file.
    compact += b"=" * (-len(compact) % 4)
    try:
        return base64.b64decode(compact, validate=True)
    except binascii.Error as exc:
        raise _invalid(str(exc)) from None


def looks_like_base64(data: bytes) -> bool:
    """True when `data` holds only base64 characters and whitespace (cheap sniff, no decoding)."""
    return re.fullmatch(rb"[A-Za-z0-9+/=\s]+", data[:4096]) is not None


def _invalid(reason: str) -> FatturaPAError:
    return refuse("0098", f"Base64 encoding of the invoice file is invalid: {reason}", _HINT)


_HINT = "Encode the whole file with standard base64 (RFC 4648, alphabet A-Z a-z 0-9 + /)."
