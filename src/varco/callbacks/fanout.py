"""Fan-out: the deliveries of an event, created in the event's transaction (`events.record` calls
it), each woken by a job row committed with them (the outbox: nothing is lost between the change
and its callbacks)."""

from __future__ import annotations

from datetime import timedelta

from varco.callbacks.models import CallbackDelivery
from varco.callbacks.repository import CallbackRepository
from varco.callbacks.states import DeliveryStatus
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.logs import current_request_id
from varco.core.uow import UnitOfWork
from varco.events.models import Event

DELIVER = jobs.Task("callbacks.deliver", ("delivery_id",))  # run by callbacks.tasks.deliver
PENDING = DeliveryStatus.PENDING.value


def wake(session: UnitOfWork, delivery_id: int, clock: Clock, delay: timedelta | None = None) -> None:
    """Ask a worker to try this delivery (after commit, or at clock time now + delay)."""
    jobs.enqueue(session, DELIVER, delay=delay, clock=clock, delivery_id=delivery_id)


def lane_of(event: Event) -> str:
    """The ordering key: the invoice file name; for an account-level event (updateUsage) its type
    and account, so that one stuck delivery holds back only that account's counters."""
    return (event.subject or f"{event.type}:{event.account_id}")[:120]


def fan_out(session: UnitOfWork, event: Event, clock: Clock | None = None) -> list[CallbackDelivery]:
    """One delivery per active endpoint that may see this event and wants its type."""
    # The app's clock, not the event's time: the SDI simulator may record events at its own time.
    clock = clock or current_clock()
    repo = CallbackRepository(session)
    now = clock.now()
    request_id = current_request_id.get()
    created = []
    for endpoint in repo.receivers_of(event.account_id):
        if event.type not in endpoint.event_types:
            continue
        delivery = repo.add_delivery(
            CallbackDelivery(
                callback_id=endpoint.id,
                event_id=event.id,
                event_uid=event.payload["eventId"],
                lane=lane_of(event),
                is_test=False,
                status=PENDING,
                attempts=0,
                next_attempt_at=now,
                created_at=now,
                request_id=None if request_id == "-" else request_id,
            )
        )
        # The delivery before it in the lane wakes it when done (§ ordering); locking that one
        # makes sure its outcome is recorded after this commit, so it sees this delivery.
        if repo.lock_previous_pending(delivery) is None:
            wake(session, delivery.id, clock)
        created.append(delivery)
    return created
