"""The production topology against the embedded default, side by side in one run (issue 22).

.venv/bin/python bench/production.py [--invoices 400] [--threads 4]

Real processes, typical invoices (the FPR12 sample, every check on), uploaded over HTTP:
1. upload CPU: the API process's CPU per upload (/proc/PID/stat), embedded (`varco serve
   --no-worker` on SQLite) vs PostgreSQL + Redis (`varco serve`, no worker running meanwhile).
   Target: PostgreSQL within 2x of embedded.
2. drain: the invoices uploaded in 1 (state 1, their jobs queued) carried to 7 Consegnata by ONE
   worker process (`varco worker`, 2 threads), embedded (SQLite + SqliteHuey) vs PostgreSQL +
   Redis, counted from the first invoice Consegnata (the process's start-up left out).
   Target: PostgreSQL >= 150 invoices/s.
3. scale-out on PostgreSQL + Redis: upload -> 7 with 1 API + 1 worker process, then with 2 + 2,
   and the CPU per invoice of the API and of the worker processes. Target: 2 + 2 no lower than 1 + 1.
   Beside it, the machine's own share (`machine_control`): the same CPU-bound work (varco's
   `check()` on typical invoices, no I/O) run by 4 processes against 2 on the same cores, in
   alternating rounds: what more processes than cores cost by themselves, before any of varco's.
Timed windows hold no minute boundary (`clear_of_periodic_work`): the workers' periodic work runs
on the minute, the same in every topology, and would land in one short window and not another.
PostgreSQL at 127.0.0.1:5432 (a database created and dropped here), Redis at 127.0.0.1:6379 (a
queue name of this run, its keys deleted at the end).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _topology import (  # noqa: E402
    Postgres,
    api,
    clear_of_periodic_work,
    cpu_seconds,
    drop_queue,
    env_for,
    invoice,
    prepare,
    process,
    production_env,
    upload_all,
    wait_delivered,
)


def upload_and_drain(
    label: str, env: dict[str, str], database_url: str, work: Path, count: int, threads: int
) -> dict:
    """Phase 1 (upload, no worker) then phase 2 (one worker process drains)."""
    with ExitStack() as stack:
        base, pid = api(stack, env, work / f"{label}-api.log", "--no-worker")
        uploads = prepare(base, count)
        cpu = cpu_seconds(pid)
        uploaded = upload_all([base], count, threads, uploads)
        cpu_ms = (cpu_seconds(pid) - cpu) * 1000 / count
        clear_of_periodic_work(20)  # the worker's start and the drain
        stack.enter_context(process(["worker", "--workers", "2"], env, work / f"{label}-worker.log"))
        drain = wait_delivered(database_url, count, label)  # from the first Consegnata: no start-up
    return {"upload_s": uploaded, "cpu_ms": cpu_ms, "drain": drain}


WARM_UP_PER_PROCESS = 40  # invoices per API and worker process before the timed part of phase 3


def scale_out(
    env: dict[str, str], database_url: str, work: Path, count: int, threads: int, n: int
) -> dict[str, float]:
    """Upload -> 7 with n API and n worker processes: invoices/s, and the CPU per invoice of the API
    processes and of the worker processes (both topologies use both cores: the one that spends less
    per invoice wins; docs/performance.md, "2 + 2 against 1 + 1")."""
    with ExitStack() as stack:
        apis = [api(stack, env, work / f"scale{n}-api{i}.log") for i in range(n)]
        workers = [
            stack.enter_context(process(["worker", "--workers", "2"], env, work / f"scale{n}-worker{i}.log"))
            for i in range(n)
        ]
        # Every process warmed up (its first statements compiled, its XSDs loaded, the simulator's
        # key read), as processes that have been running are: each does this once, not per invoice.
        warm_up = WARM_UP_PER_PROCESS * n
        upload_all([base for base, _ in apis], warm_up, threads)
        wait_delivered(database_url, warm_up, f"{n} + {n} warming up")
        uploads = prepare(apis[0][0], count)
        clear_of_periodic_work(30)
        cpu = {pid: cpu_seconds(pid) for pid in [pid for _, pid in apis] + workers}
        start = time.perf_counter()
        upload_all([base for base, _ in apis], count, threads, uploads)
        wait_delivered(database_url, warm_up + count, f"{n} + {n}")
        rate = count / (time.perf_counter() - start)
        spent = {pid: (cpu_seconds(pid) - before) * 1000 / count for pid, before in cpu.items()}
    return {
        "rate": rate,
        "api_ms": sum(spent[pid] for _, pid in apis),
        "worker_ms": sum(spent[pid] for pid in workers),
    }


def _checks(seconds: float, ready: multiprocessing.synchronize.Barrier, done: multiprocessing.Queue) -> None:
    from varco.fatturapa import CheckOptions, check

    files = [invoice(str(number)) for number in range(20)]
    options = CheckOptions(received_date=date.today())
    for data in files:  # its XSDs loaded and rules built before the window
        check(data, options)
    ready.wait()
    count, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        check(files[count % len(files)], options)
        count += 1
    done.put(count)


def checks_per_second(processes: int, seconds: float = 4.0) -> float:
    """`check()`s per second of `processes` processes started together, each for `seconds`."""
    context = multiprocessing.get_context("fork")
    ready, done = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_checks, args=(seconds, ready, done)) for _ in range(processes)]
    for worker in workers:
        worker.start()
    total = sum(done.get() for _ in workers)
    for worker in workers:
        worker.join()
    return total / seconds


def machine_control(rounds: int = 3) -> float:
    """4 CPU-bound processes against 2 on this machine's cores (median of alternating rounds)."""
    return statistics.median(checks_per_second(4) / checks_per_second(2) for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=400)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="varco-bench-production-"))
    queue = f"varco-bench-{uuid.uuid4().hex[:8]}"
    postgres = Postgres()
    try:
        sqlite_url = f"sqlite:///{work / 'embedded' / 'varco.sqlite3'}"
        embedded = upload_and_drain(
            "embedded", env_for(work / "embedded"), sqlite_url, work, args.invoices, args.threads
        )
        pg_url = postgres.new()
        prod = upload_and_drain(
            "postgres", production_env(work / "pg", pg_url, queue), pg_url, work, args.invoices, args.threads
        )
        one = postgres.new()
        single = scale_out(
            production_env(work / "s1", one, queue + "-1"), one, work, args.invoices, args.threads, 1
        )
        two = postgres.new()
        double = scale_out(
            production_env(work / "s2", two, queue + "-2"), two, work, args.invoices, args.threads, 2
        )
        machine = machine_control()
    finally:
        postgres.drop()
        drop_queue(queue)

    print(f"{args.invoices} typical invoices, {args.threads} upload clients")
    print(f"{'figure':52} {'embedded':>10} {'PostgreSQL':>11} {'ratio':>7}  target")
    ratio = prod["cpu_ms"] / embedded["cpu_ms"]
    print(
        f"{'upload: API CPU ms per request':52} {embedded['cpu_ms']:10.2f} {prod['cpu_ms']:11.2f} "
        f"{ratio:7.2f}  <= 2.00 {'met' if ratio <= 2 else 'NOT met'}"
    )
    print(
        f"{'drain, one worker process: invoices/s':52} {embedded['drain']:10.1f} {prod['drain']:11.1f} "
        f"{prod['drain'] / embedded['drain']:7.2f}  "
        f"PostgreSQL >= 150 {'met' if prod['drain'] >= 150 else 'NOT met'}"
    )
    ratio = double["rate"] / single["rate"]
    print(
        f"{'PostgreSQL upload -> 7, 1 API + 1 worker vs 2 + 2: inv/s':52} {single['rate']:10.1f} "
        f"{double['rate']:11.1f} {ratio:7.2f}  2 + 2 >= 1 + 1 {'met' if ratio >= 1 else 'NOT met'}"
    )
    for label, key in (("API processes", "api_ms"), ("worker processes", "worker_ms")):
        print(f"{'  CPU ms per invoice, ' + label:52} {single[key]:10.2f} {double[key]:11.2f}")
    print(f"{'  the machine: check()s/s, 4 processes vs 2':52} {'':10} {'':11} {machine:7.2f}  (no target)")


if __name__ == "__main__":
    main()
