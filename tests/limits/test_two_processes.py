"""Two API processes (uvicorn) share one Redis bucket exactly under concurrent load.

Loopback only; bounded: 150 + 60 requests, every wait capped, both servers stopped at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.limits.conftest import REDIS_URL
from varco.accounts import service as accounts
from varco.core import migrate
from varco.core.clock import SystemClock
from varco.core.db import Database
from varco.settings import Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def servers(tmp_path: Path, redis_prefix: str) -> Iterator[list[str]]:
    url = f"sqlite:///{tmp_path / 'varco.sqlite3'}"
    migrate.upgrade(url)
    db = Database(url)
    with db.unit_of_work() as session:
        new = accounts.NewAccount(username="shared", password="shared-pw", vat_code="01234560017", tier=0)
        accounts.create_account(session, new, Settings(), SystemClock())
    db.dispose()
    env = {
        **os.environ,
        "VARCO_DATA_DIR": str(tmp_path),
        "VARCO_DATABASE_URL": url,
        "VARCO_REDIS_URL": REDIS_URL,
        "VARCO_LIMITS_KEY_PREFIX": redis_prefix,
        "VARCO_IP_LIMITS_ENABLED": "true",
        "VARCO_TIER_LIMITS_ENABLED": "true",
        "VARCO_LIMITS_REDIS_TIMEOUT_SECONDS": "5",
    }
    ports = [free_port(), free_port()]
    command = [sys.executable, "-m", "uvicorn", "--factory", "varco.app:create_app", "--host", "127.0.0.1"]
    procs = [subprocess.Popen([*command, "--port", str(p), "--log-level", "warning"], env=env) for p in ports]
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        deadline = time.monotonic() + 60
        for base in bases:
            while True:
                try:
                    if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "servers did not start"
                time.sleep(0.1)  # waiting for a subprocess to listen, not for a result
        yield bases
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def _fire(bases: list[str], path: str, n: int, headers: dict[str, str] | None = None) -> list[httpx.Response]:
    clients = [httpx.Client(base_url=base, timeout=30, headers=headers) for base in bases]
    try:
        with ThreadPoolExecutor(max_workers=10) as pool:
            return list(pool.map(lambda i: clients[i % 2].get(path), range(n)))
    finally:
        for client in clients:
            client.close()


@pytest.mark.redis
def test_two_processes_share_the_tier_bucket_and_the_ip_window(servers):
    form = {"grant_type": "password", "username": "shared", "password": "shared-pw"}
    token = httpx.post(f"{servers[0]}/auth/signin", data=form, timeout=30).json()["access_token"]
    # the sign-in on one server used this IP's one authentication of the minute on both
    assert httpx.post(f"{servers[1]}/auth/signin", data=form, timeout=30).status_code == 429

    responses = _fire(servers, "/auth/userInfo", 150, {"Authorization": f"Bearer {token}"})
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 60 and statuses.count(429) == 90  # tier 0: exactly 60 per hour
    remaining = sorted(int(r.headers["X-RateLimit-Remaining"]) for r in responses if r.status_code == 200)
    assert remaining == list(range(60))  # every accepted call saw its own count: no lost update

    found = _fire(servers, "/api/v2/invoices-out", 60)
    assert sum(r.status_code != 429 for r in found) == 12  # §8.1: 12 per minute for the IP, across both
