"""Background jobs: rows in `jobs` are the truth, huey only delivers wake-ups.

`enqueue(uow, TASK, ...)` adds a row in the caller's unit of work and registers the huey message
to be sent once it commits (dropped on rollback). A worker runs the row's handler in its own unit
of work and marks it done in the same commit, so a duplicate message is a no-op. A periodic
reconciler re-sends pending rows whose message was lost (crash, flushed queue).

A `Task` names a kind of job; the module that enqueues it declares it. Which function runs it is
decided by the `Registry` that the entry points build from an explicit list (varco/jobs_list.py,
each domain's `tasks.register`), so that this module imports no domain.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from queue import Queue
from typing import Any
from weakref import WeakKeyDictionary

from huey import Huey, MemoryHuey, RedisHuey
from huey.storage import RedisStorage, SqliteStorage
from sqlalchemy import bindparam, func, or_, select, update

from varco.core import metrics
from varco.core.clock import Clock, current_clock
from varco.core.db import Database, append_row, detached_row, get_database, reading, unit_of_work
from varco.core.dialects import dialect_of, per_dialect
from varco.core.logs import current_job, current_request_id, new_request_id
from varco.core.models import JobRow
from varco.core.uow import Fact, UnitOfWork
from varco.settings import get_settings

log = logging.getLogger("varco.jobs")

Handler = Callable[[UnitOfWork, dict[str, Any], Clock], None]
Preparer = Callable[[UnitOfWork, list[dict[str, Any]]], None]
# Work done before a batch takes the write lock (SQLite): for each job's args, the facts its
# handler will find in its transaction (see Registry.add).
Ahead = Callable[[UnitOfWork, list[dict[str, Any]], Clock], list[dict[Fact[Any], Any]]]
Reconciler = Callable[[], object]
MAX_ATTEMPTS = 10
_RESEND_PER_RUN = 1000  # lost wake-ups re-sent by one reconciler run; the next minute sends more
_WAKE_UPS = "jobs: wake-ups"  # the after-commit hook that sends them
# The request that caused a job, kept in its arguments (handlers never see it): its log lines, the
# jobs it enqueues and the callbacks it sends carry that request's id (docs/operations.md).
REQUEST_ID_ARG = "_request_id"


@dataclass(frozen=True)
class Task:
    """A kind of job: its name in the jobs table and the names of its arguments."""

    name: str
    args: tuple[str, ...] = ()
    # Due first attempts of this kind may run together in one worker transaction, up to
    # settings.job_batch ("Jobs in batches" in docs/architecture.md): for work done in great
    # numbers whose handler writes only to the database (no call out before its commit).
    batches: bool = False

    def check(self, args: dict[str, Any]) -> None:
        if set(args) != set(self.args):
            takes = ", ".join(self.args) or "no arguments"
            raise TypeError(f"job {self.name} takes {takes}, not {sorted(args)}")


class Registry:
    """The functions that run each task, and the periodic reconcilers (built by the entry points)."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}
        self._batching: dict[str, Preparer | None] = {}
        self._ahead: dict[str, Ahead] = {}
        self.reconcilers: list[Reconciler] = []

    def add(
        self, task: Task, handler: Handler, *, prepare: Preparer | None = None, ahead: Ahead | None = None
    ) -> None:
        """`handler(uow, args, clock)` runs `task`; it must be idempotent (it may run again after a crash).

        `prepare(uow, [args, ...])`, for a task that batches, runs before a batch's handlers: it
        reads for all of them at once what each would read alone (the rows they lock).

        `ahead(uow, [args, ...], clock)`, for a task that batches, runs on SQLite before the batch
        takes the one write lock, in a transaction that only reads: the CPU work of each job that
        depends on nothing the lock guards (checking a file), so that the lock is held by writes
        alone (docs/architecture.md, "Work ahead of the lock"). It returns, for each args, facts
        that its handler then finds in its transaction (`uow.fact`); a job it did not foresee, or
        whose fact no longer matches, does the work itself, so it only ever saves time."""
        if self._handlers.get(task.name, handler) is not handler:
            raise ValueError(f"job {task.name} has a handler already")
        self._handlers[task.name] = handler
        if task.batches:
            self._batching[task.name] = prepare
            if ahead is not None:
                self._ahead[task.name] = ahead

    def batches(self, name: str) -> bool:
        return name in self._batching

    def preparer(self, name: str) -> Preparer | None:
        return self._batching.get(name)

    def ahead(self, name: str) -> Ahead | None:
        return self._ahead.get(name)

    def reconciler(self, fn: Reconciler) -> None:
        """Run `fn()` every minute after the job reconciler (it finds stuck rows)."""
        self.reconcilers.append(fn)

    def handler(self, name: str) -> Handler:
        return self._handlers[name]


_registry = Registry()


def use_registry(registry: Registry) -> None:
    """What the workers of this process run (the entry points set it; tests add their own tasks)."""
    global _registry
    _registry = registry


