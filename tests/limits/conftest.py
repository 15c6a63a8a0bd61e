"""Limits fixtures: every limiter test runs on both backends (process memory and the real Redis
at 127.0.0.1:6379 with its own key prefix, deleted after), with limits switched on explicitly."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis
from fastapi.testclient import TestClient

from varco.limits.backends import LimiterBackend, MemoryBackend
from varco.limits.middleware import use_limiter
from varco.limits.redis_backend import RedisBackend

REDIS_URL = os.environ.get("VARCO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def delete_prefix(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    prefix = f"varco-test-{uuid.uuid4().hex[:12]}:"
    yield prefix
    delete_prefix(prefix)


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> Iterator[LimiterBackend]:
    if request.param == "memory":
        yield MemoryBackend()
        return
    prefix = request.getfixturevalue("redis_prefix")
    redis_backend = RedisBackend(REDIS_URL, prefix, timeout=5)  # a loaded CI machine is not an outage
    yield redis_backend
    redis_backend.close()


def _client(app, backend: LimiterBackend) -> Iterator[TestClient]:
    use_limiter(app, backend)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def limited(app, backend: LimiterBackend, configure) -> Iterator[TestClient]:
    """Every limit on (per IP and per tier), with a fresh limiter state on `backend`."""
    configure(ip_limits_enabled="true", tier_limits_enabled="true")
    yield from _client(app, backend)


@pytest.fixture
def tiered(app, backend: LimiterBackend, configure) -> Iterator[TestClient]:
    """Tier limits on, per-IP limits off (tests that sign in several accounts from one IP)."""
    configure(ip_limits_enabled="false", tier_limits_enabled="true")
    yield from _client(app, backend)
