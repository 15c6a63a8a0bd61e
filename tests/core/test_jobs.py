"""Durable jobs: sent after commit, dropped on rollback, recovered by the reconciler when lost."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import select

from tests.factories import unique_name
from varco.accounts import service
from varco.core import jobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.dialects import dialect_of
from varco.core.jobs import Task, enqueue, follow_on, reconcile, run_job
from varco.core.models import JobRow
from varco.core.uow import Fact
from varco.settings import get_settings

RUNS: list[str] = []
TRANSACTIONS: list[int] = []  # the unit of work each batched job ran in


CREATE_ACCOUNT = Task("tests.create_account", ("username",))
EXPLODE = Task("tests.explode")
THEN_FOLLOW_ON = Task("tests.then_follow_on", ("first", "second"))
FOLLOW_ON = Task("tests.follow_on", ("username",))
BATCHED = Task("tests.batched", ("username",), batches=True)
SIGNAL = Task("tests.signal")
AHEAD = Task("tests.ahead", ("username",), batches=True)
AHEAD_FAILS = Task("tests.ahead_fails", ("username",), batches=True)
WORKED_OUT = Fact("tests: worked out", lambda: "in the transaction", per_job=True)
AHEAD_CALLS: list[tuple[list[str], bool]] = []  # the usernames it was given, the lock free then


@pytest.fixture(autouse=True)
def _test_tasks(queue):  # the queue fixture installs the app's registry
    registry = jobs.registry()
    registry.add(CREATE_ACCOUNT, _create_account)
    registry.add(EXPLODE, _explode)
    registry.add(THEN_FOLLOW_ON, _then_follow_on)
    registry.add(FOLLOW_ON, _follow_on)
    registry.add(BATCHED, _create_or_fail)
    registry.add(AHEAD, _found_worked_out, ahead=_work_out)
    registry.add(AHEAD_FAILS, _found_worked_out, ahead=_explode)


def _create_account(session, args, clock):
    """Idempotent: creates the account only if it is not there yet."""
    RUNS.append(args["username"])
    if service.find(session, args["username"]) is None:
        service.create_account(session, service.NewAccount(args["username"], "pw"), get_settings(), clock)


def _create_or_fail(session, args, clock):
    TRANSACTIONS.append(id(session))
    if args["username"].startswith("fail-"):
        RUNS.append(args["username"])
        raise RuntimeError("boom")
    _create_account(session, args, clock)


def _work_out(session, batch, clock):
    probe = sqlite3.connect(session.get_bind().url.database, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")  # fails if anyone holds SQLite's write lock
        probe.execute("ROLLBACK")
        free = True
    except sqlite3.OperationalError:
        free = False
    finally:
        probe.close()
    AHEAD_CALLS.append(([args["username"] for args in batch], free))
    return [{WORKED_OUT: f"ahead for {args['username']}"} for args in batch]


def _found_worked_out(session, args, clock):
    RUNS.append(f"{args['username']}: {session.fact(WORKED_OUT)}")


def _explode(session, args, clock):
    raise RuntimeError("boom")


def _status(job_id: int) -> str:
    with unit_of_work() as session:
        return session.get(JobRow, job_id).status


def _account_exists(username: str) -> bool:
    with unit_of_work() as session:
        return service.find(session, username) is not None


def test_job_is_sent_after_commit_and_runs(db, clock, queue):
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, CREATE_ACCOUNT, username=name)
        assert queue.huey.pending_count() == 0  # nothing is sent before the commit
    assert queue.huey.pending_count() == 1
    assert queue.drain() == 1
    assert _status(row.id) == "done"
    assert _account_exists(name)


def test_rollback_drops_the_job(db, clock, queue):
    with pytest.raises(RuntimeError), unit_of_work() as session:
        enqueue(session, CREATE_ACCOUNT, username=unique_name())
        raise RuntimeError("request failed")
    assert queue.huey.pending_count() == 0


def test_lost_job_is_recovered_by_the_reconciler(db, clock, queue):
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, CREATE_ACCOUNT, username=name)
    queue.flush()  # the broker lost the message
    assert queue.drain() == 0
    assert _status(row.id) == "pending"
    assert reconcile() == []  # not stale yet: its wake-up may still be on its way
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    assert row.id in reconcile()
    queue.drain()
    assert _status(row.id) == "done"
    assert _account_exists(name)


def test_duplicate_wake_ups_run_the_job_once(db, clock, queue):
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, CREATE_ACCOUNT, username=name)
    queue.send(row.id)
    queue.send(row.id)
    RUNS.clear()
    queue.drain()
    assert RUNS == [name]
    assert run_job(row.id) == "done"
    assert RUNS == [name]


def test_idempotency_key_yields_one_job(db, clock, queue):
    key = unique_name("key")
    with unit_of_work() as session:
        first = enqueue(session, CREATE_ACCOUNT, key=key, username=unique_name())
        second = enqueue(session, CREATE_ACCOUNT, key=key, username=unique_name())
    assert first.id == second.id


def test_failing_job_is_retried_then_marked_failed(db, clock, queue):
    with unit_of_work() as session:
        row = enqueue(session, EXPLODE)
    queue.drain()
    with unit_of_work() as session:
        stored = session.get(JobRow, row.id)
        assert (stored.status, stored.attempts, stored.last_error) == ("pending", 1, "RuntimeError: boom")
    for _ in range(20):
        clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
        reconcile()
        queue.drain()
    assert _status(row.id) == "failed"


def test_delayed_job_waits_for_the_clock(db, clock, queue):
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, CREATE_ACCOUNT, delay=timedelta(hours=1), username=name)
    assert queue.drain() == 0
    assert run_job(row.id) == "pending"
    clock.advance(timedelta(hours=1))
    reconcile()
    queue.drain()
    assert _status(row.id) == "done"
    with unit_of_work() as session:
        assert session.scalar(select(JobRow.attempts).where(JobRow.id == row.id)) == 1
    assert current_clock() is clock


# -- follow-ons: work that continues a job in its transaction --------------------------------

FAIL_FOLLOW_ON: list[BaseException] = []  # raised, one per run, by the next follow-ons


def _then_follow_on(session, args, clock):
    """Creates one account, then hands the second to a follow-on."""
    _create_account(session, {"username": args["first"]}, clock)
    follow_on(session, FOLLOW_ON, key=f"follow:{args['second']}", clock=clock, username=args["second"])


def _follow_on(session, args, clock):
    if FAIL_FOLLOW_ON:
        raise FAIL_FOLLOW_ON.pop()
    _create_account(session, args, clock)


def _jobs_named(name: str) -> list[JobRow]:
    with unit_of_work() as session:
        return list(session.scalars(select(JobRow).where(JobRow.name == name)))


def test_a_follow_on_runs_in_the_job_s_transaction_without_a_job_row(db, clock, queue):
    first, second = unique_name(), unique_name()
    with unit_of_work() as session:
        row = enqueue(session, THEN_FOLLOW_ON, first=first, second=second)
    assert queue.drain() == 1  # one wake-up ran both
    assert _status(row.id) == "done"
    assert _account_exists(first) and _account_exists(second)
    assert not [j for j in _jobs_named("tests.follow_on") if j.key == f"follow:{second}"]


def test_a_follow_on_outside_a_worker_is_an_ordinary_job(db, clock, queue):
    name = unique_name()
    with unit_of_work() as session:
        follow_on(session, FOLLOW_ON, key=f"follow:{name}", clock=clock, username=name)
    assert not _account_exists(name)  # not run in the caller's transaction
    [row] = [j for j in _jobs_named("tests.follow_on") if j.key == f"follow:{name}"]
    queue.drain()
    assert _status(row.id) == "done" and _account_exists(name)


def test_a_failing_follow_on_undoes_the_first_attempt_and_the_job_is_retried_at_once(db, clock, queue):
    first, second = unique_name(), unique_name()
    with unit_of_work() as session:
        row = enqueue(session, THEN_FOLLOW_ON, first=first, second=second)
    FAIL_FOLLOW_ON[:] = [RuntimeError("follow-on failed")]
    # One drain, no clock move: the failed first attempt rolled back and woke the job again; the
    # retry committed the job's own work and queued the follow-on, which then ran as a job.
    queue.drain()
    with unit_of_work() as session:
        stored = session.get(JobRow, row.id)
        assert (stored.status, stored.attempts) == ("done", 2)
        assert "follow-on tests.follow_on failed: RuntimeError" in stored.last_error
    assert _account_exists(first) and _account_exists(second)
    [follow] = [j for j in _jobs_named("tests.follow_on") if j.key == f"follow:{second}"]
    assert follow.status == "done"


def test_a_follow_on_that_kills_its_worker_runs_as_a_job_after_the_reconciler(db, clock, queue):
    first, second = unique_name(), unique_name()
    with unit_of_work() as session:
        row = enqueue(session, THEN_FOLLOW_ON, first=first, second=second)
    FAIL_FOLLOW_ON[:] = [SystemExit("worker killed")]  # not an Exception: nothing records it
    with pytest.raises(SystemExit):
        run_job(row.id)
    assert _status(row.id) == "pending" and not _account_exists(first)
    queue.flush()  # the dead worker's wake-up is gone
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    assert row.id in reconcile()
    queue.drain()  # re-sent: a retry, so the follow-on goes to a job of its own
    assert _status(row.id) == "done" and _account_exists(first) and _account_exists(second)
    [follow] = [j for j in _jobs_named("tests.follow_on") if j.key == f"follow:{second}"]
    assert follow.status == "done"


def test_due_first_attempts_of_a_batching_kind_run_in_the_transaction_of_one_wake_up(db, clock, queue):
    names = [unique_name() for _ in range(3)]
    with unit_of_work() as session:
        rows = [enqueue(session, BATCHED, username=name) for name in names]
    RUNS.clear()
    assert run_job(rows[0].id) == "done"
    assert RUNS == names  # oldest first
    assert [_status(row.id) for row in rows] == ["done"] * 3 and all(map(_account_exists, names))
    assert queue.drain() == 3  # the others' wake-ups find them done and run nothing
    assert RUNS == names


@pytest.fixture
def ahead_of_the_lock():
    """As `varco worker` runs (cli.py): its batches work ahead of SQLite's write lock."""
    jobs.work_ahead_of_the_lock()
    yield
    jobs.work_ahead_of_the_lock(False)