def registry() -> Registry:
    return _registry


# Core statements built once: every upload and every job runs them.
_JOBS = JobRow.__table__
_ID_BY_KEY = select(_JOBS.c.id).where(_JOBS.c.key == bindparam("key"))
_INSERT_UNLESS_KEY = per_dialect(
    lambda insert: insert(_JOBS).on_conflict_do_nothing(index_elements=["key"]).returning(_JOBS.c.id)
)
_CLAIMED = (
    _JOBS.c.id,
    _JOBS.c.name,
    _JOBS.c.args,
    _JOBS.c.status,
    _JOBS.c.attempts,
    _JOBS.c.run_after,
    _JOBS.c.created_at,
    _JOBS.c.sent_at,
)
# SKIP LOCKED: a job another worker holds (in a batch, say) is that worker's to finish or to wake
# again if it fails; waiting for its commit would only idle this worker. (SQLite: writers take
# turns at BEGIN IMMEDIATE, so no row is ever held by another writer.)
_CLAIM = select(*_CLAIMED).where(_JOBS.c.id == bindparam("job_id")).with_for_update(skip_locked=True)
_PEEK = select(*_CLAIMED).where(_JOBS.c.id == bindparam("job_id"))
# The other due first attempts of a batching kind, oldest wake-up first (ix_jobs_status_sent_at).
_DUE_MORE = (
    select(*_CLAIMED)
    .where(
        _JOBS.c.status == "pending",
        _JOBS.c.name == bindparam("name"),
        _JOBS.c.attempts == 0,
        _JOBS.c.sent_at == _JOBS.c.created_at,
        _JOBS.c.run_after <= bindparam("now"),
        _JOBS.c.id.not_in(bindparam("job_ids", expanding=True)),
    )
    .order_by(_JOBS.c.sent_at)
    .limit(bindparam("limit"))
)
_CLAIM_MORE = _DUE_MORE.with_for_update(skip_locked=True)
_DONE = (
    update(_JOBS)
    .where(_JOBS.c.id.in_(bindparam("job_ids", expanding=True)))
    .values(status="done", finished_at=bindparam("now"), attempts=_JOBS.c.attempts + 1)
)


def enqueue(
    uow: UnitOfWork,
    task: Task,
    *,
    key: str | None = None,
    delay: timedelta | None = None,
    clock: Clock | None = None,
    facts: dict[Fact[Any], Any] | None = None,
    **args: Any,
) -> JobRow:
    """Add a job row in this unit of work; its wake-up is sent after the commit.

    A new row goes in with a Core insert (the JobRow returned is not in the session, as with
    `append_row`); a key seen before returns that job's row. `facts`: work this transaction did
    that the job would do again (an upload's checks of its file), for the job's transaction if a
    worker of this process runs it (`hand_over_to_workers_here`); elsewhere the job does it."""
    task.check(args)
    now = (clock or current_clock()).now()
    request_id = current_request_id.get()
    values = {
        "name": task.name,
        "args": args if request_id == "-" else {**args, REQUEST_ID_ARG: request_id},
        "key": key,
        "status": "pending",
        "attempts": 0,
        "last_error": None,
        "created_at": now,
        "sent_at": now,
        "run_after": now + (delay or timedelta()),
        "finished_at": None,
    }
    if key is None:
        row = append_row(uow, JobRow, values)
    else:  # one statement for the usual case, a new key
        row_id = uow.connection().execute(_INSERT_UNLESS_KEY(uow), values).scalar()
        if row_id is None:
            return uow.get_one(JobRow, uow.scalar(_ID_BY_KEY, {"key": key}))
        row = detached_row(JobRow, values, row_id)
    metrics.count_on_commit(uow, metrics.JOBS, task.name, "enqueued")
    if facts and _handing_over:
        uow.on_commit(partial(_state().handed.put, row.id, facts))  # before its wake-up is sent
    if delay is None:
        _wake(uow, row.id)
    return row


def cancel(uow: UnitOfWork, key: str, clock: Clock | None = None) -> bool:
    """A pending job that is no longer needed ends as done, unrun (a guard whose work happened)."""
    done = uow.execute(
        update(_JOBS)
        .where(_JOBS.c.key == key, _JOBS.c.status == "pending")
        .values(status="done", finished_at=(clock or current_clock()).now())
    )
    return done.rowcount == 1


def _wake(uow: UnitOfWork, job_id: int) -> None:
    """Send the job's wake-up once the unit of work commits (the reconciler sends a lost one)."""
    uow.wake_ups.append(job_id)
    uow.on_commit(partial(_send_wake_ups, uow, uow.wake_ups), key=_WAKE_UPS)


def _send_wake_ups(uow: UnitOfWork, ids: list[int]) -> None:
    if uow.commits_on_event_loop and _queue_busy():  # the loop must not wait for huey's lock
        _sender.put(ids)
    else:
        _send(ids)


