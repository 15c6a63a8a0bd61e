"""What metrics and logs cost: upload throughput with them and without, side by side in one run.

.venv/bin/python bench/observability.py [--invoices 150] [--rounds 10] [--threads 4]

What ships, in three configurations: `varco serve` as README command 1 starts it (embedded
default, the worker in the process, every check on), as an operator runs it ("with": metrics on,
a JSON line per request and per job, VARCO_LOG_FORMAT=json), without either ("without":
VARCO_METRICS_ENABLED=false, VARCO_LOG_LEVEL=WARNING), and once more without ("control"): two
configurations that differ in nothing show what noise alone makes of a comparison.

Each round starts one fresh server per configuration, in an order that rotates from round to
round: a warm-up, then the same number of typical invoices (the FPR12 sample) from `--threads`
clients, until its worker has carried every one to 7 Consegnata. Figures per configuration, the
median over the rounds: uploads/s (the target: "with" no more than 5 % below "without") and the
server's CPU per invoice, upload and asynchronous stage together (/proc/PID/stat); then the
/metrics scrape time. A fresh process per turn: two long-lived identical servers differed by up
to 19 % in uploads/s and 8 % in CPU per invoice even on a quiet machine, which no number of turns
averages out, whereas a new process each time draws its own layout and hash seed.

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
from _topology import cpu_seconds, env_for, invoice, prepare, process, upload_all, wait_delivered  # noqa: E402

WITHOUT = {"log_format": "json", "metrics_enabled": "false", "log_level": "WARNING"}
CONFIGS = {"with": {"log_format": "json"}, "without": WITHOUT, "control": WITHOUT}
WARM_UP = 20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=150, help="per server and round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--attribution-only", action="store_true", help="part 2 only")
    args = parser.parse_args()
    if not args.attribution_only:
        compare(args)
    attribution(200)


def turn(work: Path, name: str, invoices: int, threads: int) -> tuple[float, float, float]:
    """One server of configuration `name`, fresh (its own process and data): a warm-up, then
    `invoices` uploads until every one is 7 Consegnata. Returns uploads/s, its CPU per invoice in
    ms (upload and asynchronous stage) and its log lines per invoice."""
    work.mkdir(parents=True, exist_ok=True)
    data, log = work / name, work / f"{name}.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = f"sqlite:///{data / 'varco.sqlite3'}"
    env = env_for(data, **CONFIGS[name])
    with process(["serve", "--port", str(port)], env, log, f"{base}/health") as pid:
        upload_all([base], WARM_UP, threads)  # XSDs compiled, connections open
        wait_delivered(database, WARM_UP, name)
        uploads = prepare(base, invoices)
        cpu, lines = cpu_seconds(pid), _lines(log)
        seconds = upload_all([base], invoices, threads, uploads)
        wait_delivered(database, WARM_UP + invoices, name, limit_seconds=600)
        cpu_ms = (cpu_seconds(pid) - cpu) * 1000 / invoices
        return invoices / seconds, cpu_ms, (_lines(log) - lines) / invoices


def compare(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="varco-bench-observability-"))
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in CONFIGS}
    names = list(CONFIGS)
    for n in range(args.rounds):
        for name in names[n % 3 :] + names[: n % 3]:  # the order rotates from round to round
            figures[name].append(turn(work / f"round-{n}", name, args.invoices, args.threads))
    with ExitStack() as stack:  # the scrape, on a server that has seen traffic
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = env_for(work / "scrape", **CONFIGS["with"])
        serve = process(["serve", "--port", str(port)], env, work / "scrape.log", f"{base}/health")
        stack.enter_context(serve)
        upload_all([base], WARM_UP, args.threads)
        scrape_ms = _scrape_ms(base)

    rate = {name: statistics.median(f[0] for f in figures[name]) for name in names}
    cpu = {name: statistics.median(f[1] for f in figures[name]) for name in names}
    lines = statistics.median(f[2] for f in figures["with"])
    print(
        f"{args.rounds} rounds: each a fresh `varco serve` per configuration (embedded default, "
        f"worker in the process), {args.invoices} typical invoices from {args.threads} client threads "
        f"until all are Consegnata; medians over the rounds; log lines per invoice with logs on: {lines:.1f}"
    )
    print(f"{'':9} {'uploads/s':>10} {'CPU ms/invoice':>15}   per round (uploads/s)")
    for name in names:
        turns = " ".join(f"{f[0]:.0f}" for f in figures[name])
        print(f"{name:9} {rate[name]:10.1f} {cpu[name]:15.2f}   {turns}")
    for name in ("with", "control"):
        print(
            f"{name} / without: throughput {rate[name] / rate['without']:.3f}, "
            f"CPU per invoice {cpu[name] / cpu['without']:.3f}"
        )
    noise = 1 - rate["control"] / rate["without"], cpu["control"] / cpu["without"] - 1
    print(
        f"overhead: throughput {1 - rate['with'] / rate['without']:+.1%}, CPU per invoice "
        f"{cpu['with'] / cpu['without'] - 1:+.1%} (target < 5 %; the control, configured as without, "
        f"differs by {noise[0]:+.1%} and {noise[1]:+.1%}); GET /metrics {scrape_ms:.1f} ms"
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