def test_a_worker_process_on_sqlite_works_ahead_of_the_write_lock_for_the_batch_it_foresees(
    db, clock, queue, ahead_of_the_lock
):
    names = [unique_name() for _ in range(3)]
    with unit_of_work() as session:
        rows = [enqueue(session, AHEAD, username=name) for name in names]
    RUNS.clear()
    AHEAD_CALLS.clear()
    assert run_job(rows[0].id) == "done"
    if dialect_of(session).one_writer:
        assert AHEAD_CALLS == [(names, True)]  # once, for the whole batch, with the lock free
        assert RUNS == [f"{name}: ahead for {name}" for name in names]  # each found its own
    else:  # PostgreSQL locks rows, not the database: nothing to gain, the work stays in the batch
        assert AHEAD_CALLS == [] and RUNS == [f"{name}: in the transaction" for name in names]
    assert [_status(row.id) for row in rows] == ["done"] * 3


def test_work_ahead_that_fails_leaves_the_work_to_the_batch(db, clock, queue, ahead_of_the_lock):
    # It only ever saves time: its failure is not the jobs'.
    names = [unique_name() for _ in range(2)]
    with unit_of_work() as session:
        rows = [enqueue(session, AHEAD_FAILS, username=name) for name in names]
    RUNS.clear()
    assert run_job(rows[0].id) == "done"
    assert RUNS == [f"{name}: in the transaction" for name in names]
    assert [_status(row.id) for row in rows] == ["done"] * 2