def follow_on(uow: UnitOfWork, task: Task, *, key: str, clock: Clock, **args: Any) -> None:
    """Work that continues the running job: on a job's first attempt the worker runs it right after
    the job's handler, in the same transaction (no job row, no wake-up, one commit for both);
    anywhere else (a request, the CLI, a retried job) it is enqueued as a job of its own.

    If it raises, the whole first attempt rolls back and the job is woken again at once; that
    retry commits the job's own work alone and queues the follow-on as a job. A worker killed
    during the attempt leaves the job to the reconciler, whose re-send also makes it a retry, so
    a follow-on that kills its worker never holds the job back twice. The handler must be
    idempotent, as every job's is."""
    task.check(args)
    if uow.running == "first attempt":
        uow.follow_ons.append((task, args))
    else:
        enqueue(uow, task, key=key, clock=clock, **args)


class FollowOnFailed(Exception):
    """A follow-on raised: the job is retried at once, without running it in its transaction."""


def _run_follow_ons(uow: UnitOfWork, clock: Clock) -> None:
    while uow.follow_ons:
        pending, uow.follow_ons = uow.follow_ons, []
        for task, args in pending:
            try:
                _registry.handler(task.name)(uow, dict(args), clock)
            except Exception as exc:
                raise FollowOnFailed(f"follow-on {task.name} failed: {type(exc).__name__}: {exc}") from exc


def _send(ids: list[int]) -> None:
    try:
        wake_ups = get_queue()
        for job_id in ids:
            wake_ups.send(job_id)
    except Exception:  # the rows are committed: the reconciler sends them again
        log.warning("wake-up of jobs %s not sent; the reconciler will send it", ids, exc_info=True)


def _queue_busy() -> bool:
    """Would sending wait? huey's SQLite storage serialises its users (the embedded workers'
    polls, other senders) on one lock: taken, the wake-up goes to the sender thread. Handing
    every wake-up over would cost every upload thread switches (docs/performance.md)."""
    queue = get_queue()
    lock = getattr(queue.huey.storage, "lock", None)
    return not queue.keeps_local() and lock is not None and lock.locked()


@contextmanager
def committing_on_event_loop(uow: UnitOfWork) -> Iterator[None]:
    """The unit of work commits on the event loop (core/turns.py): its wake-ups are sent from a
    thread of their own when huey's SQLite storage is busy (see _queue_busy). Another process
    holding huey's file can still make the loop wait, up to huey's 5 s busy timeout, after which
    the wake-up is left to the reconciler."""
    uow.commits_on_event_loop = True
    try:
        yield
    finally:
        uow.commits_on_event_loop = False


class _Sender:
    """One thread that sends the wake-ups handed to it, in commit order."""

    def __init__(self) -> None:
        self._ids: Queue[list[int]] = Queue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    def put(self, ids: list[int]) -> None:
        if self._thread is None:
            with self._starting:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="varco-wake-ups", daemon=True)
                    self._thread.start()
        self._ids.put(ids)

    def _run(self) -> None:
        while True:
            ids = self._ids.get()
            try:
                _send(ids)
            finally:
                self._ids.task_done()

    def wait(self) -> None:
        self._ids.join()


_sender = _Sender()


def wait_for_wake_ups() -> None:
    """Until the wake-ups handed to the sender thread are in the queue (`JobQueue.drain`)."""
    _sender.wait()


class _Held:
    """Job ids of one database that this process's workers hold in a batch, or finished in one:
    their own wake-ups, still in the queue, need not ask the database (job rows are never deleted,
    so an id is never another job's; the oldest are forgotten past `size`)."""

    def __init__(self, size: int = 10_000) -> None:
        self._ids: dict[int, None] = {}
        self._lock = threading.Lock()
        self._size = size

    def __contains__(self, job_id: int) -> bool:
        return job_id in self._ids

    def add(self, ids: list[int]) -> None:
        with self._lock:
            self._ids.update(dict.fromkeys(ids))
            while len(self._ids) > self._size:
                del self._ids[next(iter(self._ids))]

    def discard(self, ids: list[int]) -> None:
        with self._lock:
            for job_id in ids:
                self._ids.pop(job_id, None)


