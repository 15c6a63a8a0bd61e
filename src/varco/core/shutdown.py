"""Graceful shutdown of `varco serve` (docs/operations.md, Shutdown).

At SIGTERM (or SIGINT) uvicorn stops listening at once, so a new connection is refused, and
lets the requests in flight finish within `timeout_graceful_shutdown` (VARCO_SHUTDOWN_TIMEOUT);
then it runs the lifespan's shutdown, where the embedded worker waits for its running jobs until
the same deadline (core/worker.py). A second SIGINT cuts the drain short.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from types import FrameType

import uvicorn


class Server(uvicorn.Server):
    """uvicorn's server with two changes. At the signal it also calls `on_signal` (the embedded
    worker then stops taking jobs at once, not after the requests have drained). And a graceful
    shutdown ends with exit code 0: uvicorn raises the signal again when it is done, so that the
    process ends killed by it (143 to `docker stop` and to shells, as if it had been cut off)."""

    def __init__(self, config: uvicorn.Config, on_signal: Sequence[Callable[[], None]] = ()) -> None:
        super().__init__(config)
        self._on_signal = list(on_signal)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn 0.54's handle_exit, less the recording of the signal for raising it again
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True
        for call in self._on_signal:
            call()