def test_workers_inside_varco_serve_do_no_work_ahead_of_the_lock(db, clock, queue):
    # Their threads share one interpreter with the requests: the work would gain nothing outside.
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, AHEAD, username=name)
    RUNS.clear()
    AHEAD_CALLS.clear()
    assert run_job(row.id) == "done"
    assert AHEAD_CALLS == [] and RUNS == [f"{name}: in the transaction"]


def test_the_batch_is_at_most_job_batch_jobs(db, clock, queue, configure):
    configure(job_batch=2)
    with unit_of_work() as session:
        rows = [enqueue(session, BATCHED, username=unique_name()) for _ in range(3)]
    assert run_job(rows[0].id) == "done"
    assert [_status(row.id) for row in rows] == ["done", "done", "pending"]
    configure(job_batch=1)  # off
    with unit_of_work() as session:
        more = [enqueue(session, BATCHED, username=unique_name()) for _ in range(2)]
    assert run_job(more[0].id) == "done"
    assert [_status(row.id) for row in [rows[2], *more]] == ["pending", "done", "pending"]
    queue.drain()
    assert {_status(row.id) for row in [*rows, *more]} == {"done"}


def test_a_job_that_fails_in_a_batch_is_charged_alone_and_the_others_run_again(db, clock, queue):
    ok_before, failing, ok_after = unique_name(), f"fail-{unique_name()}", unique_name()
    with unit_of_work() as session:
        rows = [enqueue(session, BATCHED, username=name) for name in (ok_before, failing, ok_after)]
    assert run_job(rows[0].id) == "pending"  # rolled back with the failing one, woken again
    assert not _account_exists(ok_before)  # nothing of the batch was kept
    with unit_of_work() as session:
        first, failed, third = (session.get_one(JobRow, row.id) for row in rows)
        assert (first.attempts, third.attempts) == (0, 0)
        assert (failed.attempts, failed.last_error) == (1, "RuntimeError: boom")
    RUNS.clear()
    queue.drain()  # the others' wake-ups sent again, and the first three still queued
    assert _account_exists(ok_before) and _account_exists(ok_after)
    assert [_status(row.id) for row in rows] == ["done", "pending", "done"]
    assert RUNS.count(failing) == 1  # its own wake-up ran it again, alone: a retry never batches
    with unit_of_work() as session:
        assert session.get_one(JobRow, rows[1].id).attempts == 2


