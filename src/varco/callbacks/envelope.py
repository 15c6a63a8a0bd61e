"""The JSON a receiver gets, also one item of the event feed: the same bytes for every attempt."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from varco.accounts.models import Account
from varco.events.models import Event

ROME = ZoneInfo("Europe/Rome")
TEST_TYPE = "test"


def format_instant(value: datetime) -> str:
    """decisions.md dates: ISO 8601 with milliseconds and the Italian offset."""
    return value.astimezone(ROME).isoformat(timespec="milliseconds")


def account_ref(account: Account | None) -> dict[str, Any] | None:
    """The taxpayer the event is about (its owner; a delegate sees it through the delegation)."""
    if account is None:
        return None
    return {
        "username": account.username,
        "description": account.description,
        "countryCode": account.country_code,
        "vatCode": account.vat_code,
        "fiscalCode": account.fiscal_code,
    }


def envelope(event: Event, account: Account | None) -> dict[str, Any]:
    """`{eventId, type, cursor, occurredAt, account, data}`; data is what the domain recorded."""
    data = {k: v for k, v in event.payload.items() if k not in ("eventId", "type")}
    return {
        "eventId": event.payload["eventId"],
        "type": event.type,
        "cursor": str(event.id),
        "occurredAt": format_instant(event.occurred_at),
        "account": account_ref(account),
        "data": data,
    }


def test_envelope(event_uid: str, callback_id: int, owner: Account | None, at: datetime) -> dict[str, Any]:
    """A test event: not in the feed (no cursor), never retried."""
    return {
        "eventId": event_uid,
        "type": TEST_TYPE,
        "cursor": None,
        "occurredAt": format_instant(at),
        "account": account_ref(owner),
        "data": {"callbackId": str(callback_id), "message": "Test event from varco: your endpoint works."},
    }


def body_bytes(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
