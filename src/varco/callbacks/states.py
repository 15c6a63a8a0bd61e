"""Endpoint and delivery states, and the guarded moves between endpoint states."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from varco.core.errors import BadRequest


class EndpointStatus(StrEnum):
    ACTIVE = "ACTIVE"  # receives new events
    DISABLED = "DISABLED"  # retry budget spent (or never re-enabled): receives nothing, test events only
    DELETED = "DELETED"  # kept for the delivery history; invisible to the API


class EndpointEvent(StrEnum):
    GIVE_UP = "give_up"  # a delivery failed for the whole retry window
    ENABLE = "enable"  # the owner turns it back on
    DELETE = "delete"


class DeliveryStatus(StrEnum):
    PENDING = "PENDING"  # waiting for its turn, in flight, or waiting for a retry
    DELIVERED = "DELIVERED"  # the receiver answered 2xx
    FAILED = "FAILED"  # given up (retry window spent; a test event after one attempt)
    CANCELLED = "CANCELLED"  # its endpoint was disabled or deleted first


S, E = EndpointStatus, EndpointEvent
TRANSITIONS: Final[dict[tuple[EndpointStatus, EndpointEvent], EndpointStatus]] = {
    (S.ACTIVE, E.GIVE_UP): S.DISABLED,
    (S.DISABLED, E.ENABLE): S.ACTIVE,
    (S.ACTIVE, E.ENABLE): S.ACTIVE,  # enabling an active endpoint changes nothing
    (S.ACTIVE, E.DELETE): S.DELETED,
    (S.DISABLED, E.DELETE): S.DELETED,
}


class IllegalEndpointMove(BadRequest):
    """This change is not allowed in the endpoint's current state."""


def next_status(current: EndpointStatus, event: EndpointEvent) -> EndpointStatus:
    if (current, event) not in TRANSITIONS:
        raise IllegalEndpointMove(f"cannot {event.value} a callback endpoint that is {current.value}")
    return TRANSITIONS[current, event]
