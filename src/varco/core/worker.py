"""Running huey consumers: standalone (`varco worker`) or inside `varco serve` (embedded mode).
Each worker process also runs the scheduler thread (core/scheduler.py): periodic work is not a
huey periodic task, so it runs once per minute across processes and never waits behind a backlog."""

from __future__ import annotations

import logging

from huey.consumer import Consumer

from varco.core.jobs import JobQueue
from varco.core.scheduler import Scheduler

log = logging.getLogger("varco.worker")


class EmbeddedWorker:
    """Huey worker threads started without the consumer's signal handlers, which belong to
    uvicorn when we run inside `varco serve`; and the scheduler."""

    def __init__(self, queue: JobQueue, workers: int = 2) -> None:
        self.consumer: Consumer = queue.huey.create_consumer(
            workers=workers, worker_type="thread", periodic=False, check_worker_health=False
        )
        self.scheduler = Scheduler()

    def start(self) -> None:
        self.consumer.scheduler.start()  # huey's own (delayed messages); `stop` joins it
        for _, worker in self.consumer.worker_threads:
            worker.start()
        self.scheduler.start()
        log.info("embedded worker started with %d threads", len(self.consumer.worker_threads))

    def stop(self) -> None:
        self.scheduler.stop()
        self.consumer.stop(graceful=True)


def run_standalone(queue: JobQueue, workers: int) -> None:
    scheduler = Scheduler()
    scheduler.start()
    try:
        queue.huey.create_consumer(workers=workers, worker_type="thread", periodic=False).run()
    finally:
        scheduler.stop()