class _Gathering:
    """One thread of a process at a time gathers a batch on a database whose writers run side by
    side (PostgreSQL): it holds the jobs it claimed and waits, up to `VARCO_JOB_BATCH_WAIT`, for
    more to come due before it runs them together. Workers that could keep up one invoice at a time
    would otherwise run batches of one or two, each paying the whole per-transaction cost, on the
    cores the API processes need (docs/architecture.md, "Gathering a batch")."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._gathering = False
        self._asked = False  # another thread was woken for a job while this one gathers

    def busy(self) -> bool:
        return self._gathering

    @contextmanager
    def gather(self) -> Iterator[bool]:
        """True if this thread is now the one that gathers, until the block ends."""
        with self._changed:
            taken = not self._gathering
            if taken:
                self._gathering, self._asked = True, False
        try:
            yield taken
        finally:
            if taken:
                with self._changed:
                    self._gathering = False
                    self._changed.notify_all()

    def wait_asked(self, timeout: float) -> None:
        """The gathering thread waits until another thread has a job for it, or `timeout`."""
        with self._changed:
            self._changed.wait_for(lambda: self._asked, timeout)
            self._asked = False

    def offer(self, timeout: float) -> None:
        """A woken thread that let go of its job tells the gathering one, and waits until it has
        gathered (the job is then in its batch, or left for this thread to claim)."""
        with self._changed:
            if self._gathering:
                self._asked = True
                self._changed.notify_all()
                self._changed.wait_for(lambda: not self._gathering, timeout)


def gathering() -> bool:
    """Whether a thread of this process is gathering a batch on the database in use now."""
    return _state().gathering.busy()


_worker_thread = threading.local()


def bind_stop_flag(stop: threading.Event) -> None:
    """The stop flag of the worker that runs jobs in this thread (core/worker.py). Once it is set,
    a batch takes no job beyond those it has claimed: a stopping worker takes no new job, not even
    into the batch it is gathering (those are left to the next worker)."""
    _worker_thread.stop = stop


def _stopping() -> bool:
    stop = getattr(_worker_thread, "stop", None)
    return stop is not None and stop.is_set()


class _Ahead:
    """Job ids whose work ahead of the lock a thread of this process is doing (`_work_ahead`):
    another thread foresees a batch without them, rather than doing that work twice."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._lock = threading.Lock()

    def take(self, ids: list[int], held: _Held) -> list[int]:
        """Those of `ids` that no thread works ahead on and no batch holds, now this thread's."""
        with self._lock:
            taken = [job_id for job_id in ids if job_id not in self._ids and job_id not in held]
            self._ids.update(taken)
        return taken

    def release(self, ids: list[int]) -> None:
        with self._lock:
            self._ids.difference_update(ids)


class _HandedOver:
    """Facts that committed transactions handed to the jobs they enqueued (`enqueue(facts=...)`),
    until a worker of this process runs the job. Bounded: past `size` the oldest go, and their jobs
    do the work themselves, as a job run by another process does."""

    def __init__(self, size: int = 64) -> None:
        self._facts: dict[int, dict[Fact[Any], Any]] = {}
        self._lock = threading.Lock()
        self._size = size

    def put(self, job_id: int, facts: dict[Fact[Any], Any]) -> None:
        with self._lock:
            self._facts[job_id] = facts
            while len(self._facts) > self._size:
                del self._facts[next(iter(self._facts))]

    def take(self, job_id: int) -> dict[Fact[Any], Any] | None:
        with self._lock:
            return self._facts.pop(job_id, None)


_handing_over = False


def hand_over_to_workers_here(enabled: bool = True) -> None:
    """Requests hand what they worked out to the jobs they enqueue (`enqueue(facts=...)`): for a
    process whose own worker threads run those jobs (`varco serve` in embedded mode). Elsewhere the
    facts would only wait in memory for a worker that is in another process."""
    global _handing_over
    _handing_over = enabled


def handing_over() -> bool:
    """Whether `enqueue(facts=...)` hands facts over in this process (callers skip working them out)."""
    return _handing_over


@dataclass
class _ProcessState:
    """What this process's workers share about one database (tests switch databases, whose job
    ids overlap)."""

    held: _Held
    gathering: _Gathering
    ahead: _Ahead
    handed: _HandedOver


_state_by_database: WeakKeyDictionary[Database, _ProcessState] = WeakKeyDictionary()
_state_lock = threading.Lock()


def _state() -> _ProcessState:
    database = get_database()
    with _state_lock:
        if database not in _state_by_database:
            _state_by_database[database] = _ProcessState(_Held(), _Gathering(), _Ahead(), _HandedOver())
        return _state_by_database[database]


@dataclass
class _Run:
    """A claimed job of the running transaction."""

    job_id: int
    name: str
    args: dict[str, Any]
    first: bool  # a first attempt: never failed nor re-sent by the reconciler (e.g. after a crash)
    created_at: datetime
    request_id: str
    fields: dict[str, Any]  # its log fields: kind, job id, attempt
    seconds: float = 0.0  # its own work

    @classmethod
    def of(cls, row: Any) -> _Run:
        args = dict(row.args)
        # The request that caused it; a job nothing caused gets an id of its own, which the jobs
        # and callbacks it causes carry in turn.
        request_id = args.pop(REQUEST_ID_ARG, None) or new_request_id()
        first = row.attempts == 0 and row.sent_at == row.created_at
        fields = {"kind": row.name, "job_id": row.id, "attempt": row.attempts + 1}
        return cls(row.id, row.name, args, first, row.created_at, request_id, fields)

    @contextmanager
    def bound(self) -> Iterator[None]:
        """Its request id and log fields, for the lines logged meanwhile."""
        tokens = current_request_id.set(self.request_id), current_job.set(self.fields)
        try:
            yield
        finally:
            current_request_id.reset(tokens[0])
            current_job.reset(tokens[1])


