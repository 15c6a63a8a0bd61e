"""`Varco-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>` (docs/callbacks.md).

The timestamp is inside the signed text, so a receiver that refuses old timestamps refuses replays.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import datetime

SIGNATURE_HEADER = "Varco-Signature"
EVENT_ID_HEADER = "Varco-Event-Id"
EVENT_TYPE_HEADER = "Varco-Event-Type"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def header(secret: str, when: datetime, body: bytes) -> str:
    timestamp = int(when.timestamp())
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def verify(secret: str, value: str, body: bytes, now: datetime, tolerance_seconds: int = 300) -> bool:
    """What a receiver does: a fresh timestamp and a matching v1 (any of several, during rotations)."""
    parts = [item.split("=", 1) for item in value.split(",") if "=" in item]
    stamps = [v for k, v in parts if k.strip() == "t"]
    if len(stamps) != 1 or not re.fullmatch(r"[0-9]{1,12}", stamps[0].strip()):
        return False
    timestamp = int(stamps[0])
    if abs(now.timestamp() - timestamp) > tolerance_seconds:
        return False
    expected = signature(secret, timestamp, body)
    return any(k.strip() == "v1" and hmac.compare_digest(v.strip(), expected) for k, v in parts)
