"""Request and response bodies of the callback API and the event feed (camelCase, as the contract)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from varco.callbacks.envelope import format_instant
from varco.callbacks.models import CallbackDelivery, CallbackEndpoint


def _instant(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


class CallbackCreate(BaseModel):
    url: str = Field(description="http(s) URL; https only in production, public addresses only")
    events: list[str] | None = Field(
        default=None,
        description="createInvoice, updateInvoiceStatus, updateUsage, callbackDisabled; omitted: all",
    )
    description: str | None = None


class CallbackOut(BaseModel):
    id: str
    url: str
    events: list[str]
    description: str
    status: str  # ACTIVE | DISABLED
    secretHint: str  # last four characters of the secret
    disabledReason: str | None
    disabledAt: str | None
    createdAt: str
    updatedAt: str

    @classmethod
    def of(cls, endpoint: CallbackEndpoint) -> CallbackOut:
        return cls(
            id=str(endpoint.id),
            url=endpoint.url,
            events=list(endpoint.event_types),
            description=endpoint.description,
            status=endpoint.status,
            secretHint=endpoint.secret_hint,
            disabledReason=endpoint.disabled_reason,
            disabledAt=_instant(endpoint.disabled_at),
            createdAt=format_instant(endpoint.created_at),
            updatedAt=format_instant(endpoint.updated_at),
        )


class CallbackWithSecret(CallbackOut):
    secret: str = Field(description="Shown only in this answer: store it to verify Varco-Signature")

    @classmethod
    def with_secret(cls, endpoint: CallbackEndpoint, secret: str) -> CallbackWithSecret:
        return cls(**CallbackOut.of(endpoint).model_dump(), secret=secret)


class CallbackList(BaseModel):
    count: int
    callbacks: list[CallbackOut]


class TestQueued(BaseModel):
    deliveryId: str
    eventId: str
    status: str


class DeliveryOut(BaseModel):
    id: str
    eventId: str
    type: str
    status: str  # PENDING | DELIVERED | FAILED | CANCELLED
    attempts: int
    lastStatusCode: int | None
    lastError: str | None
    nextAttemptAt: str | None
    lastAttemptAt: str | None
    deliveredAt: str | None
    createdAt: str

    @classmethod
    def of(cls, delivery: CallbackDelivery, type_: str | None) -> DeliveryOut:
        return cls(
            id=str(delivery.id),
            eventId=delivery.event_uid,
            type=type_ or "test",
            status=delivery.status,
            attempts=delivery.attempts,
            lastStatusCode=delivery.last_status_code,
            lastError=delivery.last_error,
            nextAttemptAt=_instant(delivery.next_attempt_at) if delivery.status == "PENDING" else None,
            lastAttemptAt=_instant(delivery.last_attempt_at),
            deliveredAt=_instant(delivery.delivered_at),
            createdAt=format_instant(delivery.created_at),
        )


class DeliveryList(BaseModel):
    count: int
    deliveries: list[DeliveryOut]


class EventItem(BaseModel):
    eventId: str
    type: str
    cursor: str | None
    occurredAt: str
    account: dict[str, Any] | None
    data: dict[str, Any]


class EventPage(BaseModel):
    events: list[EventItem]
    nextCursor: str = Field(description="Pass as `after` to read on; equals `after` when nothing is new")
    hasMore: bool
