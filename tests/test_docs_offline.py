"""/docs (Swagger UI) and /redoc (ReDoc) on a real `varco serve`, opened in Chromium with every
request outside the server blocked: the pages list the operations and ask nothing of a CDN.

The browser reaches the server by a name, http://varco.test:PORT, as on a real host: Swagger UI
skips its validator.swagger.io badge for a document on localhost or 127.0.0.1."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.live_server import LiveServer, live_server

CHROMIUM = Path("/usr/bin/chromium")
HOST = "varco.test"
UPLOAD = "/services/invoice/upload"
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
TIMEOUT_MS = 60_000  # ReDoc renders the whole document on a shared 2-core machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("docs")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server: LiveServer, playwright_session):
    if not CHROMIUM.exists():
        pytest.skip("chromium missing: scripts/test.sh installs it with apt")
    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-proxy-server",
        "--dns-prefetch-disable",
        # varco.test is this server; no other name resolves, should a request slip past the route.
        f"--host-resolver-rules=MAP {HOST} 127.0.0.1, MAP * ~NOTFOUND",
    ]
    launched = playwright_session.chromium.launch(executable_path=str(CHROMIUM), args=args)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def document(server: LiveServer) -> dict:
    return httpx.get(f"{server.base}/openapi.json", timeout=30).raise_for_status().json()


class Offline:
    """A page whose requests outside `origin` are aborted and recorded, like a box with no internet."""

    def __init__(self, browser, origin: str) -> None:
        self.origin = origin
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.context = browser.new_context(base_url=origin, viewport={"width": 1280, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("response", self._response)

    def _route(self, route) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if (
            parts.scheme in ("http", "https", "ws", "wss")
            and f"{parts.scheme}://{parts.netloc}" != self.origin
        ):
            self.outside.append(url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    def _response(self, response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def offline(browser, server: LiveServer) -> Iterator[Offline]:
    opened = Offline(browser, f"http://{HOST}:{server.port}")
    yield opened
    opened.close()


def _upload(document: dict) -> dict:
    return document["paths"][UPLOAD]["post"]


def _operations(document: dict) -> list[dict]:
    return [op for path in document["paths"].values() for method, op in path.items() if method in METHODS]


def _tags(document: dict) -> set[str]:
    return {tag for op in _operations(document) for tag in op.get("tags", [])}


def test_swagger_ui_lists_the_operations_with_no_network(offline: Offline, document: dict):
    from playwright.sync_api import expect

    page = offline.page
    page.goto("/docs")
    upload = page.locator(f'.opblock.opblock-post:has(.opblock-summary-path[data-path="{UPLOAD}"])')
    expect(upload).to_be_visible(timeout=TIMEOUT_MS)
    expect(upload).to_contain_text(_upload(document)["summary"])
    tags = page.locator(".opblock-tag-section h3").all_inner_texts()
    assert len(tags) >= 5 and set(tags) == _tags(document)
    # Swagger UI shows an operation under each of its tags.
    assert page.locator(".opblock").count() == sum(
        len(op.get("tags") or [""]) for op in _operations(document)
    )
    page.wait_for_load_state("networkidle")
    assert offline.outside == []
    assert offline.failed == []


def test_swagger_ui_opens_an_operation_with_no_network(offline: Offline, document: dict):
    from playwright.sync_api import expect

    page = offline.page
    page.goto("/docs")
    upload = page.locator(f'.opblock.opblock-post:has(.opblock-summary-path[data-path="{UPLOAD}"])')
    upload.locator(".opblock-summary").click(timeout=TIMEOUT_MS)
    expect(upload.locator(".opblock-body")).to_be_visible()
    expect(upload.locator(".responses-wrapper")).to_contain_text("200")
    page.wait_for_load_state("networkidle")
    assert offline.outside == []
    assert offline.failed == []


def test_redoc_lists_the_operations_with_no_network(offline: Offline, document: dict):
    from playwright.sync_api import expect

    page = offline.page
    page.goto("/redoc")
    summary = _upload(document)["summary"]
    expect(page.locator("h2").filter(has_text=summary)).to_be_visible(timeout=TIMEOUT_MS)
    menu = page.locator("[role=menuitem]")
    expect(page.locator(f'[role=menuitem][aria-label="{summary}"]')).to_have_count(1)
    for tag in _tags(document):
        expect(menu.filter(has_text=tag).first).to_be_visible()
    assert menu.count() >= len(_operations(document)) + len(_tags(document))
    page.wait_for_load_state("networkidle")
    # The "API docs by Redocly" logo: the package's ReDoc asks the server, not cdn.redoc.ly.
    expect(page.locator('img[alt="redocly logo"]')).to_have_attribute("src", "/redoc/logo-mini.svg")
    assert offline.outside == []
    assert offline.failed == []
    assert "fonts.googleapis.com" not in page.content()


def test_the_pages_name_only_the_servers_own_assets(server: LiveServer, document: dict):
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{server.base}{page}", timeout=30).raise_for_status().text
        assets = re.findall(r'(?:src|href)="([^"]*)"', html)
        assert assets and all(url.startswith("/") and not url.startswith("//") for url in assets), assets
        assert "http://" not in html and "https://" not in html
        for url in assets:
            answer = httpx.get(f"{server.base}{url}", timeout=30)
            assert answer.status_code == 200 and answer.content, url
    assert not any(path.startswith(("/docs", "/redoc")) for path in document["paths"])
    assert httpx.get(f"{server.base}/docs/assets/swagger/nothing.js", timeout=30).status_code == 404
