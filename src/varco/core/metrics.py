"""Prometheus metrics: the counters every layer adds to, and their exposition (`render`).

One process (the embedded default) keeps its counts in memory. Several processes on one host
(production: N `varco serve`, N `varco worker`) each write theirs to files in a directory they
share, `VARCO_METRICS_DIR` (prometheus_client's multiprocess mode; its own
`PROMETHEUS_MULTIPROC_DIR` works too), and /metrics, answered by any API process, adds them up.
`setup` must run before anything counts: `varco serve` and `varco worker` call it first.

Domains import this module and count; it imports no domain. What is read from the database when
/metrics is scraped (the oldest pending job, the mail outbox) is handed to `render` by the route.
Counts of a transaction's work (`count_on_commit`) are added once it commits: a rollback, which
undoes the work, drops them. Label values are bounded: route templates, task names, contract
codes; never paths, ids or free text.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
    values,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from varco.core.uow import UnitOfWork
from varco.settings import Settings

log = logging.getLogger("varco.metrics")

disable_created_metrics()  # no `_created` twin of every series (multiprocess mode has none either)
REGISTRY = CollectorRegistry()  # varco's metrics only (not prometheus_client's global one)
ProcessCollector(registry=REGISTRY)  # CPU, memory, open files: one process only (see render)

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

HTTP_REQUESTS = Counter(
    "varco_http_requests", "HTTP requests answered", ["route", "method", "status"], registry=REGISTRY
)
HTTP_DURATION = Histogram(
    "varco_http_request_duration_seconds",
    "Time from the request's arrival to the end of its answer",
    ["route", "method", "status"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
UPLOADS = Counter(
    "varco_uploads", "Uploads (upload, uploadSigned) by errorCode: 0000 accepted", ["code"], registry=REGISTRY
)
INVOICE_STATES = Counter(
    "varco_invoice_state_entries", "Invoices entering each state", ["state"], registry=REGISTRY
)
JOBS = Counter(
    "varco_jobs",
    "Jobs by kind and event: enqueued, started, succeeded, retried (the attempt failed), failed (gave up)",
    ["kind", "event"],
    registry=REGISTRY,
)
JOB_DURATION = Histogram(
    "varco_job_duration_seconds",
    "One attempt of a job, to its commit",
    ["kind"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
SDI_CALLS = Counter(
    "varco_sdi_calls",
    "Calls to the Exchange System by channel, operation and result",
    ["channel", "operation", "result"],
    registry=REGISTRY,
)
RATE_LIMIT_REFUSALS = Counter(
    "varco_rate_limit_refusals", "Requests refused by a limit (429)", ["limit"], registry=REGISTRY
)
CALLBACK_DELIVERIES = Counter(
    "varco_callback_deliveries", "Callback delivery attempts by result", ["result"], registry=REGISTRY
)

_enabled = True
_multiprocess_dir: Path | None = None


def setup(settings: Settings) -> None:
    """Counting on or off, and the multiprocess directory: before anything counts (each call
    after the first only switches counting)."""
    global _enabled, _multiprocess_dir
    _enabled = settings.metrics_enabled
    wanted = settings.metrics_dir or os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not _enabled or not wanted or _multiprocess_dir is not None:
        return
    path = Path(wanted).resolve()
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    _compact_dead(path)
    # prometheus_client picks the storage of new values from this variable when it is imported;
    # set here from the setting, the same file-backed values it would have chosen. Every metric
    # has labels, so no value exists before the first count.
    if values.ValueClass is values.MutexValue:
        values.ValueClass = values.MultiProcessValue()
    _multiprocess_dir = path


# The child of each label set, kept: `labels()` converts, locks and looks up at every call, which
# the paths run per upload and per job would otherwise pay a dozen times (label sets are bounded).
_children: dict[tuple[Counter | Histogram, tuple[str, ...]], Callable[[float], None]] = {}


def _child(metric: Counter | Histogram, labels: tuple[str, ...]) -> Callable[[float], None]:
    add = _children.get((metric, labels))
    if add is None:
        child = metric.labels(*labels)
        add = _children[metric, labels] = child.inc if isinstance(metric, Counter) else child.observe
    return add


def count(counter: Counter, *labels: str, amount: float = 1.0) -> None:
    if _enabled:
        _child(counter, labels)(amount)


def observe(histogram: Histogram, seconds: float, *labels: str) -> None:
    if _enabled:
        _child(histogram, labels)(seconds)


class _AfterCommit:
    """The counts of one transaction, added once it has committed."""

    def __init__(self) -> None:
        self.counts: dict[tuple[Counter, tuple[str, ...]], float] = {}

    def __call__(self) -> None:
        for (counter, labels), amount in self.counts.items():
            _child(counter, labels)(amount)


def count_on_commit(uow: UnitOfWork, counter: Counter, *labels: str) -> None:
    """Count work of this transaction when it commits (a rollback drops the count)."""
    if _enabled:
        tally = uow.on_commit(_AfterCommit(), key=_AfterCommit)
        key = (counter, labels)
        tally.counts[key] = tally.counts.get(key, 0.0) + 1.0


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    """One answered request (core/requests.py)."""
    if _enabled:
        labels = (route, method, str(status))
        _child(HTTP_REQUESTS, labels)(1.0)
        _child(HTTP_DURATION, labels)(seconds)


# -- exposition ----------------------------------------------------------------------------------


def render(*extra: Collector) -> bytes:
    """The text format of every metric, with `extra` collectors (read when scraped)."""
    registry = CollectorRegistry(auto_describe=False)
    if _multiprocess_dir is not None:
        _LockedCollector(registry, _multiprocess_dir)  # every process's counts, added up
    else:
        registry.register(_Forward(REGISTRY))
    for collector in extra:
        registry.register(collector)
    return generate_latest(registry)  # the text format 0.0.4


class _Forward(Collector):
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterable[Metric]:
        return self.registry.collect()


class _LockedCollector(MultiProcessCollector):
    """Reads the files under a shared lock: a process starting up may be folding the files of
    dead ones together (`_compact_dead`), and a scrape must see them before or after, not both."""

    def __init__(self, registry: CollectorRegistry, path: Path) -> None:
        super().__init__(registry, str(path))
        self.directory = path

    def collect(self) -> Iterable[Metric]:
        with _locked(self.directory, fcntl.LOCK_SH):
            return list(super().collect())


@contextlib.contextmanager
def _locked(directory: Path, mode: int) -> Iterator[None]:
    with open(directory / ".lock", "a") as lock:
        fcntl.flock(lock, mode)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


_FOLDED = ("counter", "histogram")  # gauges are read from the database when scraped, never stored


def _compact_dead(directory: Path) -> None:
    """Fold the files of processes that are gone into one per type, so that restarts do not pile
    files up; their counts stay (a counter that went down would read as a reset).

    Files are named `{type}_{pid}.db`: a process alive (whose pid may be a recycled one: it
    continues the file) is left alone. Runs under the exclusive lock, which a scrape shares."""
    with _locked(directory, fcntl.LOCK_EX):
        dead: dict[str, list[Path]] = {}
        for file in directory.glob("*.db"):
            kind, _, pid = file.stem.rpartition("_")
            if not pid.isdigit() or _alive(int(pid)):
                continue
            if kind in _FOLDED:
                dead.setdefault(kind, []).append(file)
            else:
                mark_process_dead(int(pid), str(directory))  # a live gauge's file: dropped
        for kind, files in dead.items():
            archive = directory / f"{kind}_archive.db"
            sources = [str(f) for f in files] + ([str(archive)] if archive.exists() else [])
            merged = MultiProcessCollector.merge(sources, accumulate=False)
            fresh = directory / f".{kind}_archive.new"
            fresh.unlink(missing_ok=True)
            written = MmapedDict(str(fresh))
            for metric in merged:
                for sample in metric.samples:
                    key = mmap_key(
                        metric.name,
                        sample.name,
                        list(sample.labels),
                        list(sample.labels.values()),
                        metric.documentation,
                    )
                    written.write_value(key, sample.value, 0.0)
            written.close()
            os.replace(fresh, archive)  # the `.new` suffix keeps it out of a scrape until then
            for file in files:
                file.unlink()
        if dead:
            log.info("metrics of %d ended processes folded", sum(len(f) for f in dead.values()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