class _HandOver(Exception):
    """A first attempt of a batching kind, claimed while another thread of this process gathers a
    batch: let go (the rollback unlocks it) for that thread to take."""


def run_job(job_id: int) -> str:
    """Run one job row if it is still pending and due. Returns its status afterwards.

    A first attempt of a batching kind takes the other due first attempts of its kind with it, up
    to settings.job_batch, and runs them one after the other in its transaction: one claim, one
    commit, the transaction's facts shared. On PostgreSQL a batch not full waits for more to come
    due (`_Gathering`), and a thread woken meanwhile hands its job over to it. If one of them
    raises, the transaction rolls back; the failure counts against that job alone and the others
    are woken again."""
    state = _state()
    if job_id in state.held:
        return "done"  # run, or running, in a batch of this process: its wake-up has nothing to do
    try:
        return _run_job(job_id, state, hand_over=True)
    except _HandOver:
        state.gathering.offer(get_settings().job_batch_wait.total_seconds())
        if job_id in state.held:
            return "done"  # in the gathered batch
        return _run_job(job_id, state, hand_over=False)  # not taken (the batch was full): run it


def _run_job(job_id: int, state: _ProcessState, *, hand_over: bool) -> str:
    held = state.held
    clock = current_clock()
    started = time.perf_counter()
    runs: list[_Run] = []
    running: _Run | None = None  # the job a failure is charged to
    ahead: dict[int, dict[Fact[Any], Any]] = {}
    try:
        ahead = _work_ahead(job_id, state, clock)
        with unit_of_work() as uow:
            row = uow.execute(_CLAIM, {"job_id": job_id}).first()  # Core: no ORM load per job
            if row is None or row.status != "pending":
                return row.status if row else "missing"  # or held by another worker, which ends it
            if row.run_after > clock.now():
                return "pending"  # not due: the reconciler sends it again when it is
            running = _Run.of(row)
            runs.append(running)
            batching = running.first and get_settings().job_batch > 1 and _registry.batches(row.name)
            if batching and not _stopping():  # a stopping worker takes no more than its job
                if hand_over and state.gathering.busy():
                    raise _HandOver()
                runs += _claim_more(uow, row.name, runs, clock)
                _hold(state, runs[1:])
                if (deadline := _gathering_deadline(uow, runs, clock)) is not None:
                    with state.gathering.gather() as gathering:
                        if gathering:
                            _gather(uow, state, row.name, runs, deadline, clock)
                if len(runs) > 1:
                    for run in runs:
                        run.fields["batch"] = len(runs)  # in its log lines: how many shared the commit
                    if prepare := _registry.preparer(row.name):
                        prepare(uow, [run.args for run in runs])
            runs[0].seconds = time.perf_counter() - started  # the claim
            for run in runs:
                running = run
                _run_one(uow, run, clock, ahead.get(run.job_id) or state.handed.take(run.job_id))
            running = runs[0]  # the last statement or the commit failed: charged to the woken job
            committing = time.perf_counter()
            uow.execute(_DONE, {"job_ids": [run.job_id for run in runs], "now": clock.now()})
        for run in runs:
            _ended(run, "succeeded", time.perf_counter() - committing)
        return "done"
    except _HandOver:
        raise
    except Exception as exc:  # recorded on the row, retried by the reconciler
        held.discard([run.job_id for run in runs])  # none of them is done
        others = [run.job_id for run in runs if run is not running]
        with running.bound() if running else nullcontext():
            log.exception("job %s failed", job_id if running is None else running.job_id)
        try:
            status = _failed(running.job_id if running else job_id, running, exc, clock)
        finally:
            # Rolled back with it, through no fault of theirs: woken again at once, once the failed
            # one is charged (no longer a first attempt, no batch takes it along).
            if others:
                _send(others)
        return status if running is None or running.job_id == job_id else "pending"
    finally:
        state.ahead.release(list(ahead))


def _claim_more(uow: UnitOfWork, name: str, runs: list[_Run], clock: Clock) -> list[_Run]:
    """Other due first attempts of `name` for the batch, up to its size; none held elsewhere."""
    more = {
        "name": name,
        "job_ids": [run.job_id for run in runs],
        "now": clock.now(),
        "limit": get_settings().job_batch - len(runs),
    }
    return [_Run.of(other) for other in uow.execute(_CLAIM_MORE, more)]


def _hold(state: _ProcessState, runs: list[_Run]) -> None:
    """Jobs claimed for a batch: held in this process, their wake-ups withdrawn from the queue."""
    ids = [run.job_id for run in runs]
    state.held.add(ids)
    try:
        get_queue().withdraw(ids)
    except Exception:  # noqa: BLE001 - a wake-up left there finds its job held or done: slower, not wrong
        log.warning("wake-ups of jobs %s not withdrawn", ids, exc_info=True)


