"""What metrics and logs cost: upload throughput with them and without, side by side in one run.

.venv/bin/python bench/observability.py [--invoices 150] [--rounds 8] [--threads 4]

What ships, three times at once: `varco serve` as README command 1 starts it (embedded default,
the worker in the process, every check on), once as an operator runs it ("with": metrics on, a
JSON line per request and per job, VARCO_LOG_FORMAT=json), once without either ("without":
VARCO_METRICS_ENABLED=false, VARCO_LOG_LEVEL=WARNING), and once more without ("control"): the
two servers that differ in nothing show what this machine's noise alone makes of a comparison.

Each turn uploads the same number of typical invoices (the FPR12 sample) to one server from
`--threads` clients, then waits until its embedded worker has carried every one to 7 Consegnata,
so that no backlog runs into the next turn; each round gives every server one turn, in an order
that rotates from round to round. Figures per server: uploads/s over all its turns (the target:
"with" no more than 5 % below "without"), and its CPU per invoice over the whole run, upload and
asynchronous stage together (/proc/PID/stat), counted after a last minute in which the periodic
work (sealing the delivered invoices) catches up; then the /metrics scrape time.

On a shared 2-core machine the comparison is noisy (the control says how much); part 2 says where
the time goes, steadily: in this process (the app under TestClient, the jobs drained here), the
CPU of the calling thread inside every logging and metrics call and of the log writer thread,
per invoice, against the process's CPU per invoice (an upper bound: the timers are counted too).
"""

from __future__ import annotations

import argparse
import base64
import functools
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port  # noqa: E402
from _topology import cpu_seconds, env_for, invoice, process, upload_all, wait_delivered  # noqa: E402

WITHOUT = {"log_format": "json", "metrics_enabled": "false", "log_level": "WARNING"}
CONFIGS = {"with": {"log_format": "json"}, "without": WITHOUT, "control": WITHOUT}
PERIODIC_SECONDS = 70  # the scheduler's minute, and a margin


class Server:
    def __init__(self, stack: ExitStack, work: Path, name: str) -> None:
        self.name = name
        self.data = work / name
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = work / f"{name}.log"
        env = env_for(self.data, **CONFIGS[name])
        ready = f"{self.base}/health"
        self.pid = stack.enter_context(process(["serve", "--port", str(port)], env, self.log, ready))
        self.delivered = 0
        self.upload_seconds: list[float] = []

    def turn(self, count: int, threads: int) -> None:
        """Upload `count` invoices, then wait until all are 7 Consegnata."""
        self.upload_seconds.append(upload_all([self.base], count, threads))
        self.delivered += count
        database = f"sqlite:///{self.data / 'varco.sqlite3'}"
        wait_delivered(database, self.delivered, self.name, limit_seconds=600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=150, help="per server and round")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--attribution-only", action="store_true", help="part 2 only")
    args = parser.parse_args()
    if not args.attribution_only:
        compare(args)
    attribution(200)


def compare(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="varco-bench-observability-"))
    with ExitStack() as stack:
        servers = [Server(stack, work, name) for name in CONFIGS]
        for server in servers:
            server.turn(20, args.threads)  # warm-up: XSDs compiled, connections open
            server.upload_seconds.clear()
        time.sleep(PERIODIC_SECONDS)  # the warm-up's periodic work, outside the count
        lines_before = _lines(servers[0].log)
        cpu_before = {server.name: cpu_seconds(server.pid) for server in servers}
        for n in range(args.rounds):
            for server in servers[n % 3 :] + servers[: n % 3]:
                server.turn(args.invoices, args.threads)
        time.sleep(PERIODIC_SECONDS)
        total = args.rounds * args.invoices
        cpu_ms = {s.name: (cpu_seconds(s.pid) - cpu_before[s.name]) * 1000 / total for s in servers}
        lines = (_lines(servers[0].log) - lines_before) / total
        scrape_ms = _scrape_ms(servers[0].base)

    rate = {s.name: total / sum(s.upload_seconds) for s in servers}
    per_turn = {s.name: [args.invoices / seconds for seconds in s.upload_seconds] for s in servers}
    print(
        f"{args.rounds} rounds of {args.invoices} typical invoices per server ({args.threads} client "
        f"threads), `varco serve` embedded default; log lines per invoice with metrics and logs: {lines:.1f}"
    )
    print(f"{'':9} {'uploads/s':>10} {'per turn (median)':>18} {'CPU ms/invoice':>15}")
    for s in servers:
        median = statistics.median(per_turn[s.name])
        print(f"{s.name:9} {rate[s.name]:10.1f} {median:18.1f} {cpu_ms[s.name]:15.2f}")
    for name in ("with", "control"):
        print(
            f"{name} / without: throughput {rate[name] / rate['without']:.3f}, "
            f"CPU per invoice {cpu_ms[name] / cpu_ms['without']:.3f}"
        )
    overhead = 1 - rate["with"] / rate["without"]
    noise = abs(1 - rate["control"] / rate["without"])
    print(
        f"overhead: throughput {overhead:+.1%} (target < 5 %; this run's noise, control vs without: "
        f"{noise:.1%}), CPU per invoice {cpu_ms['with'] / cpu_ms['without'] - 1:+.1%}; "
        f"GET /metrics {scrape_ms:.1f} ms"
    )


