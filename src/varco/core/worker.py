"""Running huey consumers: standalone (`varco worker`) or inside `varco serve` (embedded mode).
Each worker process also runs the scheduler thread (core/scheduler.py): periodic work is not a
huey periodic task, so it runs once per minute across processes and never waits behind a backlog.

Graceful shutdown (docs/operations.md, Shutdown): at SIGTERM the workers take no new job and the
scheduler no new tick; the jobs running get VARCO_SHUTDOWN_TIMEOUT, counted from the signal, to
finish, then the process exits 0. A job still running then ends with the process, as in a crash:
its transaction never committed, so its row is still pending and the reconciler sends its wake-up
again once it is VARCO_STALE_JOB_AFTER old (a callback attempt whose POST was cut off: its lease
expires and the delivery is sent again). Nothing is lost; handlers are idempotent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from huey.consumer import Consumer, Worker

from varco.core.jobs import Doorbell, JobQueue, bind_stop_flag
from varco.core.scheduler import Scheduler

log = logging.getLogger("varco.worker")

# Longest sleep of an idle worker thread between polls of a queue that cannot block (SQLite): how
# late a wake-up sent by another process (the CLI, a `serve --no-worker`) may run. This process's
# own wake-ups ring its doorbell and run at once. huey's default is 10 s.
_MAX_POLL_DELAY = 1.0


class _Worker(Worker):
    """huey's worker, but a wake-up taken after the stop flag was set goes back to the queue instead
    of running (Redis's blocking read returns one up to a second after the signal): a stopping
    worker takes no new job. An idle one sleeps on its process's doorbell (see `Doorbell`). It also
    knows the job it runs, for the shutdown's report."""

    running: Any = None  # the huey task being executed
    doorbell: Doorbell  # set by _Consumer
    jobs: JobQueue  # set by _Consumer
    _next_read = 0.0  # time.monotonic() of the next read of the queue's file, keeping wake-ups local

    def loop(self, now: Any = None) -> None:  # huey's Worker.loop, without max_tasks (unused)
        rings = self.doorbell.rings()  # before reading: a wake-up sent meanwhile ends the sleep
        try:
            task = self._take()
        except Exception:
            self._logger.exception("Error reading from queue")
            self.sleep()
            return
        if task is None:
            if not self.huey.storage.blocking:
                self._sleep(rings)
            return
        if self.stop_flag.is_set():
            self.huey.enqueue(task)  # for the next worker to start
            return
        self.delay = self.default_delay
        self.running = task
        bind_stop_flag(self.stop_flag)  # a batch it gathers takes nothing new once stopping
        try:
            self.jobs.run(task)
        except Exception:
            self._logger.exception("Unhandled error during execution of task %s.", task.id)
        finally:
            self.running = None

    def _take(self) -> Any:
        """This process's own wake-up, or one from the queue. While this process keeps its
        wake-ups in memory (JobQueue.keep_local), the queue's file holds only those of other
        processes (the CLI), rare: it is read at most once per `_MAX_POLL_DELAY`, not after each
        job (each read is a write to the file, every thread of the process waiting its turn)."""
        if not self.stop_flag.is_set() and (task := self.jobs.take_local()) is not None:
            return task
        if self.jobs.keeps_local() and time.monotonic() < self._next_read:
            return None
        self._next_read = time.monotonic() + _MAX_POLL_DELAY
        return self.huey.dequeue()

    def _sleep(self, rings: int) -> None:
        """Until the next poll of a queue that cannot block. The first sleep after a job is huey's
        shortest (0.1 s) and whole: the wake-ups of the uploads meanwhile are then claimed in one
        batch (woken at each, the workers ran batches of one: 1.5 times the CPU per invoice,
        docs/performance.md). Idle after it, a thread wakes at this process's next wake-up."""
        if self.delay <= self.default_delay:
            self.stop_flag.wait(self.delay)
        else:
            self.doorbell.wait(rings, min(self.delay, self.max_delay))
        self.delay *= self.backoff


class _Consumer(Consumer):
    """huey's consumer with our worker; `on_stop` runs when it is told to stop (the scheduler stops
    ticking at once, not after the running jobs)."""

    worker_class = _Worker

    def __init__(self, queue: JobQueue, on_stop: Callable[[], None], **options: Any) -> None:
        self._on_stop = on_stop
        self.jobs = queue
        self.doorbell = queue.doorbell
        self.since: float | None = None  # time.monotonic() of the stop signal
        self.deadline: float | None = None  # by which the running jobs must end
        super().__init__(queue.huey, max_delay=_MAX_POLL_DELAY, **options)

    def _create_worker(self) -> _Worker:  # huey's
        worker = super()._create_worker()
        worker.doorbell = self.doorbell
        worker.jobs = self.jobs
        return worker

    def set_stop_flag(self) -> None:
        """No new job from now on; idle threads see it at once."""
        self.stop_flag.set()
        self.doorbell.ring()

    def start_deadline(self, seconds: float) -> None:
        """The running jobs have `seconds` from now; only the first call counts (the signal's)."""
        if self.deadline is None:
            self.since = time.monotonic()
            self.deadline = self.since + seconds

    def stop(self, graceful: bool = False) -> None:
        self.start_deadline((self.shutdown_timeout or 0) if graceful else 0)
        self.set_stop_flag()
        self._on_stop()
        log.info(
            "stopping: no new jobs; those running have %.0f s to finish (VARCO_SHUTDOWN_TIMEOUT)",
            max(self.deadline - time.monotonic(), 0),
        )
        super().stop(graceful)

    def left(self) -> float:
        """Seconds left before the deadline (0 when past it, or not stopping)."""
        return max(self.deadline - time.monotonic(), 0) if self.deadline is not None else 0

    def report(self) -> None:
        """Say how the shutdown went: every job finished, or which were cut off."""
        cut = [
            worker.running.args[0] if worker.running.args else worker.running.id
            for worker, thread in self.worker_threads
            if thread.is_alive() and worker.running is not None
        ]
        if cut:
            log.warning(
                "worker stopped: jobs %s still running %.0f s after the signal, cut off; their rows stay "
                "pending and the reconciler runs them again",
                cut,
                time.monotonic() - (self.since or 0),
            )
        else:
            log.info("worker stopped: every running job finished")


class EmbeddedWorker:
    """Huey worker threads started without the consumer's signal handlers, which belong to
    uvicorn when we run inside `varco serve`; and the scheduler. `begin_stop` at the signal,
    `stop` after uvicorn has drained the requests (the lifespan's shutdown)."""

    def __init__(self, queue: JobQueue, workers: int = 2, shutdown_timeout: float = 30) -> None:
        self.scheduler = Scheduler()
        self.consumer = _Consumer(
            queue,
            lambda: self.scheduler.stop(timeout=0),
            workers=workers,
            worker_type="thread",
            periodic=False,
            check_worker_health=False,
        )
        self.timeout = shutdown_timeout

    def start(self) -> None:
        self.consumer.jobs.keep_local()  # this process's wake-ups stay in memory (JobQueue.keep_local)
        self.consumer.scheduler.start()  # huey's own (delayed messages); `stop` joins it
        for _, worker in self.consumer.worker_threads:
            worker.start()
        self.scheduler.start()
        log.info("embedded worker started with %d threads", len(self.consumer.worker_threads))

    def begin_stop(self) -> None:
        """No new job, no new tick, from now on; the deadline starts. Called in uvicorn's signal
        handler: it only sets flags and rings the doorbell (no logging, no waiting)."""
        self.consumer.start_deadline(self.timeout)
        self.consumer.set_stop_flag()
        self.scheduler.stop(timeout=0)

    def stop(self) -> None:
        """Wait for the running jobs until the deadline (what the request drain left of it)."""
        self.begin_stop()
        self.consumer.shutdown_timeout = self.consumer.left()
        self.consumer.stop(graceful=True)
        self.scheduler.stop(timeout=self.consumer.left())
        self.consumer.jobs.end_local()  # those not taken, and the drained requests' later ones
        self.consumer.report()


def run_standalone(queue: JobQueue, workers: int, shutdown_timeout: float = 30) -> None:
    """`varco worker` until a signal: SIGTERM is graceful (huey's default is SIGINT), a second
    SIGTERM or a SIGINT stops at once (the jobs cut off are run again, as after a crash)."""
    scheduler = Scheduler()
    consumer = _Consumer(
        queue,
        lambda: scheduler.stop(timeout=0),
        workers=workers,
        worker_type="thread",
        periodic=False,
        graceful_signal="TERM",
        shutdown_timeout=shutdown_timeout,
    )
    scheduler.start()
    try:
        consumer.run()
    finally:
        scheduler.stop(timeout=consumer.left())
    consumer.report()
