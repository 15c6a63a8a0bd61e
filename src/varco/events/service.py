"""Record domain events (callbacks and the event feed read them later)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from varco.events.models import Event


def record(
    session: Session,
    account_id: int,
    type_: str,
    payload: dict[str, Any],
    now: datetime,
    subject: str | None = None,
) -> Event:
    """Add an event in the caller's transaction: it exists if and only if the change commits."""
    event = Event(
        account_id=account_id,
        type=type_,
        subject=subject,
        occurred_at=now,
        payload={"eventId": uuid.uuid4().hex, "type": type_, **payload},
    )
    session.add(event)
    return event
