"""Record domain events: the event row and its callback deliveries, in the caller's transaction
(the event feed and the callback workers read them later)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from varco.callbacks import fanout
from varco.callbacks.repository import CallbackRepository
from varco.core.db import detached_row
from varco.core.dialects import dialect_of
from varco.core.errors import ServiceUnavailable
from varco.core.uow import Fact, UnitOfWork
from varco.events.models import Event
from varco.events.repository import COLUMNS as _COLUMNS
from varco.events.repository import EventRepository
from varco.settings import get_settings

# PostgreSQL advisory lock that keeps the feed gap-free (docs/callbacks.md "Cursors"): writers hold
# it shared from their first event to their commit; a feed read takes it exclusively, so it never
# runs while an event with a smaller id is still uncommitted. SQLite serialises writers anyway.
FEED_LOCK = 0x7661_7263_6F_6576  # "varco ev"
_FEED_LOCK_HELD = Fact("holds the feed lock shared", lambda: False)  # taken once per transaction


def record(
    session: UnitOfWork,
    account_id: int,
    type_: str,
    payload: dict[str, Any],
    now: datetime,
    subject: str | None = None,
) -> Event:
    """Add an event in the caller's transaction: it exists if and only if the change commits.

    An event that no callback endpoint receives is written just before the commit, with the
    transaction's other such events in one statement (a batch of invoices records a dozen); its
    `id` is set then (`write_pending` writes them earlier). One that has receivers is written at
    once, after those recorded before it (ids follow the order of recording), and fanned out.
    Inside a savepoint an event is written at once, ahead of the transaction's pending ones (no
    code records events in one today)."""
    values = {
        "account_id": account_id,
        "type": type_,
        "subject": subject,
        "occurred_at": now,
        "payload": {"eventId": uuid.uuid4().hex, "type": type_, **payload},
    }
    event = detached_row(Event, values, None)  # its id comes with its row
    if session.in_nested_transaction():
        # Written at once, and nothing pending with it: a rollback of the savepoint would take
        # the transaction's pending events along (the feed then lists this one before them).
        _write(session, [event])
    elif not CallbackRepository(session).receivers_of(account_id):
        session.written_at_commit(_write).append(event)
        return event
    else:
        write_pending(session)
        _write(session, [event])
    fanout.fan_out(session, event)  # the outbox: its deliveries and their job rows, in this transaction
    return event


def write_pending(session: UnitOfWork) -> None:
    """Write the events recorded so far in this transaction (their ids are then set)."""
    session.written_at_commit(_write)(session)


def _write(session: UnitOfWork, events: list[Event]) -> None:
    rows = [{name: event.__dict__[name] for name in _COLUMNS} for event in events]
    # Append-only: ids without an ORM flush. On PostgreSQL the transaction's first event takes the
    # feed lock in the same statement (the lock before the id), the others follow in one more.
    if dialect_of(session).one_writer or session.fact(_FEED_LOCK_HELD):
        ids = EventRepository(session).append(rows)
    else:
        ids = [EventRepository(session).append_holding_lock(rows[0], FEED_LOCK)]
        session.remember(_FEED_LOCK_HELD, True)
        ids += EventRepository(session).append(rows[1:])
    for event, row_id in zip(events, ids, strict=True):
        event.__dict__["id"] = row_id  # a detached object: no attribute events


class FeedBusy(ServiceUnavailable):
    """Events are being written for longer than the feed waits: retry in a few seconds."""


def page(session: UnitOfWork, account_ids: list[int], after: int, limit: int) -> list[Event]:
    """Events of these accounts with an id above `after`, oldest first (the event feed)."""
    if not dialect_of(session).one_writer:
        # Bounded wait: a reader queued for the exclusive lock also holds back new writers.
        wait_ms = int(get_settings().events_feed_wait.total_seconds() * 1000)
        session.execute(text(f"SET LOCAL lock_timeout = {max(wait_ms, 1)}"))
        try:
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": FEED_LOCK})
        except OperationalError as exc:
            if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available
                raise
            raise FeedBusy() from None
        session.execute(text("SET LOCAL lock_timeout = 0"))
    return EventRepository(session).after(account_ids, after, limit)