def _lines(log: Path) -> int:
    return log.read_text(errors="replace").count("\n")


def _scrape_ms(base: str, times: int = 20) -> float:
    with httpx.Client(base_url=base) as client:
        started = time.perf_counter()
        for _ in range(times):
            assert client.get("/metrics").status_code == 200
        return (time.perf_counter() - started) * 1000 / times


def attribution(count: int) -> None:
    """Part 2: thread CPU inside logging and metrics per invoice, in this process."""
    work = Path(tempfile.mkdtemp(prefix="varco-bench-attribution-"))
    os.environ.update(env_for(work / "data", log_format="json"))
    from fastapi.testclient import TestClient

    from varco.app import create_app
    from varco.cli import seed_demo
    from varco.cli_support import prepare_database
    from varco.core import logs, metrics
    from varco.core.jobs import get_queue

    prepare_database()
    seed_demo()
    logs.configure("json", "INFO", stream=(work / "log.jsonl").open("w"))
    spent: Counter[str] = Counter()

    def timed(owner: object, name: str, part: str) -> None:
        inner: Callable[..., object] = getattr(owner, name)

        @functools.wraps(inner)
        def counted(*args: object, **kwargs: object) -> object:
            started = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[part] += time.thread_time() - started

        setattr(owner, name, counted)

    timed(logging.Logger, "handle", "logging: rendering, handing over")
    timed(logging.Logger, "makeRecord", "logging: records")
    for name in ("count", "observe", "count_on_commit", "observe_request"):
        timed(metrics, name, "metrics")
    timed(metrics._AfterCommit, "__call__", "metrics")
    queue = get_queue()
    with TestClient(create_app()) as client:
        form = {"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"}
        headers = {"Authorization": f"Bearer {client.post('/auth/signin', data=form).json()['access_token']}"}
        bodies = [{"dataFile": base64.b64encode(invoice(f"A{n}")).decode()} for n in range(count + 30)]
        [writer] = [h for h in logging.getLogger().handlers if isinstance(h, logs.LineHandler)]
        writer_clock = time.pthread_getcpuclockid(writer._writer.ident)
        for n, body in enumerate(bodies):
            if n == 30:  # after the warm-up
                spent.clear()
                process_before, writer_before = time.process_time(), time.clock_gettime(writer_clock)
            answer = client.post("/services/invoice/upload", json=body, headers=headers)
            assert answer.json()["errorCode"] == "0000", answer.text
            queue.drain()  # the asynchronous stage, the simulated SDI's RC
        process_us = (time.process_time() - process_before) * 1e6 / count
        spent["logging: the writer thread"] = time.clock_gettime(writer_clock) - writer_before
    print(
        f"\npart 2, in one process ({count} invoices): {process_us / 1000:.2f} ms CPU per invoice, of which"
    )
    for part, seconds in sorted(spent.items()):
        print(f"  {part:34} {seconds * 1e6 / count:7.1f} us")
    total = sum(spent.values()) * 1e6 / count
    print(f"  {'metrics and logs':34} {total:7.1f} us = {total / process_us:.1%} of the CPU per invoice")


if __name__ == "__main__":
    main()