def _gathering_deadline(uow: UnitOfWork, runs: list[_Run], clock: Clock) -> float | None:
    """Until when (time.monotonic) a batch not full waits for more to come due: its oldest job
    waits `VARCO_JOB_BATCH_WAIT` since it was queued, no more (a backlog's jobs not at all). None
    for a full batch, a wait of 0, or SQLite (the claim holds the one writer's lock)."""
    settings = get_settings()
    if len(runs) >= settings.job_batch or not settings.job_batch_wait or dialect_of(uow).one_writer:
        return None
    left = settings.job_batch_wait - (clock.now() - min(run.created_at for run in runs))
    return time.monotonic() + left.total_seconds() if left > timedelta(0) else None


def _gather(
    uow: UnitOfWork, state: _ProcessState, name: str, runs: list[_Run], deadline: float, clock: Clock
) -> None:
    """Add to `runs` the jobs that come due until the batch is full or `deadline`: claimed when
    another thread hands one over, and every quarter of the wait. Each is in `runs` (so a failure
    wakes it again) and `held` (so a thread that handed it over finds it) as soon as claimed."""
    settings = get_settings()
    poll = settings.job_batch_wait.total_seconds() / 4
    while len(runs) < settings.job_batch and (left := deadline - time.monotonic()) > 0:
        state.gathering.wait_asked(min(left, poll))
        if _stopping():
            return  # told to stop while waiting: what it holds runs, nothing more is taken
        more = _claim_more(uow, name, runs, clock)
        runs += more
        _hold(state, more)


_ahead_of_the_lock = False


def work_ahead_of_the_lock(enabled: bool = True) -> None:
    """Let this process's workers do the work of a batch that needs no lock before they take
    SQLite's write lock (`Registry.add`). For a worker process beside `varco serve` on the same
    SQLite file (`varco worker`), whose requests then find the lock free sooner. Not for the
    workers inside `varco serve`: their threads share one interpreter with the requests, so the
    work gains nothing from being done outside the lock, and foreseeing batches costs reads."""
    global _ahead_of_the_lock
    _ahead_of_the_lock = enabled


def _work_ahead(job_id: int, state: _ProcessState, clock: Clock) -> dict[int, dict[Fact[Any], Any]]:
    """SQLite: the work ahead of the write lock (`Registry.add`) for the batch this job would
    gather, foreseen without the lock: the job and the other due first attempts of its kind that
    no other thread of this process holds or works ahead on. By job id, the facts each will find
    in its transaction; the caller releases the ids (`_Ahead.release`) when its batch ends."""
    database = get_database()
    sqlite = database.engine.dialect.name == "sqlite"
    if not _ahead_of_the_lock or not sqlite or get_settings().job_batch <= 1 or _stopping():
        return {}
    try:
        return _foresee(database, job_id, state, clock)
    except Exception:  # noqa: BLE001 - it only saves time: the batch does the work under the lock
        log.warning("work ahead of the lock for job %s failed; the batch does it", job_id, exc_info=True)
        return {}


def _foresee(
    database: Database, job_id: int, state: _ProcessState, clock: Clock
) -> dict[int, dict[Fact[Any], Any]]:
    with database.unit_of_work() as uow, reading(uow):
        row = uow.execute(_PEEK, {"job_id": job_id}).first()
        if row is None or row.status != "pending" or (ahead := _registry.ahead(row.name)) is None:
            return {}
        if row.attempts or row.sent_at != row.created_at or row.run_after > clock.now():
            return {}  # not a batch's first attempt, or not due
        more = {
            "name": row.name,
            "job_ids": [job_id],
            "now": clock.now(),
            "limit": get_settings().job_batch - 1,
        }
        rows = {other.id: other for other in [row, *uow.execute(_DUE_MORE, more)]}
        taken = state.ahead.take(list(rows), state.held)
        try:
            args = [{k: v for k, v in rows[i].args.items() if k != REQUEST_ID_ARG} for i in taken]
            facts = ahead(uow, args, clock) if taken else []
        except BaseException:
            state.ahead.release(taken)
            raise
    return dict(zip(taken, facts, strict=True))


def _run_one(uow: UnitOfWork, run: _Run, clock: Clock, ahead: dict[Fact[Any], Any] | None = None) -> None:
    started = time.perf_counter()
    for fact, value in (ahead or {}).items():  # worked out before the lock, or handed over
        uow.remember(fact, value)
    try:
        with run.bound():
            metrics.count(metrics.JOBS, run.name, "started")
            uow.running = "first attempt" if run.first else "retry"
            _registry.handler(run.name)(uow, dict(run.args), clock)
            _run_follow_ons(uow, clock)
        uow.end_job()  # what one job read for itself (a file, its checks) is not kept for the next
    finally:
        run.seconds += time.perf_counter() - started