def _until_gathering(thread: threading.Thread) -> None:
    deadline = time.monotonic() + 30
    while not jobs.gathering():  # the thread has claimed its job and waits for more
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.005)


def _a_batched_job_gathered_on_postgresql(configure) -> JobRow:
    """A batching job whose batch of 3 waits up to 5 s for more (PostgreSQL: SQLite never waits)."""
    with unit_of_work() as session:
        if dialect_of(session).one_writer:
            pytest.skip(
                "SQLite: a batch runs at once, never gathers (waiting would hold its one writer's lock)"
            )
    configure(job_batch=3, job_batch_wait=5)
    with unit_of_work() as session:
        return enqueue(session, BATCHED, username=unique_name())


def test_on_postgresql_a_partial_batch_waits_for_jobs_that_come_due_until_it_is_full(
    db, clock, queue, configure
):
    first = _a_batched_job_gathered_on_postgresql(configure)
    TRANSACTIONS.clear()
    outcome: list[str] = []
    gatherer = threading.Thread(target=lambda: outcome.append(run_job(first.id)))
    gatherer.start()
    _until_gathering(gatherer)
    started = time.monotonic()
    # A job of another kind is not held back by the gathering.
    with unit_of_work() as session:
        other = enqueue(session, CREATE_ACCOUNT, username=unique_name())
    assert run_job(other.id) == "done" and jobs.gathering()
    with unit_of_work() as session:
        later = [enqueue(session, BATCHED, username=unique_name()) for _ in range(2)]
    # Another worker thread woken for one of them hands it over instead of claiming it alone.
    assert run_job(later[0].id) == "done"
    gatherer.join(30)
    assert outcome == ["done"] and time.monotonic() - started < 4  # full: it did not wait 5 s
    assert [_status(row.id) for row in [first, *later]] == ["done"] * 3
    assert len(TRANSACTIONS) == 3 and len(set(TRANSACTIONS)) == 1  # one transaction
    assert queue.drain() == 4 and len(TRANSACTIONS) == 3  # the wake-ups find them done


def test_a_stopping_worker_takes_no_new_job_into_the_batch_it_gathers(db, clock, queue, configure):
    """Told to stop while it gathers, a worker runs what it holds and claims nothing more: jobs that
    come due after the stop are the next worker's (tests/test_shutdown.py, a real `varco worker`)."""
    first = _a_batched_job_gathered_on_postgresql(configure)
    stop = threading.Event()
    outcome: list[str] = []

    def worker_thread() -> None:
        jobs.bind_stop_flag(stop)  # as each huey worker thread does before it runs a job
        outcome.append(run_job(first.id))

    gatherer = threading.Thread(target=worker_thread)
    gatherer.start()
    _until_gathering(gatherer)
    stop.set()
    started = time.monotonic()
    with unit_of_work() as session:
        later = enqueue(session, BATCHED, username=unique_name())
    gatherer.join(30)
    assert outcome == ["done"] and time.monotonic() - started < 4  # it did not wait the 5 s either
    assert _status(first.id) == "done" and _status(later.id) == "pending"
    with unit_of_work() as session:
        assert session.get_one(JobRow, later.id).attempts == 0


def test_a_partial_batch_runs_after_the_wait_or_at_once_on_sqlite(db, clock, queue, configure):
    with unit_of_work() as session:
        one_writer = dialect_of(session).one_writer
    configure(job_batch=8, job_batch_wait=5 if one_writer else 0.2)
    with unit_of_work() as session:
        row = enqueue(session, BATCHED, username=unique_name())
    started = time.monotonic()
    assert run_job(row.id) == "done"
    waited = time.monotonic() - started
    if one_writer:
        assert waited < 4  # the writer lock would stop every other writer meanwhile
    else:
        assert waited >= 0.2


