"""Small real servers for the SDICoop tests: HTTPS with mutual TLS, and plain HTTP for zeep."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from varco.sdi.sdicoop.server import SoapReply


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    peer: tuple[str, int] = ("", 0)  # the client's address and port: one per TCP connection


class Close:
    """Read the request, then close the connection without answering."""


@dataclass
class Stall:
    """Read the request, then wait (no answer) until the test ends."""

    released: threading.Event = field(default_factory=threading.Event)


Handler = Callable[[Seen], SoapReply | Close | Stall]


@dataclass
class RunningServer:
    url: str
    seen: list[Seen]
    stalls: list[Stall]


def _handler_class(handle: Handler, seen: list[Seen], stalls: list[Stall]) -> type:
    class SoapHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = Seen(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length),
                self.client_address[:2],
            )
            seen.append(request)
            reply = handle(request)
            if isinstance(reply, Close):
                self.close_connection = True
                return
            if isinstance(reply, Stall):
                stalls.append(reply)
                reply.released.wait(30)
                self.close_connection = True
                return
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_POST = do_GET = do_PUT = _serve

        def log_message(self, format: str, *args: object) -> None:
            pass

    return SoapHandler


@contextmanager
def serve(
    handle: Handler,
    *,
    cert: Path | None = None,
    key: Path | None = None,
    client_ca: Path | None = None,
) -> Iterator[RunningServer]:
    """A threaded server on 127.0.0.1; with cert/key it is HTTPS, with client_ca it requires a client
    certificate issued by that CA."""
    seen: list[Seen] = []
    stalls: list[Stall] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(handle, seen, stalls))
    server.daemon_threads = True
    scheme = "http"
    if cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        if client_ca is not None:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(client_ca)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield RunningServer(f"{scheme}://127.0.0.1:{server.server_address[1]}", seen, stalls)
    finally:
        for stall in stalls:
            stall.released.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
