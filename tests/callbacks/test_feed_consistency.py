"""The feed never skips an event whose transaction commits after a later one (stable cursors)."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from tests.factories import bearer, make_account, sign_in
from varco.core.db import unit_of_work
from varco.events import service as events


def _usage(session, account_id: int, used: int, clock):
    """An event written at once, as it is just before the commit (the tests keep the transaction
    open after it): an event no endpoint receives waits for the commit (`events.record`)."""
    payload = {"username": "x", "year": 2026, "usedTransmissions": used}
    event = events.record(session, account_id, "updateUsage", payload, clock.now())
    events.write_pending(session)
    return event


def test_a_feed_read_waits_for_an_event_still_being_committed(db, clock, configure, client):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time: event ids always commit in order")
    configure(events_feed_wait="0.1")
    account = make_account()
    token = sign_in(client, account.username)
    with unit_of_work() as slow:
        early = _usage(slow, account.id, 1, clock)
        with unit_of_work() as fast:  # a later event commits while the earlier one is open
            late = _usage(fast, account.id, 2, clock)
        assert late.id > early.id
        # Reading now would return `late` and move the client's cursor past `early` for ever.
        with pytest.raises(events.FeedBusy), unit_of_work() as reader:
            events.page(reader, [account.id], 0, 10)
        busy = client.get("/api/v2/events", headers=bearer(token))  # waited 0.1 s, then gave up
        assert busy.status_code == 503 and busy.json()["errorCode"] == "0095"
    with unit_of_work() as reader:
        assert [e.id for e in events.page(reader, [account.id], 0, 10)] == [early.id, late.id]


def test_events_roll_back_with_the_change_they_report(db, clock):
    account = make_account()
    with pytest.raises(RuntimeError), unit_of_work() as session:
        _usage(session, account.id, 1, clock)
        raise RuntimeError("the change failed")
    with unit_of_work() as reader:
        assert events.page(reader, [account.id], 0, 10) == []


def test_an_event_draws_its_id_only_once_it_holds_the_feed_lock(db, clock):
    """The first event of a transaction takes the feed lock in its own INSERT: the lock must come
    before the id, or a reader could pass an id drawn by a writer that does not hold it yet."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time: no feed lock")
    account = make_account()
    recorded: list[int] = []

    def write() -> None:
        with unit_of_work() as session:
            recorded.append(_usage(session, account.id, 1, clock).id)

    sequence = text("SELECT last_value, is_called FROM events_id_seq")
    waiting = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    with db.engine.connect() as reader:
        reader.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": events.FEED_LOCK})
        before = reader.execute(sequence).one()
        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 30
        while not reader.execute(waiting).scalar():  # the writer's INSERT waits for the lock
            assert time.monotonic() < deadline and writer.is_alive()
            time.sleep(0.01)
        assert reader.execute(sequence).one() == before  # and has drawn no id meanwhile
        reader.rollback()  # lets the writer go
    writer.join(30)
    assert recorded and recorded[0] > (before.last_value if before.is_called else 0)


def test_a_savepoint_rolled_back_keeps_the_events_recorded_before_it(db, clock):
    """Events no endpoint receives wait for the commit; one recorded inside a savepoint for an
    account with a receiver is written there, and rolling the savepoint back loses only it."""
    from varco.callbacks import service as callbacks
    from varco.settings import get_settings

    quiet, watched = make_account(), make_account()
    with unit_of_work() as session:
        callbacks.register(
            session, watched, callbacks.NewCallback(url="https://example.com/hook"), get_settings(), clock
        )
    with unit_of_work() as session:
        kept = events.record(session, quiet.id, "updateUsage", {"usedTransmissions": 1}, clock.now())
        savepoint = session.begin_nested()
        events.record(session, watched.id, "updateUsage", {"usedTransmissions": 1}, clock.now())
        savepoint.rollback()
        after = events.record(session, quiet.id, "updateUsage", {"usedTransmissions": 2}, clock.now())
    with unit_of_work() as reader:
        assert [e.id for e in events.page(reader, [quiet.id], 0, 10)] == [kept.id, after.id]
        assert events.page(reader, [watched.id], 0, 10) == []


def test_events_written_together_keep_the_order_they_were_recorded_in(db, clock):
    """A transaction's events that no endpoint receives are written together at its commit: the
    feed lists them in the order they were recorded, with the ids their objects were given."""
    account = make_account()
    with unit_of_work() as session:
        recorded = [
            events.record(session, account.id, "updateUsage", {"usedTransmissions": n}, clock.now())
            for n in range(12)
        ]
        assert {event.id for event in recorded} == {None}  # not written before the commit
    with unit_of_work() as reader:
        feed = events.page(reader, [account.id], 0, 100)
    assert [e.payload["usedTransmissions"] for e in feed] == list(range(12))
    assert [e.id for e in feed] == [event.id for event in recorded]
