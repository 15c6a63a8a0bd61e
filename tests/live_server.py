"""A real `varco serve` process for tests that need one: memory (peak RSS), raw sockets, fuzzing.

`live_server()` starts the server exactly as README command 1 does (embedded default, worker in
the process, demo data) on a free port and a fresh data directory, and stops it afterwards.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CallbackReceiver:
    """A local callback receiver (`url`) that answers 200 to every POST; a test's subclass decides in
    `received` how long a POST waits (e.g. until `release` is set) and learns in `answered` which
    were answered. `close` releases whatever still waits."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server API
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                event_id = self.headers.get("Varco-Event-Id", "")
                receiver.received(event_id)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                receiver.answered(event_id)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def received(self, event_id: str) -> None:
        """Before the answer, in the POST's thread."""

    def answered(self, event_id: str) -> None:
        """After the answer was written."""

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@dataclass(frozen=True)
class LiveServer:
    base: str
    host: str
    port: int
    pid: int
    data_dir: Path
    log_path: Path

    def peak_rss_kb(self) -> int:
        """The process's peak resident set size so far (VmHWM), in KiB."""
        return _status_kb(self.pid, "VmHWM")

    def reset_peak(self) -> int:
        """Lower the peak mark to the current RSS (Linux clear_refs "5"); start-up leaves it well
        above the RSS, where growth being measured could hide. Returns the new peak, in KiB."""
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        return self.peak_rss_kb()

    def rss_kb(self) -> int:
        return _status_kb(self.pid, "VmRSS")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def sign_in(self, username: str = "demo-premium", password: str = "demo-premium-pw") -> str:
        answer = httpx.post(
            f"{self.base}/auth/signin",
            data={"grant_type": "password", "username": username, "password": password},
            timeout=30,
        )
        answer.raise_for_status()
        return answer.json()["access_token"]


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


@contextmanager
def live_server(tmp_path: Path, **env_overrides: str) -> Iterator[LiveServer]:
    """`varco serve` on 127.0.0.1 with demo data; extra VARCO_* settings as keyword arguments."""
    data_dir = tmp_path / "live-data"  # created by varco itself, as on a fresh machine
    tmp_path.mkdir(parents=True, exist_ok=True)
    log_path = tmp_path / "live-server.log"
    env = {
        **os.environ,
        "VARCO_DATA_DIR": str(data_dir),
        "VARCO_PROFILE": "demo",
        "VARCO_IP_LIMITS_ENABLED": "false",
        **env_overrides,
    }
    env.pop("VARCO_DATABASE_URL", None)
    env.pop("VARCO_REDIS_URL", None)
    port = free_port()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "varco.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited with {proc.returncode}:\n{log_path.read_text()}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not start:\n{log_path.read_text()}")
            time.sleep(0.1)
        yield LiveServer(base, "127.0.0.1", port, proc.pid, data_dir, log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
