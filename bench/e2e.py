"""Upload -> Consegnata end to end, as a user runs varco, against GET /health in the same run.

.venv/bin/python bench/e2e.py [--invoices 500] [--clients 8] [--rounds 2] [--topology both] [--idle 30]

What ships, in real processes: the embedded default as README command 1 starts it (`varco serve`,
SQLite, the worker in the process, demo data, every check on), and the production topology
(`varco serve` and `varco worker` on PostgreSQL + Redis: a database and a queue name of this run,
dropped at the end). The §8 limits are switched off explicitly (a bench's uploads would reach the
demo account's hourly tier limit).

Each round, per topology: `--invoices` requests of GET /health from `--clients` keep-alive
clients (the baseline: what the server answers when it does nothing), then as many distinct typical
invoices (the FPR12 sample, 5.7 KB, to a customer no intermediary serves) from the same clients,
timed until every one is 7 Consegnata, then /health again: the baseline is the mean of the two
(a burst of /health lasts about a second, and this machine's speed drifts over seconds).
Figures (median over the rounds): uploads/s, end-to-end invoices/s (from the first upload to the
last Consegnata), their ratios to /health, and each process's CPU per invoice over the upload and
its asynchronous stage (/proc/PID/stat).
Target (issue 27): embedded end to end >= 0.25 of /health.

Then, with `--idle` seconds > 0: the servers left idle that long, one invoice uploaded and timed
until it is 7 (how soon an idle server's workers take up a new upload; no target).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _topology import (  # noqa: E402
    Postgres,
    api,
    cpu_seconds,
    delivered,
    drop_queue,
    env_for,
    health_rate,
    prepare,
    process,
    production_env,
    upload_all,
    wait_delivered,
)

TARGET = 0.25
WARM_UP = 20


@dataclass
class Round:
    health: float  # GET /health per second
    uploads: float  # uploads per second
    end_to_end: float  # invoices per second, first upload to last Consegnata
    cpu_ms: dict[str, float]  # per process: CPU ms per invoice


@dataclass
class Topology:
    name: str
    base: str
    database_url: str
    pids: dict[str, int]
    sent: int = 0

    def round(self, invoices: int, clients: int) -> Round:
        before = health_rate(self.base, invoices, clients)
        uploads = prepare(self.base, invoices)
        cpu = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        start = time.perf_counter()
        uploaded = upload_all([self.base], invoices, clients, uploads)
        self.sent += invoices
        wait_delivered(self.database_url, self.sent, self.name)
        seconds = time.perf_counter() - start
        cpu_ms = {name: (cpu_seconds(pid) - cpu[name]) * 1000 / invoices for name, pid in self.pids.items()}
        health = (before + health_rate(self.base, invoices, clients)) / 2  # the machine drifts: both sides
        return Round(health, invoices / uploaded, invoices / seconds, cpu_ms)

    def after_idle(self, seconds: float) -> float:
        """Seconds from one upload to its Consegnata, the servers idle for `seconds` before."""
        one = prepare(self.base, 1)
        time.sleep(seconds)
        start = time.perf_counter()
        upload_all([self.base], 1, 1, one)
        self.sent += 1
        while delivered(self.database_url) < self.sent:
            time.sleep(0.01)
        return time.perf_counter() - start

    def warm_up(self, clients: int) -> None:
        """XSDs compiled, connections open, the first jobs run: left out of every figure."""
        upload_all([self.base], WARM_UP, clients)
        self.sent += WARM_UP
        wait_delivered(self.database_url, self.sent, self.name)


def embedded(stack: ExitStack, work: Path) -> Topology:
    data = work / "embedded"
    base, pid = api(stack, env_for(data), work / "embedded.log")
    return Topology("embedded", base, f"sqlite:///{data / 'varco.sqlite3'}", {"serve": pid})


def embedded_split(stack: ExitStack, work: Path) -> Topology:
    """The embedded default with its worker in a process of its own (`serve --no-worker` + `worker`)."""
    data = work / "split"
    env = env_for(data)
    base, pid = api(stack, env, work / "split.log", "--no-worker")
    worker = stack.enter_context(process(["worker"], env, work / "split-worker.log"))
    return Topology(
        "embedded, worker process",
        base,
        f"sqlite:///{data / 'varco.sqlite3'}",
        {"serve": pid, "worker": worker},
    )


def production(stack: ExitStack, work: Path, postgres: Postgres, queue: str) -> Topology:
    database_url = postgres.new()
    env = production_env(work / "production", database_url, queue)
    base, api_pid = api(stack, env, work / "production-api.log")
    worker = stack.enter_context(process(["worker"], env, work / "production-worker.log"))
    return Topology("PostgreSQL + Redis", base, database_url, {"serve": api_pid, "worker": worker})


def report(topology: Topology, rounds: list[Round], idle: tuple[float, float] | None) -> None:
    health = statistics.median(r.health for r in rounds)
    uploads = statistics.median(r.uploads for r in rounds)
    end_to_end = statistics.median(r.end_to_end for r in rounds)
    print(f"\n{topology.name} (median of {len(rounds)} rounds)")
    print(f"  GET /health            {health:8.1f} req/s")
    print(f"  uploads                {uploads:8.1f} /s   {uploads / health:5.3f} of /health")
    verdict = "met" if end_to_end / health >= TARGET else "NOT met"
    print(
        f"  upload -> Consegnata   {end_to_end:8.1f} /s   {end_to_end / health:5.3f} of /health"
        + (f"   target >= {TARGET} {verdict}" if topology.name == "embedded" else "")
    )
    for name in topology.pids:
        cpu = statistics.median(r.cpu_ms[name] for r in rounds)
        print(f"  CPU per invoice, {name:6} {cpu:8.2f} ms")
    per_round = ", ".join(f"{r.end_to_end / r.health:.3f}" for r in rounds)
    print(f"  end to end / health per round: {per_round}")
    if idle is not None:
        print(f"  after {idle[0]:.0f} s idle, one invoice upload -> Consegnata in {idle[1]:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=500, help="per round (and /health requests)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--topology", choices=["embedded", "split", "production", "both"], default="both")
    parser.add_argument("--idle", type=float, default=30, help="seconds idle, then one timed upload; 0: none")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="varco-bench-e2e-"))
    queue = f"varco-bench-e2e-{uuid.uuid4().hex[:8]}"
    postgres = Postgres()
    names = ["embedded", "production"] if args.topology == "both" else [args.topology]
    print(
        f"{args.invoices} typical invoices per round from {args.clients} keep-alive clients; "
        f"GET /health the same number of times from the same clients"
    )
    try:
        for name in names:  # one topology at a time: each has the machine to itself
            with ExitStack() as stack:
                if name == "embedded":
                    topology = embedded(stack, work)
                elif name == "split":
                    topology = embedded_split(stack, work)
                else:
                    topology = production(stack, work, postgres, queue)
                topology.warm_up(args.clients)
                rounds = [topology.round(args.invoices, args.clients) for _ in range(args.rounds)]
                idle = (args.idle, topology.after_idle(args.idle)) if args.idle > 0 else None
            report(topology, rounds, idle)
    finally:
        postgres.drop()
        drop_queue(queue)


if __name__ == "__main__":
    main()
