"""A real `varco serve` process stays within bounded memory while refusing huge bodies (issue 19)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.live_server import LiveServer, live_server

MB = 1024 * 1024
GROWTH_LIMIT_KB = 60 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("bodies")) as running:
        yield running


def _send_body(
    server: LiveServer,
    path: str,
    total: int,
    *,
    chunked: bool,
    token: str | None = None,
    content_type: str = "application/json",
) -> bytes:
    """Stream `total` bytes of body; stop when the server closes. Returns what it answered."""
    head = [f"POST {path} HTTP/1.1", f"Host: {server.host}", f"Content-Type: {content_type}"]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    if token:
        head.append(f"Authorization: Bearer {token}")
    piece = b"A" * MB
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        sent = 0
        try:
            while sent < total:
                data = piece if not chunked else b"%x\r\n" % len(piece) + piece + b"\r\n"
                sock.sendall(data)
                sent += len(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: what we want
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return answer


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_200_mb_body_without_a_token_is_refused_in_bounded_memory(server, chunked):
    before = server.reset_peak()
    answer = _send_body(server, "/services/invoice/upload", 200 * MB, chunked=chunked)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"errorCode":"0033"' in answer
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB


def test_a_200_mb_communication_with_a_token_is_refused_in_bounded_memory(server):
    token = server.sign_in()
    before = server.reset_peak()
    answer = _send_body(server, "/api/v2/comfin", 200 * MB, chunked=True, token=token)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"errorCode":"AR03"' in answer
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB


def test_a_huge_sign_in_form_is_refused_and_the_server_still_answers(server):
    before = server.reset_peak()
    form = "application/x-www-form-urlencoded"
    answer = _send_body(server, "/auth/signin", 50 * MB, chunked=False, content_type=form)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"error":"invalid_request"' in answer
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB
    assert server.sign_in()


def test_an_invoice_with_half_a_million_attributes_is_refused_in_bounded_memory(server):
    import base64
    from pathlib import Path

    import httpx

    base = (Path(__file__).parent / "fatturapa" / "cases" / "base" / "FPR12.xml").read_bytes()
    attributes = " ".join(f'a{i}="x"' for i in range(400_000)).encode()
    bomb = base.replace(b"<Numero>", b"<Numero " + attributes + b">", 1)  # each a separate XSD error
    token = server.sign_in()
    before = server.reset_peak()
    answer = httpx.post(
        f"{server.base}/services/invoice/upload",
        json={"dataFile": base64.b64encode(bomb).decode(), "dryRun": True},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.json()["errorCode"] == "0092" and "attributes" in answer.json()["errorDescription"]
    assert server.peak_rss_kb() - before < GROWTH_LIMIT_KB
