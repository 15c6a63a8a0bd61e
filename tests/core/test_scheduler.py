"""One scheduler across processes, outside the queue: periodic work runs once per minute however
many workers tick, on time behind a backlog, and the reconciler re-sends only lost wake-ups."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import delete, update

from varco.core import jobs, scheduler
from varco.core.db import unit_of_work
from varco.core.jobs import Task, enqueue
from varco.core.models import JobRow, PeriodicRun
from varco.settings import get_settings

NOTHING = Task("tests.nothing", ("n",))


@pytest.fixture
def fresh_lease(db, queue, clock):
    """The session's database keeps the lease between tests (each starts at the same clock time),
    and the jobs other tests left pending (the reconciler would send them here)."""
    with unit_of_work() as session:
        session.execute(delete(PeriodicRun))
        session.execute(update(JobRow).where(JobRow.status == "pending").values(status="failed"))
    ran: list[str] = []
    registry = jobs.registry()
    registry.add(NOTHING, lambda session, args, clock: None)
    registry.reconciler(lambda: ran.append("periodic"))
    yield ran
    registry.reconcilers.pop()
    with unit_of_work() as session:  # a failed test must not leave its backlog to the next ones
        session.execute(update(JobRow).where(JobRow.name == NOTHING.name).values(status="failed"))


def test_two_processes_ticking_in_the_same_minute_run_it_once(fresh_lease, clock):
    assert scheduler.tick(clock, who="host-a:1") is True
    assert scheduler.tick(clock, who="host-b:2") is False
    clock.advance(timedelta(seconds=55))  # the next tick of the other process, a little early
    assert scheduler.tick(clock, who="host-b:2") is True
    assert scheduler.tick(clock, who="host-a:1") is False
    assert fresh_lease == ["periodic", "periodic"]
    with unit_of_work() as session:
        assert session.get_one(PeriodicRun, "periodic").holder == "host-b:2"


def wake_ups_of(queue, rows) -> Counter:
    """How many wake-ups wait in the queue for each of `rows` (the domains' reconcilers may queue
    others, for what earlier tests left in the session's database)."""
    ours = {row.id for row in rows}
    found: Counter = Counter()
    for data in queue.huey.storage.enqueued_items():
        message = queue.huey.serializer.deserialize(data)
        if message.args and message.args[0] in ours:
            found[message.args[0]] += 1
    return found


def test_behind_a_backlog_of_two_thousand_jobs_it_runs_on_time_and_re_sends_none(fresh_lease, queue, clock):
    with unit_of_work() as session:
        rows = [enqueue(session, NOTHING, n=n) for n in range(2000)]
    assert queue.huey.pending_count() == 2000
    clock.advance(get_settings().stale_job_after * 3)  # every wake-up is old, none is lost
    assert scheduler.tick(clock) is True  # not a queued task: it does not wait for the 2000
    assert fresh_lease == ["periodic"]
    assert jobs.reconcile(clock) == []
    woken = wake_ups_of(queue, rows)
    assert len(woken) == 2000 and set(woken.values()) == {1}  # nothing queued twice

    queue.flush()  # now they are lost (a broker restarted empty): re-sent, a thousand a run
    assert len(jobs.reconcile(clock)) == 1000
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    assert len(jobs.reconcile(clock)) == 1000
    assert queue.drain() == 2000
    with unit_of_work() as session:
        assert {session.get_one(JobRow, row.id).status for row in rows} == {"done"}
