"""Running huey consumers: standalone (`varco worker`) or inside `varco serve` (embedded mode)."""

from __future__ import annotations

import logging

from huey.consumer import Consumer

from varco.core.jobs import JobQueue

log = logging.getLogger("varco.worker")


class EmbeddedWorker:
    """Huey worker threads + scheduler started without the consumer's signal handlers,
    which belong to uvicorn when we run inside `varco serve`."""

    def __init__(self, queue: JobQueue, workers: int = 2) -> None:
        self.consumer: Consumer = queue.huey.create_consumer(
            workers=workers, worker_type="thread", periodic=True, check_worker_health=False
        )

    def start(self) -> None:
        self.consumer.scheduler.start()
        for _, worker in self.consumer.worker_threads:
            worker.start()
        log.info("embedded worker started with %d threads", len(self.consumer.worker_threads))

    def stop(self) -> None:
        self.consumer.stop(graceful=True)


def run_standalone(queue: JobQueue, workers: int) -> None:
    queue.huey.create_consumer(workers=workers, worker_type="thread", periodic=True).run()
