"""`Content-Disposition: attachment` headers that any file name keeps valid (RFC 6266, RFC 8187).

A received invoice's attachment name comes from the sender's XML (`NomeAttachment`): CR/LF or a
quote in it would break the header (h11 drops the connection) or inject another. Plain names stay
exactly as the contract shows them (`attachment; filename=<name>.conservazione.zip`).
"""

from __future__ import annotations

import re
from urllib.parse import quote

_PLAIN = re.compile(r"[A-Za-z0-9._-]{1,200}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._ ()+-]")


def attachment(name: str) -> str:
    """The header value: `filename=` as is for plain names, else an ASCII fallback plus `filename*`."""
    if _PLAIN.fullmatch(name):
        return f"attachment; filename={name}"
    fallback = _UNSAFE.sub("_", name)[:200].strip() or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name[:200], safe='')}"