def test_jobs_queued_longer_ago_than_the_wait_run_at_once(db, clock, queue, configure):
    """A backlog's jobs (a worker catching up) have waited enough: no worker holds them longer."""
    configure(job_batch=8, job_batch_wait=5)
    with unit_of_work() as session:
        row = enqueue(session, BATCHED, username=unique_name())
    clock.advance(timedelta(seconds=6))
    started = time.monotonic()
    assert run_job(row.id) == "done"
    assert time.monotonic() - started < 4


class _Polls:
    """huey as one worker thread reads it: tells the test when a read found the queue empty (the
    thread then sleeps until its next poll)."""

    def __init__(self, huey):
        self.huey = huey
        self.empty = threading.Event()

    def __getattr__(self, name):
        return getattr(self.huey, name)

    def dequeue(self):
        task = self.huey.dequeue()
        if task is None:
            self.empty.set()
        return task


def test_an_idle_worker_runs_a_wake_up_of_its_own_process_at_once(db, clock, queue):
    """Idle huey threads poll a SQLite queue ever less often (huey's default: up to every 10 s, so
    an idle `varco serve` took seconds to start an upload's asynchronous stage); a wake-up this
    process sends rings them awake."""
    from varco.core.worker import EmbeddedWorker

    ran = threading.Event()
    jobs.registry().add(SIGNAL, lambda session, args, clock: ran.set())
    embedded = EmbeddedWorker(queue, workers=1)
    thread, _ = embedded.consumer.worker_threads[0]
    thread.huey = polls = _Polls(queue.huey)
    thread.delay = thread.max_delay = 60  # asleep for a minute once it finds nothing
    embedded.start()
    try:
        assert polls.empty.wait(5)
        with unit_of_work() as session:
            row = enqueue(session, SIGNAL)
        assert ran.wait(5)
    finally:
        started = time.monotonic()
        embedded.stop()
    assert time.monotonic() - started < 5  # the stop rang it awake too
    assert _status(row.id) == "done"


def test_wake_ups_for_the_process_s_own_workers_stay_in_memory_until_they_end(db, clock, queue):
    # `varco serve` with its worker threads on SQLite (core/worker.py EmbeddedWorker): no write to
    # huey's file per wake-up; what its workers leave untaken goes there when they stop.
    queue.keep_local()
    try:
        names = [unique_name() for _ in range(2)]
        with unit_of_work() as session:
            first = enqueue(session, CREATE_ACCOUNT, username=names[0])
        assert queue.huey.pending_count() == 0 and queue.queued_job_ids() == {first.id}
        assert queue.drain() == 1 and _account_exists(names[0])
        with unit_of_work() as session:
            second = enqueue(session, CREATE_ACCOUNT, username=names[1])
    finally:
        queue.end_local()
    assert queue.huey.pending_count() == 1 and queue.queued_job_ids() == {second.id}
    with unit_of_work() as session:
        third = enqueue(session, CREATE_ACCOUNT, username=unique_name())
    assert queue.queued_job_ids() == {second.id, third.id}  # through huey again
    assert queue.drain() == 2 and _account_exists(names[1])


def test_a_transaction_hands_what_it_worked_out_to_its_job_run_by_this_process(db, clock, queue):
    # An upload hands its checks of the file to its asynchronous stage (invoices/service.py).
    names = [unique_name() for _ in range(3)]
    jobs.hand_over_to_workers_here()
    try:
        with unit_of_work() as session:
            handed = enqueue(session, AHEAD, username=names[0], facts={WORKED_OUT: "handed over"})
        with pytest.raises(RuntimeError), unit_of_work() as session:
            enqueue(session, AHEAD, username=names[1], facts={WORKED_OUT: "rolled back"})
            raise RuntimeError("the request failed")
        with unit_of_work() as session:
            plain = enqueue(session, AHEAD, username=names[2])
    finally:
        jobs.hand_over_to_workers_here(False)
    RUNS.clear()
    assert run_job(handed.id) == "done"  # a batch: it takes the other one along
    assert RUNS == [f"{names[0]}: handed over", f"{names[2]}: in the transaction"]
    assert _status(plain.id) == "done"


def test_without_workers_in_the_process_nothing_is_handed_over(db, clock, queue):
    # `varco serve --no-worker`, the CLI: the job runs in another process, which works it out.
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, AHEAD, username=name, facts={WORKED_OUT: "handed over"})
    RUNS.clear()
    assert run_job(row.id) == "done"
    assert RUNS == [f"{name}: in the transaction"]
