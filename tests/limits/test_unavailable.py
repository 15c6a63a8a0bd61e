"""Redis unreachable: limited endpoints answer 503 rather than letting traffic through unlimited."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.factories import bearer, make_account, sign_in
from varco.limits.middleware import use_limiter
from varco.limits.redis_backend import RedisBackend

DOWN = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def down(app, configure):
    configure(ip_limits_enabled="false", tier_limits_enabled="false")
    with TestClient(app, raise_server_exceptions=False) as client:
        token = sign_in(client, make_account().username)  # before the limiter goes down
        use_limiter(app, RedisBackend(DOWN, "varco-test-down:", timeout=0.2))
        configure(ip_limits_enabled="true", tier_limits_enabled="true")
        yield client, token


def test_authenticated_calls_get_503_in_the_coded_shape(down):
    client, token = down
    response = client.get("/auth/userInfo", headers=bearer(token))
    assert response.status_code == 503
    assert response.json()["errorCode"] == "0095"
    assert "rate limiter cannot be reached" in response.json()["errorDescription"]
    assert response.headers["Retry-After"] == "5"


def test_sign_in_gets_503_in_the_oauth_shape(down):
    client, _ = down
    response = client.post("/auth/signin", data={"grant_type": "password", "username": "x", "password": "y"})
    assert response.status_code == 503
    assert response.json()["error"] == "temporarily_unavailable"


def test_upload_gets_503_in_the_upload_shape(down):
    client, token = down
    response = client.post("/services/invoice/upload", json={"dataFile": "x"}, headers=bearer(token))
    assert response.status_code == 503
    assert response.json()["errorCode"] == "0095" and response.json()["uploadFileName"] is None


def test_unlimited_endpoints_keep_working(down):
    client, _ = down
    assert client.get("/health").status_code == 200


def test_with_limits_switched_off_redis_is_not_consulted(down, configure):
    client, token = down
    configure(ip_limits_enabled="false", tier_limits_enabled="false")
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 200
