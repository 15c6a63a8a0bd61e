"""One scheduler for every process: periodic work (lost wake-ups, stuck invoices, sealing, mail,
callbacks, the simulator's due steps) runs once per minute across all workers, in a thread of
its own rather than as a queued job, so a backlog in the queue cannot delay it.

Every worker process runs a `Scheduler`; at each tick the first process to claim the minute's
lease (a row of `periodic_runs`, updated only if the last run is older than the interval, in one
statement) does the work and the others skip it. A crashed holder holds nothing: the next
minute's claim ignores who ran last.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.dialects import per_dialect
from varco.core.models import PeriodicRun

log = logging.getLogger("varco.scheduler")

INTERVAL = timedelta(minutes=1)
# Processes tick at about the same second of each minute; a run a little under the interval ago
# still counts as this minute's.
_SLACK = timedelta(seconds=10)
_NAME = "periodic"
_NEVER = datetime(2000, 1, 1, tzinfo=UTC)
_INSERT_UNLESS_THERE = per_dialect(
    lambda insert: insert(PeriodicRun).on_conflict_do_nothing(index_elements=["name"])
)


def holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


def claim(clock: Clock, who: str, interval: timedelta = INTERVAL, name: str = _NAME) -> bool:
    """Whether this process runs the periodic work now (and records that it does)."""
    now = clock.now()
    with unit_of_work() as session:
        session.execute(_INSERT_UNLESS_THERE(session), {"name": name, "last_run_at": _NEVER, "holder": who})
        claimed = session.execute(
            update(PeriodicRun)
            .where(PeriodicRun.name == name, PeriodicRun.last_run_at <= now - interval + _SLACK)
            .values(last_run_at=now, holder=who)
        )
        return claimed.rowcount == 1


def tick(clock: Clock | None = None, who: str | None = None) -> bool:
    """One tick: claim the lease, and if this process holds it, run the periodic work."""
    clock = clock or current_clock()
    if not claim(clock, who or holder()):
        return False
    jobs.run_periodic()
    return True


class Scheduler:
    """The ticking thread of a worker process (`varco worker`, and `varco serve` embedded)."""

    def __init__(self, interval: timedelta = INTERVAL) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="varco-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()
        log.info("scheduler started: periodic work once per %s across all workers", self.interval)

    def stop(self, timeout: float = 30) -> None:
        """No more ticks; wait up to `timeout` seconds for one in progress (0: do not wait)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)

    def _run(self) -> None:
        seconds = self.interval.total_seconds()
        while not self._stop.wait(seconds - current_clock().now().timestamp() % seconds):
            try:
                tick()
            except Exception:  # a database hiccup must not end the thread: next minute again
                log.exception("periodic work failed")
