"""Background jobs: rows in `jobs` are the truth, huey only delivers wake-ups.

`enqueue()` adds a row in the caller's transaction and sends the huey message after that
transaction commits (dropped on rollback). A worker runs the row's handler in its own unit of
work and marks it done in the same commit, so a duplicate message is a no-op. A periodic
reconciler re-sends pending rows whose message was lost (crash, flushed queue).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from queue import Queue
from typing import Any

from huey import Huey, MemoryHuey, RedisHuey, crontab
from huey.storage import SqliteStorage
from sqlalchemy import bindparam, event, or_, select, update
from sqlalchemy.orm import Session, SessionTransaction

from varco.core.clock import Clock, current_clock
from varco.core.db import append_row, detached_row, per_dialect, unit_of_work
from varco.core.models import JobRow

log = logging.getLogger("varco.jobs")

Handler = Callable[[Session, dict[str, Any], Clock], None]
HANDLERS: dict[str, Handler] = {}
MAX_ATTEMPTS = 10
_PENDING_KEY = "varco_pending_jobs"
_RUNNING_KEY = "varco_running_job"  # session.info: set while a worker runs a job in this session
_FOLLOW_ON_KEY = "varco_follow_on_jobs"
# Core statements built once: every upload and every job runs them.
_JOBS = JobRow.__table__
_ID_BY_KEY = select(_JOBS.c.id).where(_JOBS.c.key == bindparam("key"))
_INSERT_UNLESS_KEY = per_dialect(
    lambda insert: insert(_JOBS).on_conflict_do_nothing(index_elements=["key"]).returning(_JOBS.c.id)
)
_CLAIM = (
    select(
        _JOBS.c.name,
        _JOBS.c.args,
        _JOBS.c.status,
        _JOBS.c.attempts,
        _JOBS.c.run_after,
        _JOBS.c.created_at,
        _JOBS.c.sent_at,
    )
    .where(_JOBS.c.id == bindparam("job_id"))
    .with_for_update()
)
_DONE = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("job_id"))
    .values(status="done", finished_at=bindparam("now"), attempts=_JOBS.c.attempts + 1)
)


def job(name: str) -> Callable[[Handler], Handler]:
    """Register a handler. It must be idempotent: it may run again after a crash."""

    def register(fn: Handler) -> Handler:
        HANDLERS[name] = fn
        return fn

    return register


def enqueue(
    session: Session,
    name: str,
    *,
    key: str | None = None,
    delay: timedelta | None = None,
    clock: Clock | None = None,
    **args: Any,
) -> JobRow:
    """Add a job row in this transaction; its wake-up is sent after commit.

    A new row goes in with a Core insert (the JobRow returned is not in the session, as with
    `append_row`); a key seen before returns that job's row."""
    if name not in HANDLERS:
        raise KeyError(f"unknown job {name!r}")
    now = (clock or current_clock()).now()
    values = {
        "name": name,
        "args": args,
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
        row = append_row(session, JobRow, values)
    else:  # one statement for the usual case, a new key
        row_id = session.connection().execute(_INSERT_UNLESS_KEY(session), values).scalar()
        if row_id is None:
            return session.get_one(JobRow, session.scalar(_ID_BY_KEY, {"key": key}))
        row = detached_row(JobRow, values, row_id)
    if delay is None:
        session.info.setdefault(_PENDING_KEY, []).append(row.id)
    return row


def follow_on(session: Session, name: str, *, key: str, clock: Clock, **args: Any) -> None:
    """Work that continues the running job: on a job's first attempt the worker runs it right after
    the job's handler, in the same transaction (no job row, no wake-up, one commit for both);
    anywhere else (a request, the CLI, a retried job) it is enqueued as a job of its own.

    If it raises, the whole first attempt rolls back and the job is woken again at once; that
    retry commits the job's own work alone and queues the follow-on as a job. A worker killed
    during the attempt leaves the job to the reconciler, whose re-send also makes it a retry, so
    a follow-on that kills its worker never holds the job back twice. The handler must be
    idempotent, as every job's is."""
    if name not in HANDLERS:
        raise KeyError(f"unknown job {name!r}")
    if session.info.get(_RUNNING_KEY) == "first attempt":
        session.info.setdefault(_FOLLOW_ON_KEY, []).append((name, args))
    else:
        enqueue(session, name, key=key, clock=clock, **args)


class FollowOnFailed(Exception):
    """A follow-on raised: the job is retried at once, without running it in its transaction."""


def _run_follow_ons(session: Session, clock: Clock) -> None:
    while pending := session.info.pop(_FOLLOW_ON_KEY, None):
        for name, args in pending:
            try:
                HANDLERS[name](session, dict(args), clock)
            except Exception as exc:
                raise FollowOnFailed(f"follow-on {name} failed: {type(exc).__name__}: {exc}") from exc


@event.listens_for(Session, "after_commit")
def _send_after_commit(session: Session) -> None:
    ids = session.info.pop(_PENDING_KEY, [])
    if ids:
        if session.info.get(_ON_EVENT_LOOP) and _queue_busy():
            _sender.put(ids)
        else:
            _send(ids)


@event.listens_for(Session, "after_transaction_end")
def _drop_after_rollback(session: Session, transaction: SessionTransaction) -> None:
    # The whole transaction only: a savepoint rolled back leaves the jobs queued before it.
    if transaction.parent is None:
        session.info.pop(_PENDING_KEY, None)


def _send(ids: list[int]) -> None:
    try:
        wake_ups = get_queue()
        for job_id in ids:
            wake_ups.send(job_id)
    except Exception:  # noqa: BLE001 - the rows are committed: the reconciler sends them again
        log.warning("wake-up of jobs %s not sent; the reconciler will send it", ids, exc_info=True)


_ON_EVENT_LOOP = "jobs_on_event_loop"  # session.info: its commit runs on the event loop


def _queue_busy() -> bool:
    """Would sending wait? huey's SQLite storage serialises its users (the embedded workers'
    polls, other senders) on one lock: taken, the wake-up goes to the sender thread. Handing
    every wake-up over would cost an upload ~10 % more CPU (thread switches)."""
    lock = getattr(get_queue().huey.storage, "lock", None)
    return lock is not None and lock.locked()


@contextmanager
def committing_on_event_loop(session: Session) -> Iterator[None]:
    """The session commits on the event loop (core/turns.py): its wake-ups are sent from a thread
    of their own when huey's SQLite storage is busy (see _queue_busy). Another process holding
    huey's file can still make the loop wait, up to huey's 5 s busy timeout, after which the
    wake-up is left to the reconciler."""
    session.info[_ON_EVENT_LOOP] = True
    try:
        yield
    finally:
        session.info.pop(_ON_EVENT_LOOP, None)


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


def run_job(job_id: int) -> str:
    """Run one job row if it is still pending and due. Returns its status afterwards."""
    clock = current_clock()
    try:
        with unit_of_work() as session:
            row = session.execute(_CLAIM, {"job_id": job_id}).first()  # Core: no ORM load per job
            if row is None or row.status != "pending":
                return row.status if row else "missing"
            if row.run_after > clock.now():
                return "pending"  # not due: the reconciler sends it again when it is
            # A first attempt never failed nor was re-sent by the reconciler (e.g. after a crash).
            first = row.attempts == 0 and row.sent_at == row.created_at
            session.info[_RUNNING_KEY] = "first attempt" if first else "retry"
            HANDLERS[row.name](session, dict(row.args), clock)
            _run_follow_ons(session, clock)
            session.execute(_DONE, {"job_id": job_id, "now": clock.now()})
            return "done"
    except Exception as exc:  # noqa: BLE001 - recorded on the row, retried by the reconciler
        log.exception("job %s failed", job_id)
        with unit_of_work() as session:
            row = session.get(JobRow, job_id, with_for_update=True)
            if row is None or row.status != "pending":
                return row.status if row else "missing"
            row.attempts += 1
            row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
            if row.attempts >= MAX_ATTEMPTS:
                row.status, row.finished_at = "failed", clock.now()
            elif isinstance(exc, FollowOnFailed):  # the retry, without it, may well succeed: now
                session.info.setdefault(_PENDING_KEY, []).append(job_id)
            return row.status


def reconcile(clock: Clock | None = None, stale_after: timedelta | None = None) -> list[int]:
    """Re-send pending jobs that are due and whose last wake-up is older than `stale_after`."""
    from varco.settings import get_settings

    clock = clock or current_clock()
    stale_after = stale_after if stale_after is not None else get_settings().stale_job_after
    now = clock.now()
    with unit_of_work() as session:
        rows = session.scalars(
            select(JobRow)
            .where(
                JobRow.status == "pending",
                JobRow.run_after <= now,
                # stale wake-up, or a delayed job never woken since it became due
                or_(JobRow.sent_at <= now - stale_after, JobRow.sent_at < JobRow.run_after),
            )
            .order_by(JobRow.id)
            .limit(1000)
        ).all()
        for row in rows:
            row.sent_at = now
        ids = [row.id for row in rows]
    queue = get_queue()
    for job_id in ids:
        queue.send(job_id)
    if ids:
        log.info("reconciler re-sent %d stale jobs", len(ids))
    return ids


Reconciler = Callable[[], object]
RECONCILERS: list[Reconciler] = []


def reconciler(fn: Reconciler) -> Reconciler:
    """Register a domain reconciler, run every minute after the job reconciler (finds stuck rows)."""
    RECONCILERS.append(fn)
    return fn


def _periodic_reconcile() -> None:
    reconcile()
    for fn in RECONCILERS:
        try:
            fn()
        except Exception:  # noqa: BLE001 - one failing reconciler must not stop the others
            log.exception("reconciler %s failed", getattr(fn, "__name__", fn))


class JobQueue:
    """A huey instance with our two tasks registered on it."""

    def __init__(self, huey: Huey, reconcile_every_minutes: int = 1) -> None:
        self.huey = huey
        self._run = huey.task(name="varco.run_job", retries=0)(run_job)
        self._reconcile = huey.periodic_task(
            crontab(minute=f"*/{reconcile_every_minutes}"), name="varco.reconcile"
        )(_periodic_reconcile)

    def send(self, job_id: int) -> None:
        self._run(job_id)

    def drain(self, limit: int = 10_000) -> int:
        """Run queued messages in this thread until the queue is empty (tests, CLI)."""
        wait_for_wake_ups()
        done = 0
        while done < limit:
            task = self.huey.dequeue()
            if task is None:
                return done
            self.huey.execute(task)
            done += 1
        return done

    def flush(self) -> None:
        """Drop every queued message (what a crashed broker does)."""
        self.huey.flush()


class _WakeUpStorage(SqliteStorage):
    """SqliteHuey storage for wake-ups only: the `jobs` rows are the durable truth and the reconciler
    re-sends a lost message, so a commit need not fsync (WAL + synchronous=NORMAL: a crash may lose
    the last messages, never corrupt the file)."""

    def _create_connection(self):  # noqa: ANN202 - huey's signature
        conn = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        return conn


def build_huey(redis_url: str | None, data_dir: str, name: str = "varco") -> Huey:
    if redis_url:
        return RedisHuey(name, url=redis_url)
    # No results: nothing reads a job's return value (its row holds the outcome), one write less per job.
    return Huey(name, results=False, storage_class=_WakeUpStorage, filename=f"{data_dir}/huey.sqlite3")


_queue: JobQueue | None = None
_queue_lock = threading.Lock()


def get_queue() -> JobQueue:
    global _queue
    with _queue_lock:
        if _queue is None:
            import varco.handlers  # noqa: F401 - registers every job handler and reconciler
            from varco.settings import get_settings

            settings = get_settings()
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            _queue = JobQueue(build_huey(settings.redis_url, str(settings.data_dir)))
        return _queue


def set_queue(queue: JobQueue | None) -> None:
    global _queue
    with _queue_lock:
        _queue = queue


def memory_queue() -> JobQueue:
    return JobQueue(MemoryHuey("varco-memory"))