def _failed(job_id: int, run: _Run | None, exc: Exception, clock: Clock) -> str:
    """Count a failed attempt on its row: retried later by the reconciler, at once after a failed
    follow-on, given up after MAX_ATTEMPTS."""
    started = time.perf_counter()
    with unit_of_work() as session:
        row = session.get(JobRow, job_id, with_for_update=True)
        if row is None or row.status != "pending":
            return row.status if row else "missing"
        row.attempts += 1
        row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        if row.attempts >= MAX_ATTEMPTS:
            row.status, row.finished_at = "failed", clock.now()
        elif isinstance(exc, FollowOnFailed):  # the retry, without it, may well succeed: now
            _wake(session, job_id)
        status = row.status
    if run is not None:
        _ended(run, "failed" if status == "failed" else "retried", time.perf_counter() - started)
    return status


def _ended(run: _Run, outcome: str, extra_seconds: float) -> None:
    """The job's metrics and its log line (kind, id, attempt, duration, outcome). Its duration is
    its own work and its transaction's end (a batch's commit is counted in each job's)."""
    seconds = run.seconds + extra_seconds
    metrics.count(metrics.JOBS, run.name, outcome)
    metrics.observe(metrics.JOB_DURATION, seconds, run.name)
    level = logging.INFO if outcome == "succeeded" else logging.WARNING
    with run.bound():
        log.log(level, "job", extra={"duration_ms": round(seconds * 1000, 2), "outcome": outcome})


def oldest_pending(session: UnitOfWork, clock: Clock) -> tuple[int, float]:
    """Due jobs not yet done, and how long the oldest has been due, in seconds (/metrics)."""
    now = clock.now()
    due = select(func.count(), func.min(_JOBS.c.run_after)).where(
        _JOBS.c.status == "pending", _JOBS.c.run_after <= now
    )
    pending, since = session.execute(due).one()
    return int(pending or 0), (now - since).total_seconds() if since is not None else 0.0


def reconcile(clock: Clock | None = None, stale_after: timedelta | None = None) -> list[int]:
    """Re-send pending jobs that are due and whose last wake-up is older than `stale_after`."""
    clock = clock or current_clock()
    stale_after = stale_after if stale_after is not None else get_settings().stale_job_after
    now = clock.now()
    queue = get_queue()
    # A wake-up still waiting in the queue is not lost, however old: behind a backlog, re-sending
    # it would only queue the same job twice. Read before the rows: a job woken in between is
    # seen as stale at worst once, and running a job twice is a no-op.
    queued = queue.queued_job_ids()
    lost: list[JobRow] = []
    with unit_of_work() as session:
        after = 0
        while len(lost) < _RESEND_PER_RUN:  # pages of stale rows, those still queued skipped
            rows = session.scalars(
                select(JobRow)
                .where(
                    JobRow.id > after,
                    JobRow.status == "pending",
                    JobRow.run_after <= now,
                    # stale wake-up, or a delayed job never woken since it became due
                    or_(JobRow.sent_at <= now - stale_after, JobRow.sent_at < JobRow.run_after),
                )
                .order_by(JobRow.id)
                .limit(_RESEND_PER_RUN)
            ).all()
            if not rows:
                break
            after = rows[-1].id
            lost += [row for row in rows if row.id not in queued][: _RESEND_PER_RUN - len(lost)]
        for row in lost:
            row.sent_at = now
        ids = [row.id for row in lost]
    for job_id in ids:
        queue.send(job_id)
    if ids:
        log.info("reconciler re-sent %d lost jobs", len(ids))
    return ids


def run_periodic() -> None:
    """The minute's periodic work: lost wake-ups, then every domain's reconciler
    (core/scheduler.py runs it once per minute across all processes)."""
    reconcile()
    for fn in _registry.reconcilers:
        try:
            fn()
        except Exception:  # one failing reconciler must not stop the others
            log.exception("reconciler %s failed", getattr(fn, "__name__", fn))


