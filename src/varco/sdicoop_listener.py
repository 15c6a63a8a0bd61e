"""The second listener of `varco serve --sdicoop-port`: the SDICoop services alone, over TLS that
requires a client certificate issued by `VARCO_SDICOOP_CLIENT_CA` (the SDI's), with varco's own
server certificate. It runs in a thread beside the API's server and stops with it."""

from __future__ import annotations

import ssl
import threading
import time
from pathlib import Path

import uvicorn

from varco.app import create_sdicoop_app
from varco.cli_support import fail
from varco.settings import Settings

_STARTUP_SECONDS = 10


class SdicoopListener:
    def __init__(self, config: uvicorn.Config) -> None:
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="sdicoop-listener", daemon=True)

    def start(self) -> None:
        """Start, and wait until it listens (a port in use stops `varco serve` with the reason)."""
        self.thread.start()
        deadline = time.monotonic() + _STARTUP_SECONDS
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                fail(f"the SDICoop listener did not start on port {self.server.config.port} (see the log)")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=_STARTUP_SECONDS)


def sdicoop_listener(
    settings: Settings,
    host: str,
    port: int,
    *,
    cert: Path | None = None,
    key: Path | None = None,
    client_ca: Path | None = None,
) -> SdicoopListener:
    """The listener, its TLS from the options or the settings (a missing file is named, not guessed)."""
    needed = {
        "--ssl-certfile or VARCO_SDICOOP_SERVER_CERT": cert or settings.sdicoop_server_cert,
        "--ssl-keyfile or VARCO_SDICOOP_SERVER_KEY": key or settings.sdicoop_server_key,
        "--ssl-ca-certs or VARCO_SDICOOP_CLIENT_CA": client_ca or settings.sdicoop_client_ca,
    }
    files: list[str] = []
    for name, path in needed.items():
        if path is None:
            fail(f"--sdicoop-port needs {name} (docs/sdicoop.md)")
        elif not path.is_file():
            fail(f"{name}: no file at {path}")
        files.append(str(path))
    config = uvicorn.Config(
        create_sdicoop_app(),
        host=host,
        port=port,
        log_level="info",
        log_config=None,  # one log format per process (core/logs.py)
        access_log=False,  # the app logs a line per request (core/requests.py)
        proxy_headers=False,
        ssl_certfile=files[0],
        ssl_keyfile=files[1],
        ssl_ca_certs=files[2],
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    )
    return SdicoopListener(config)
