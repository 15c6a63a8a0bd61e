"""`varco worker` lowers its CPU priority by VARCO_WORKER_NICE before its threads start
(docs/operations.md, "Processes"): on a machine shared with API processes, requests come first."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from varco.settings import Settings

DEFAULT = Settings.model_fields["worker_nice"].default


def niceness(pid: int) -> dict[str, int]:
    """The nice value of each thread of a process, by thread name (/proc/PID/task/TID/stat)."""
    values = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        name = (task / "comm").read_text().strip()
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        values[f"{name}:{task.name}"] = int(fields[16])  # field 19, counted from 3 after the name
    return values


@pytest.mark.parametrize("setting", [None, "0", "12"])
def test_the_worker_and_all_its_threads_run_at_the_niceness_set(tmp_path: Path, setting: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env["VARCO_DATA_DIR"] = str(tmp_path)
    if setting is not None:
        env["VARCO_WORKER_NICE"] = setting
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    expected = min(19, ours + (DEFAULT if setting is None else int(setting)))
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "varco.cli", "worker", "--workers", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        # Up: the main thread, the log writer, the scheduler, huey's scheduler, the two job threads.
        while "scheduler started" not in log.read_text() or len(niceness(worker.pid)) < 6:
            assert worker.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.05)
        threads = niceness(worker.pid)
        assert set(threads.values()) == {expected}, threads
    finally:
        worker.terminate()
        worker.wait(timeout=60)
