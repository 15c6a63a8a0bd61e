"""Request bodies are counted while read, before authentication: 413 in the route's shape."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        part = min(size, total - sent)
        sent += part
        yield b"x" * part


@pytest.fixture
def small_limits(configure) -> None:
    configure(max_body_bytes=4096, max_file_body_bytes=16384)


def test_an_upload_over_the_limit_without_a_token_is_413_0033_in_the_upload_shape(client, small_limits):
    response = client.post("/services/invoice/upload", content=b"{" + b" " * 20000 + b"}")
    assert response.status_code == 413
    body = response.json()
    assert body["errorCode"] == "0033" and body["uploadFileName"] is None
    assert "16384 bytes" in body["errorDescription"]
    assert response.headers["x-request-id"] in body["errorDescription"]
    assert response.headers["connection"] == "close"


def test_a_chunked_body_is_counted_while_it_is_read(client, small_limits):
    # no Content-Length: the count, not the header, stops it
    response = client.post("/services/invoice/uploadSigned", content=_chunks(10 * 1024 * 1024))
    assert response.status_code == 413
    assert response.json()["errorCode"] == "0033"


def test_a_body_under_the_file_limit_reaches_the_bearer_check(client, small_limits):
    response = client.post("/services/invoice/upload", content=b"{" + b" " * 10000 + b"}")
    assert response.status_code == 401


def test_sign_in_keeps_the_general_limit_and_the_oauth_shape(client, small_limits):
    response = client.post(
        "/auth/signin",
        content=b"grant_type=password&username=a&password=" + b"p" * 5000,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413
    assert response.json()["error"] == "invalid_request"


def test_a_json_route_without_a_file_keeps_the_general_limit(client, small_limits):
    response = client.post("/api/v2/invoices-out/download", json={"ids": ["1"] * 3000})
    assert response.status_code == 413
    assert response.json()["errorCode"] == "0033"


@pytest.mark.parametrize("path", ["/api/v2/comfin", "/services/ClientRequest/CreateTransmissionRequest"])
def test_a_communication_over_the_limit_is_413_ar03(client, small_limits, path):
    response = client.post(path, content=_chunks(100_000), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["errorCode"] == "AR03"


def test_the_file_limit_defaults_to_the_contract_file_as_base64_with_room_for_json():
    from varco.settings import Settings

    settings = Settings()
    base64_of_largest_file = -(-settings.max_upload_bytes // 3) * 4
    assert settings.file_body_bytes > base64_of_largest_file * 1.03
    assert settings.file_body_bytes < 8 * 1024 * 1024