class Doorbell:
    """Rung each time this process queues a wake-up. huey's workers poll a queue that cannot block
    (SQLite) with a growing sleep, up to seconds once idle: idle worker threads of this process
    sleep on the bell instead, so a wake-up it sends runs at once (core/worker.py, `_sleep`)."""

    def __init__(self) -> None:
        self._rings = 0
        self._changed = threading.Condition()

    def rings(self) -> int:
        """How many times it has rung: what `wait` compares with."""
        return self._rings

    def ring(self) -> None:
        with self._changed:
            self._rings += 1
            self._changed.notify_all()

    def wait(self, rings: int, timeout: float) -> None:
        """Until it rings again after `rings` (at once if it has since), or `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._rings != rings, timeout)


class JobQueue:
    """A huey instance carrying wake-ups: one task, "run this job row". Periodic work is not a
    queued task (a backlog would delay it): core/scheduler.py runs it."""

    def __init__(self, huey: Huey) -> None:
        self.huey = huey
        self._run = huey.task(name="varco.run_job", retries=0)(run_job)
        self.doorbell = Doorbell()
        # Wake-ups for this process's own worker threads, kept in memory (`keep_local`).
        self._local: deque[int] | None = None
        self._local_lock = threading.Lock()

    def send(self, job_id: int) -> None:
        with self._local_lock:
            local = self._local is not None
            if local:
                self._local.append(job_id)  # type: ignore[union-attr]
        if not local:
            self.huey.enqueue(self._wake_up(job_id))
        self.doorbell.ring()

    def keep_local(self) -> None:
        """The wake-ups this process sends go to its own worker threads, in memory, where the
        queue is huey's SQLite file (embedded mode): through the file each cost four writes to it
        (queued, taken, and huey's revocation check and clearing), which every thread of the
        process waits its turn for. A worker in another process still wakes by the reconciler,
        as a lost wake-up does; so do these after a crash. Redis, shared by every worker process,
        stays the queue."""
        if not self.huey.storage.blocking:
            with self._local_lock:
                if self._local is None:
                    self._local = deque()

    def end_local(self) -> None:
        """From now on wake-ups go through huey again; those not yet taken are put there, for
        whoever runs next (the reconciler would send them too, but later)."""
        with self._local_lock:
            left, self._local = list(self._local or ()), None
        for job_id in left:
            self.huey.enqueue(self._wake_up(job_id))

    def keeps_local(self) -> bool:
        return self._local is not None

    def take_local(self) -> Any:
        """A wake-up sent by this process to its own workers (`keep_local`), or None."""
        local = self._local
        try:
            return self._wake_up(local.popleft()) if local else None
        except IndexError:  # another thread took the last one
            return None

    def run(self, wake_up: Any) -> None:
        """Run a wake-up's job row. huey's `execute` would also look for a revocation of the message
        and then clear it, two more reads and writes of the queue per job, and varco revokes none."""
        run_job(*wake_up.args)

    def _wake_up(self, job_id: int) -> Any:
        # huey gives each message a random id; one named after its job makes a job's wake-up the
        # same bytes each time it is sent, which `withdraw` can find in the queue.
        return self._run.s(job_id, id=f"job-{job_id}")

    def withdraw(self, job_ids: list[int]) -> None:
        """Take these jobs' wake-ups out of the queue where it is Redis, shared by every worker
        process: a batch that claimed the jobs runs them, and each wake-up left there would cost the
        process that takes it a transaction only to find its job held or done. (One process on
        SQLite: its `held` jobs' wake-ups cost nothing.) A failed batch sends them again."""
        storage = self.huey.storage
        if not job_ids or not isinstance(storage, RedisStorage):
            return
        pipe = storage.conn.pipeline(transaction=False)
        for job_id in job_ids:  # -1: the oldest copy, found from the end the workers take from
            pipe.lrem(storage.queue_key, -1, self.huey.serialize_task(self._wake_up(job_id)))
        pipe.execute()

    def queued_job_ids(self) -> set[int]:
        """The job rows whose wake-up is waiting in the queue (not yet taken by a worker)."""
        ids = set(self._local or ())
        for data in self.huey.storage.enqueued_items():
            try:
                message = self.huey.serializer.deserialize(data)
            except Exception:  # noqa: BLE001 - an unreadable message wakes nothing
                continue
            if message.name.endswith("run_job") and message.args:
                ids.add(int(message.args[0]))
        return ids

    def drain(self, limit: int = 10_000) -> int:
        """Run queued messages in this thread until the queue is empty (tests, CLI)."""
        wait_for_wake_ups()
        done = 0
        while done < limit:
            task = self.take_local() or self.huey.dequeue()
            if task is None:
                return done
            self.run(task)
            done += 1
        return done

    def flush(self) -> None:
        """Drop every queued message (what a crashed broker does), those in memory too."""
        with self._local_lock:
            if self._local is not None:
                self._local.clear()
        self.huey.flush()


class _WakeUpStorage(SqliteStorage):
    """SqliteHuey storage for wake-ups only: the `jobs` rows are the durable truth and the reconciler
    re-sends a lost message, so a commit need not fsync (WAL + synchronous=NORMAL: a crash may lose
    the last messages, never corrupt the file)."""

    def _create_connection(self):  # huey's signature
        conn = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        return conn


def build_huey(redis_url: str | None, data_dir: str, name: str = "varco") -> Huey:
    # No results in any mode: nothing reads a job's return value (its row holds the outcome); with
    # Redis every result would stay in one hash for ever, on SQLite it is one write less per job.
    if redis_url:
        return RedisHuey(name, url=redis_url, results=False)
    return Huey(name, results=False, storage_class=_WakeUpStorage, filename=f"{data_dir}/huey.sqlite3")


_queue: JobQueue | None = None
_queue_lock = threading.Lock()


def get_queue() -> JobQueue:
    global _queue
    with _queue_lock:
        if _queue is None:
            settings = get_settings()
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            _queue = JobQueue(build_huey(settings.redis_url, str(settings.data_dir), settings.queue_name))
        return _queue


def set_queue(queue: JobQueue | None) -> None:
    global _queue
    with _queue_lock:
        _queue = queue


def memory_queue() -> JobQueue:
    return JobQueue(MemoryHuey("varco-memory"))
