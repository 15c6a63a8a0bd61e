"""Delivery decisions: claiming the head of a lane, outcomes (the fan-out is fanout.py).

A lane is (endpoint, ordering key): the invoice file name, or the event type for events without
one (updateUsage). Only the oldest pending delivery of a lane is attempted, so a later event of an
invoice never overtakes an earlier one. Each claim is a lease: the POST runs after the claiming
transaction commits (tasks.py), and a crash mid-way leaves a lease that expires and is retried.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.audit import service as audit
from varco.callbacks import envelope, fanout, secret_store
from varco.callbacks.models import CallbackDelivery, CallbackEndpoint
from varco.callbacks.repository import CallbackRepository
from varco.callbacks.sender import Attempt, Outcome
from varco.callbacks.states import DeliveryStatus, EndpointEvent, EndpointStatus, next_status
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.events import service as events
from varco.events.models import Event
from varco.settings import Settings

log = logging.getLogger("varco.callbacks")

DISABLED_TYPE = "callbackDisabled"
LEASE_MARGIN = timedelta(seconds=60)  # beyond the HTTP timeout, before a claim counts as lost
PENDING = DeliveryStatus.PENDING.value


def add_test(session: UnitOfWork, endpoint: CallbackEndpoint, clock: Clock) -> CallbackDelivery:
    """A test delivery: its own lane, one attempt, no effect on the endpoint's state."""
    now = clock.now()
    uid = uuid.uuid4().hex
    delivery = CallbackRepository(session).add_delivery(
        CallbackDelivery(
            callback_id=endpoint.id,
            event_id=None,
            event_uid=uid,
            lane=f"test:{uid}",
            is_test=True,
            status=PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
    )
    fanout.wake(session, delivery.id, clock)
    return delivery


def claim(session: UnitOfWork, delivery_id: int, clock: Clock, settings: Settings) -> Attempt | None:
    """Lease the next attempt of a delivery that is due, heads its lane and is not in flight."""
    repo = CallbackRepository(session)
    found = repo.delivery(delivery_id)
    if found is None or found.status != PENDING:
        return None  # done already: a duplicate wake-up
    endpoint = repo.get(found.callback_id, for_update=True)  # lock order: endpoint, then delivery
    delivery = repo.delivery(delivery_id, for_update=True)
    assert endpoint is not None and delivery is not None
    if delivery.status != PENDING:
        return None
    if endpoint.status == EndpointStatus.DELETED or (
        endpoint.status == EndpointStatus.DISABLED and not delivery.is_test
    ):
        delivery.status, delivery.last_error = DeliveryStatus.CANCELLED.value, f"endpoint {endpoint.status}"
        return None
    now = clock.now()
    if delivery.next_attempt_at > now or (delivery.leased_until and delivery.leased_until > now):
        return None  # a delayed wake-up is scheduled, or an attempt is in flight
    if repo.has_earlier_pending(delivery):
        return None  # the head of the lane wakes this one when it is done
    delivery.attempts += 1
    delivery.first_attempt_at = delivery.first_attempt_at or now
    delivery.last_attempt_at = now
    delivery.leased_until = now + timedelta(seconds=settings.callback_timeout_seconds) + LEASE_MARGIN
    try:
        secret = secret_store.decrypt(endpoint.secret_encrypted, settings)
    except secret_store.SecretUnreadable as exc:
        failed = _attempt(delivery, endpoint, "", b"", "")
        record_result(session, failed, Outcome(None, str(exc)), clock, settings)  # a failure: None
        return None
    body, type_ = _body(session, delivery, endpoint)
    return _attempt(delivery, endpoint, secret, body, type_)


def _attempt(
    delivery: CallbackDelivery, endpoint: CallbackEndpoint, secret: str, body: bytes, type_: str
) -> Attempt:
    return Attempt(
        delivery_id=delivery.id,
        number=delivery.attempts,
        callback_id=endpoint.id,
        url=endpoint.url,
        secret=secret,
        event_uid=delivery.event_uid,
        event_type=type_,
        body=body,
        is_test=delivery.is_test,
        request_id=delivery.request_id,
    )


def _body(session: UnitOfWork, delivery: CallbackDelivery, endpoint: CallbackEndpoint) -> tuple[bytes, str]:
    if delivery.is_test:
        owner = accounts.get(session, endpoint.account_id)
        value = envelope.test_envelope(delivery.event_uid, endpoint.id, owner, delivery.created_at)
        return envelope.body_bytes(value), envelope.TEST_TYPE
    event = session.get(Event, delivery.event_id)
    assert event is not None
    value = envelope.envelope(event, accounts.get(session, event.account_id))
    return envelope.body_bytes(value), event.type


def backoff(attempts: int, settings: Settings) -> timedelta:
    """Exponential: base, 2 base, 4 base, ... capped (1, 2, 4 ... minutes up to 4 hours by default)."""
    delay = settings.callback_retry_base * (2 ** min(max(attempts - 1, 0), 30))
    return min(delay, settings.callback_retry_max_delay)


def record_result(
    session: UnitOfWork, attempt: Attempt, outcome: Outcome, clock: Clock, settings: Settings
) -> Attempt | None:
    """Store an attempt's outcome: delivered, a retry later, or give up. After a success the lane's
    next delivery is claimed at once and returned (a backlog drains without a job per event)."""
    repo = CallbackRepository(session)
    # Lock order endpoint, then delivery: as delete/enable, which lock the endpoint, then cancel.
    endpoint = repo.get(attempt.callback_id, for_update=True)
    delivery = repo.delivery(attempt.delivery_id, for_update=True)
    if endpoint is None or delivery is None or delivery.status != PENDING:
        return None
    if delivery.attempts != attempt.number and not outcome.delivered:
        return None  # the lease ran out and a newer attempt owns the delivery
    now = clock.now()
    delivery.leased_until = None
    delivery.last_status_code = outcome.status_code
    if outcome.delivered:
        delivery.status, delivery.delivered_at = DeliveryStatus.DELIVERED.value, now
        delivery.last_error = None
        following = repo.next_in_lane(delivery)
        if following is None:
            return None
        chained = claim(session, following, clock, settings)
        if chained is None:
            fanout.wake(session, following, clock)  # not claimable now (e.g. in flight): let a job decide
        return chained
    delivery.last_error = (outcome.error or "failed")[:500]
    if delivery.is_test:
        delivery.status = DeliveryStatus.FAILED.value
        return None
    deadline = (delivery.first_attempt_at or now) + settings.callback_retry_window
    if now >= deadline:
        delivery.status = DeliveryStatus.FAILED.value
        give_up(session, endpoint, delivery, clock, settings)
        return None
    delivery.next_attempt_at = min(now + backoff(delivery.attempts, settings), deadline)
    fanout.wake(session, delivery.id, clock, delay=delivery.next_attempt_at - now)
    return None


def give_up(
    session: UnitOfWork,
    endpoint: CallbackEndpoint,
    failed: CallbackDelivery,
    clock: Clock,
    settings: Settings,
) -> None:
    """Retry window spent: disable the endpoint, drop what waits for it, tell the owner."""
    if endpoint.status != EndpointStatus.ACTIVE:
        return
    now = clock.now()
    endpoint.status = next_status(EndpointStatus(endpoint.status), EndpointEvent.GIVE_UP).value
    hours = settings.callback_retry_window.total_seconds() / 3600
    endpoint.disabled_reason = (
        f"event {failed.event_uid} not delivered after {failed.attempts} attempts in {hours:g} hours: "
        f"{failed.last_error}"
    )[:500]
    endpoint.disabled_at = endpoint.updated_at = now
    cancelled = CallbackRepository(session).cancel_pending(endpoint.id, "endpoint disabled")
    owner = accounts.get(session, endpoint.account_id)
    assert owner is not None
    payload = {
        "callbackId": str(endpoint.id),
        "url": endpoint.url,
        "reason": endpoint.disabled_reason,
        "disabledAt": envelope.format_instant(now),
        "cancelledDeliveries": cancelled,
    }
    events.record(session, owner.id, DISABLED_TYPE, payload, now)
    details = {"callbackId": endpoint.id, "reason": "retry_window_spent", "count": failed.attempts}
    audit.record(session, audit.Kind.CALLBACK_DISABLED, audit.SYSTEM, clock, subject=owner, details=details)
    _notify_owner(session, owner, endpoint, failed, cancelled, clock)
    log.warning(
        "callback %s of %s disabled after %s attempts (%s pending cancelled): %s",
        endpoint.id,
        owner.username,
        failed.attempts,
        cancelled,
        failed.last_error,
    )


def _notify_owner(
    session: UnitOfWork,
    owner: Account,
    endpoint: CallbackEndpoint,
    failed: CallbackDelivery,
    cancelled: int,
    clock: Clock,
) -> None:
    from varco.mail import service as mail

    body = (
        f"Hello {owner.description or owner.username},\n\n"
        f"varco could not deliver events to your callback endpoint {endpoint.url} (id {endpoint.id}) "
        f"for a whole day and has disabled it.\nLast error: {endpoint.disabled_reason}\n"
        f"Deliveries dropped: {cancelled}.\n\n"
        "Nothing is lost: every event stays in the event feed (GET /api/v2/events?after=<cursor>).\n"
        f"Fix the endpoint, check it with POST /api/v2/callbacks/{endpoint.id}/test, then enable it "
        f"again with POST /api/v2/callbacks/{endpoint.id}/enable (or in the control panel, "
        f"/panel/callbacks/{endpoint.id}).\n"
    )
    mail.queue_message(
        session,
        key=f"callback-disabled:{endpoint.id}:{failed.id}",
        account_id=owner.id,
        to_address=owner.pec,
        subject=f"varco: callback endpoint {endpoint.id} disabled",
        body=body,
        clock=clock,
    )


def resume_stalled(session: UnitOfWork, clock: Clock, settings: Settings) -> list[int]:
    """Wake lane heads that should have run by now (lost wake-up, crash during an attempt)."""
    now = clock.now()
    ids = CallbackRepository(session).stale_heads(now - settings.stale_job_after, now)
    for delivery_id in ids:
        fanout.wake(session, delivery_id, clock)
    return ids
