"""Preservation sealing as shipped: CPU of `varco serve` per invoice sealed by the periodic work.

.venv/bin/python bench/sealing.py [--invoices 300] [--rounds 2]

Each round: a fresh `varco serve` (embedded default, the worker in the process), `--invoices`
typical invoices uploaded from 4 clients and delivered (7 Consegnata), then the process's CPU from
just before the next minute's tick (the periodic work runs on the minute) until every one has its
package. Its idle CPU over those seconds is counted in (a few ms a second). No target: every
invoice is sealed once, so this is part of a long-running server's CPU per invoice, which the
end-to-end bench's short windows mostly leave out (docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _topology import (  # noqa: E402
    api,
    cpu_seconds,
    env_for,
    sealed,
    until_next_minute,
    upload_all,
    wait_delivered,
)


def one_round(count: int) -> float:
    work = Path(tempfile.mkdtemp(prefix="varco-bench-sealing-"))
    database_url = f"sqlite:///{work / 'varco.sqlite3'}"
    with ExitStack() as stack:
        base, pid = api(stack, env_for(work), work / "api.log")
        time.sleep(until_next_minute() + 1)  # past a tick: the next one seals ours only
        upload_all([base], count, 4)
        wait_delivered(database_url, count, "sealing")
        if until_next_minute() > 15:
            time.sleep(until_next_minute() - 1.5)  # just before the tick
        before, cpu = sealed(database_url), cpu_seconds(pid)
        deadline = time.monotonic() + 120
        while sealed(database_url) < before + count:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {sealed(database_url) - before} of {count} sealed")
            time.sleep(0.2)
        return (cpu_seconds(pid) - cpu) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    figures = [one_round(args.invoices) for _ in range(args.rounds)]
    rounds = ", ".join(f"{figure:.2f}" for figure in figures)
    print(f"{args.invoices} delivered invoices sealed by the periodic work, {args.rounds} rounds")
    print(f"CPU of varco serve per invoice sealed: {statistics.median(figures):.2f} ms (rounds {rounds})")


if __name__ == "__main__":
    main()
