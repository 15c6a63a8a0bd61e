"""Browser fixtures: the app served by uvicorn on a loopback port, Debian's chromium via Playwright."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Screenshots are taken on every run (a page that cannot be captured fails the test) and kept under
# docs/screenshots only when asked: VARCO_SCREENSHOTS_DIR=docs/screenshots; else in a temp dir.
SCREENSHOTS_DIR = os.environ.get("VARCO_SCREENSHOTS_DIR")


@pytest.fixture
def live_server(app) -> Iterator[str]:
    """The test app (same database, clock and queue as the test) on an ephemeral loopback port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    ready = threading.Event()
    while not server.started and thread.is_alive():
        ready.wait(0.02)  # readiness poll of the server thread, not a timing assumption of a test
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture(scope="session")
def chromium_browser(playwright_session):
    if not CHROMIUM.exists():
        pytest.skip("chromium missing: scripts/test.sh installs it with apt")
    browser = playwright_session.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def browser_page(chromium_browser, live_server):
    context = chromium_browser.new_context(
        base_url=live_server, locale="it-IT", viewport={"width": 1200, "height": 900}
    )
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def shoot(request, tmp_path):
    """Save a full-page screenshot (from the SQLite run only: one set of files)."""
    folder = Path(SCREENSHOTS_DIR) if SCREENSHOTS_DIR else tmp_path

    def take(page, name: str) -> None:
        if "sqlite" in request.node.name:
            folder.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(folder / f"{name}.png"), full_page=True)

    return take
