"""Shared bench helpers: a real uvicorn server on a temp SQLite database, and a bounded load loop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

# The app under test plus a bare endpoint in the same process, so both are measured alike.
SERVER_CODE = """
import sys, uvicorn
from varco.app import create_app
app = create_app()
@app.get("/bench/bare")
def bare() -> dict:
    return {"ok": True}
import base64
from pydantic import BaseModel
class Body(BaseModel):
    dataFile: str
@app.post("/bench/decode")
def decode(body: Body) -> dict:
    return {"size": len(base64.b64decode(body.dataFile))}
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    base: str
    env: dict[str, str]
    pid: int

    def cli(self, *args: str) -> None:
        """Run a `varco` command against the server's database."""
        subprocess.run(
            [sys.executable, "-m", "varco.cli", *args], env=self.env, check=True, capture_output=True
        )


@contextmanager
def running_server(extra_env: dict[str, str] | None = None) -> Iterator[Server]:
    data_dir = tempfile.mkdtemp(prefix="varco-bench-")
    env = {
        **os.environ,
        "VARCO_DATA_DIR": data_dir,
        "VARCO_IP_LIMITS_ENABLED": "false",
        "VARCO_TIER_LIMITS_ENABLED": "false",
        **(extra_env or {}),
    }
    env.pop("VARCO_DATABASE_URL", None)
    subprocess.run(
        [sys.executable, "-m", "varco.cli", "db", "upgrade"], env=env, check=True, capture_output=True
    )
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER_CODE, str(port)], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield Server(base, env, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def throughput(
    call: Callable[[httpx.Client], None],
    *,
    seconds: float = 5.0,
    threads: int = 4,
    max_requests: int = 200_000,
) -> float:
    """Requests per second over `seconds` with `threads` keep-alive clients (bounded in time and count)."""
    count = 0
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds

    def loop() -> None:
        nonlocal count
        with httpx.Client(timeout=30) as client:
            while time.perf_counter() < stop_at:
                call(client)
                with lock:
                    count += 1
                    if count >= max_requests:
                        return

    start = time.perf_counter()
    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return count / (time.perf_counter() - start)
