"""A real HTTP receiver in the test process: checks signatures, fails on demand, records everything."""

from __future__ import annotations

import hashlib
import hmac
import json
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from varco.core.clock import Clock

TOLERANCE_SECONDS = 300


@dataclass(frozen=True)
class Received:
    event_id: str
    event_type: str
    signature: str
    timestamp: int | None
    body: bytes
    answered: int  # the status the receiver answered
    signature_ok: bool
    path: str
    host: str
    request_id: str = ""  # X-Request-ID: the request that caused the event

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    @property
    def accepted(self) -> bool:
        return 200 <= self.answered < 300


def check_signature(secret: str, header: str, body: bytes, now: float) -> tuple[bool, int | None]:
    """Written from docs/callbacks.md, independently of varco.callbacks.signing."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if "t" not in fields or "v1" not in fields or not fields["t"].isdigit():
        return False, None
    timestamp = int(fields["t"])
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    fresh = abs(now - timestamp) <= TOLERANCE_SECONDS
    return fresh and hmac.compare_digest(expected, fields["v1"]), timestamp


class Receiver:
    """`answer(received_so_far, event_id)` decides each status; 200 by default."""

    def __init__(self, clock: Clock, tls: tuple[Path, Path] | None = None) -> None:
        """`tls`: (certificate, key) to answer over HTTPS."""
        self.clock = clock
        self.scheme = "https" if tls else "http"
        self.secret: str | None = None
        self.received: list[Received] = []
        self.seen_ids: set[str] = set()  # what a receiver de-duplicating on Varco-Event-Id processed
        self.failures: dict[str, int] = {}  # eventId (or "*") -> failures still to answer
        self.status_for_failures = 503
        self.answer: Callable[[str], int] | None = None
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}/hooks/varco"

    def fail(self, event_id: str = "*", times: int = 1, status: int = 503) -> None:
        self.failures[event_id] = times
        self.status_for_failures = status

    def accepted(self) -> list[Received]:
        return [r for r in self.received if r.accepted]

    def accepted_ids(self) -> list[str]:
        return [r.event_id for r in self.accepted()]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _decide(self, event_id: str) -> int:
        if self.answer is not None:
            return self.answer(event_id)
        for key in (event_id, "*"):
            if self.failures.get(key, 0) > 0:
                self.failures[key] -= 1
                return self.status_for_failures
        return 200

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                header = self.headers.get("Varco-Signature", "")
                with receiver._lock:
                    secret = receiver.secret or ""
                    ok, timestamp = check_signature(secret, header, body, receiver.clock.now().timestamp())
                    event_id = self.headers.get("Varco-Event-Id", "")
                    status = receiver._decide(event_id) if ok else 401
                    if 200 <= status < 300:
                        receiver.seen_ids.add(event_id)
                    receiver.received.append(
                        Received(
                            event_id=event_id,
                            event_type=self.headers.get("Varco-Event-Type", ""),
                            signature=header,
                            timestamp=timestamp,
                            body=body,
                            answered=status,
                            signature_ok=ok,
                            path=self.path,
                            host=self.headers.get("Host", ""),
                            request_id=self.headers.get("X-Request-ID", ""),
                        )
                    )
                self.send_response(status)
                payload = b"ok" if status < 300 else b"receiver busy"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        return Handler
