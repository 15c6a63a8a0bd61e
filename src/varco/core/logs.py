"""Log lines: JSON in production, human-readable on the demo profile (`VARCO_LOG_FORMAT`).

Every module logs with the standard library (`logging.getLogger(...)`, fields as `extra=`);
structlog's `ProcessorFormatter` renders each record as one line with the fields of the work in
progress: the request id (`current_request_id`: a request, and the jobs and callbacks it caused)
and, inside a job, its kind, id and attempt (`current_job`). docs/operations.md lists the fields.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from queue import SimpleQueue
from typing import Any

import structlog

# The id of the request being served, or of the request that caused the running job ("-": none).
current_request_id: ContextVar[str] = ContextVar("varco_request_id", default="-")
# The running job's kind, id and attempt, added to every line logged while it runs.
current_job: ContextVar[Mapping[str, Any] | None] = ContextVar("varco_job", default=None)

QUIET = {  # libraries whose INFO lines repeat ours (one line per request and per job is ours)
    "alembic": logging.WARNING,
    "huey": logging.WARNING,  # "Executing varco.run_job ..." for every job
    "httpx": logging.WARNING,  # a line per callback POST, its URL whole
}
# Record attributes that are not fields: uvicorn's coloured copy of its message, Python 3.12's
# task name, and what another handler's formatter may have set on the record before ours.
_NOISE = ("color_message", "taskName", "message", "asctime")


def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


def _work_in_progress(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
    """The request id and the running job's fields, read when the line is logged."""
    request_id = current_request_id.get()
    if request_id != "-":
        event.setdefault("request_id", request_id)
    job = current_job.get()
    if job is not None:
        for key, value in job.items():
            event.setdefault(key, value)
    for key in _NOISE:
        event.pop(key, None)
    return event


def formatter(log_format: str) -> logging.Formatter:
    """One line per record: JSON (`json`) or `key=value` after the message (`console`)."""
    renderer: Any
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer()
        exceptions: list[Any] = [structlog.processors.format_exc_info]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty(), pad_event_to=0)
        exceptions = []  # the console renderer prints the traceback itself
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.stdlib.ExtraAdder(),
            _work_in_progress,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *exceptions, renderer],
    )


_GATHER_SECONDS = 0.05  # a line is written at most this long after it was logged


class LineHandler(logging.Handler):
    """Renders a record in the thread that logs it (the request id and job fields are that
    thread's) and hands the line to a thread of its own that writes it: a write releases the
    GIL, and the event loop, which logs every request, would then wait for busy threads to hand
    it back (the logging cookbook's QueueHandler, without its copy of each record). The lines
    still queued are written by `close`, at exit."""

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self.stream = stream
        self._lines: SimpleQueue[str | None] = SimpleQueue()
        self._writer = threading.Thread(target=self._write, name="varco-log-writer", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._lines.put(self.format(record))
        except Exception:  # noqa: BLE001 - logging's rule: a line that fails is reported, not raised
            self.handleError(record)

    def _write(self) -> None:
        while (line := self._lines.get()) is not None:
            # Lines logged meanwhile go in the same write: a put that wakes no thread is cheap,
            # one wake-up and one write per line cost more than rendering it.
            time.sleep(_GATHER_SECONDS)
            batch = [line]
            while not self._lines.empty() and (line := self._lines.get()) is not None:
                batch.append(line)  # what came meanwhile, in one write
            try:
                self.stream.write("\n".join(batch) + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # stderr closed or full: nowhere left to say so
                pass
            if line is None:
                return

    def close(self) -> None:
        if self._writer.is_alive():
            self._lines.put(None)
            self._writer.join()
        super().close()


def configure(log_format: str, level: str, stream: Any = None) -> None:
    """The root logger writes every record (ours, uvicorn's, the libraries') as one line on
    stderr (or `stream`) in `log_format` (`Settings.resolved_log_format`), from `level` up. Safe
    to call again: the handler is replaced, not added."""
    root = logging.getLogger()
    for handler in list(root.handlers):  # basicConfig-style handlers too: one line per record
        root.removeHandler(handler)
        if isinstance(handler, LineHandler):
            handler.close()  # writes what it holds
    handler = LineHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    # No line shows the source file, thread or process of a record: not worked out for each one
    # (the logging HOWTO, "Optimization": a third of a line's cost).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root.setLevel(level)
    for name, quiet in QUIET.items():
        logging.getLogger(name).setLevel(max(quiet, logging.getLevelName(level)))
    # uvicorn's loggers propagate here (`varco serve` starts it without its own logging config);
    # its access log is replaced by our line per request (core/requests.py).
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
