"""Per-request overhead of the limiter (in-process memory and Redis) against the same endpoints with
limits switched off, measured in one process straight through the ASGI app (no sockets, so the
difference is the limiter and not network noise).

.venv/bin/python bench/limits.py [--requests 3000] [--rounds 5] [--redis redis://127.0.0.1:6379/0]

Endpoints: GET /auth/userInfo (authenticated: tier bucket + delegation attribution), a route in a
per-IP family (/services/notification/out/..., §8.1 window), and an unlimited route (pass-through).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

Headers = list[tuple[bytes, bytes]]


async def call(app, path: str, headers: Headers) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    status = 0

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def per_request_ms(app, path: str, headers: Headers, n: int) -> float:
    for _ in range(50):  # warm-up
        await call(app, path, headers)
    start = time.perf_counter()
    for _ in range(n):
        status = await call(app, path, headers)
    elapsed = time.perf_counter() - start
    assert status == 200, f"{path} answered {status}"
    return elapsed / n * 1000


def configure(**values: str) -> None:
    from varco.settings import get_settings

    for name, value in values.items():
        os.environ[f"VARCO_{name.upper()}"] = value
    get_settings.cache_clear()


async def limiter_work_us(app, account_id: int, n: int) -> dict[str, float]:
    """The limiter's own work per request, timed alone: what the middleware and `guard` add."""
    from starlette.requests import Request

    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.limits import ip, service
    from varco.limits.middleware import LimitsMiddleware

    out = {}
    with unit_of_work() as session:
        from varco.accounts import service as accounts

        account = accounts.get(session, account_id)
        scope = {"type": "http", "method": "GET", "path": "/auth/userInfo", "headers": [], "app": app}
        service.guard(Request(scope), session, account, current_clock())  # fills the attribution cache
        start = time.perf_counter()
        for _ in range(n):
            service.guard(Request(scope), session, account, current_clock())
        out["tier bucket (guard)"] = (time.perf_counter() - start) / n * 1e6
    path = "/services/notification/out/bench-probe"
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "headers": [],
        "app": app,
        "client": ("1.2.3.4", 1),
    }
    middleware, rule = LimitsMiddleware(app), ip.match("GET", path)
    start = time.perf_counter()
    for _ in range(n):
        await middleware._refusal(scope, rule)
    out["per-IP window (middleware)"] = (time.perf_counter() - start) / n * 1e6
    return out


async def main_async(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="varco-bench-limits-")
    prefix = f"varco-bench-{uuid.uuid4().hex[:8]}:"
    configure(
        data_dir=data_dir,
        tiers=json.dumps({t: [10**9, 10**9] for t in range(7)}),  # never 429 during the bench
        find_requests_per_minute=str(10**9),
        limits_key_prefix=prefix,
    )
    os.environ.pop("VARCO_DATABASE_URL", None)
    os.environ.pop("VARCO_REDIS_URL", None)

    from varco.accounts import service as accounts
    from varco.app import create_app
    from varco.core import migrate
    from varco.core.clock import current_clock
    from varco.core.db import get_database, unit_of_work
    from varco.limits.backends import MemoryBackend
    from varco.limits.middleware import use_limiter
    from varco.limits.redis_backend import RedisBackend
    from varco.settings import get_settings

    migrate.upgrade(get_database().url)
    with unit_of_work() as session:
        new = accounts.NewAccount(username="bench", password="bench-pw", vat_code="01234560017")
        accounts.create_account(session, new, get_settings(), current_clock())

    app = create_app()

    @app.get("/bench/bare")
    def bare() -> dict:
        return {"ok": True}

    @app.get("/services/notification/out/bench-probe")
    def probe() -> dict:
        return {"ok": True}

    configure(ip_limits_enabled="false", tier_limits_enabled="false")
    from starlette.testclient import TestClient

    with TestClient(app) as client:
        form = {"grant_type": "password", "username": "bench", "password": "bench-pw"}
        token = client.post("/auth/signin", data=form).json()["access_token"]
    auth: Headers = [(b"authorization", f"Bearer {token}".encode())]

    redis_backend = RedisBackend(args.redis, prefix)
    backends = {"memory": MemoryBackend(), "redis": redis_backend}
    endpoints = {
        "GET /auth/userInfo (tier bucket)": ("/auth/userInfo", auth),
        "GET per-IP family route (§8.1 window)": ("/services/notification/out/bench-probe", []),
        "GET unlimited route (pass-through)": ("/bench/bare", []),
    }
    results: dict[tuple[str, str], list[float]] = {}
    with unit_of_work() as session:
        account_id = accounts.get_by_username(session, "bench").id
    for _ in range(args.rounds):  # interleaved rounds: drift hits every configuration alike
        for config in ("off", "memory", "redis"):
            if config == "off":
                configure(ip_limits_enabled="false", tier_limits_enabled="false")
            else:
                configure(ip_limits_enabled="true", tier_limits_enabled="true")
                use_limiter(app, backends[config])
            for label, (path, headers) in endpoints.items():
                ms = await per_request_ms(app, path, headers, args.requests)
                results.setdefault((label, config), []).append(ms)

    print(f"whole request through the ASGI app, best of {args.rounds} rounds x {args.requests} (ms)")
    print(f"{'endpoint':42} {'off':>8} {'memory':>8} {'+ms':>7} {'redis':>8} {'+ms':>7}")
    for label in endpoints:
        off, mem, red = (min(results[(label, c)]) for c in ("off", "memory", "redis"))
        print(f"{label:42} {off:8.3f} {mem:8.3f} {mem - off:+7.3f} {red:8.3f} {red - off:+7.3f}")
    configure(ip_limits_enabled="true", tier_limits_enabled="true")
    print(f"limiter work alone per request, best of {args.rounds} x {args.requests} (us)")
    for name, backend in backends.items():
        use_limiter(app, backend)
        rounds = [await limiter_work_us(app, account_id, args.requests) for _ in range(args.rounds)]
        print(f"  {name:7} " + ", ".join(f"{k} {min(r[k] for r in rounds):.1f}" for k in rounds[0]))
    pings = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(args.requests):
            redis_backend.client.ping()
        pings.append((time.perf_counter() - start) / args.requests * 1e6)
    print(f"  redis PING round trip alone (the floor of any Redis decision): {min(pings):.1f}")

    keys = list(redis_backend.client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        redis_backend.client.delete(*keys)
    redis_backend.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
