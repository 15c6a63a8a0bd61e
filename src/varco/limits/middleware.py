"""Pure ASGI middleware: §8.1 per-IP limits before anything else runs, and the X-RateLimit-*
headers of the tier bucket (decided by `service.guard` once the caller is known) on the answer."""

from __future__ import annotations

import logging
import threading
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from varco.core.clock import current_clock
from varco.core.errors import render
from varco.limits import ip
from varco.limits.backends import LimiterBackend, LimiterUnavailable
from varco.limits.decisions import MINUTE_MS
from varco.limits.errors import LimitError, limiter_unavailable, rate_limited
from varco.limits.redis_backend import build_backend
from varco.settings import get_settings

log = logging.getLogger("varco.limits")
STATE_HEADERS = "varco_ratelimit_headers"  # scope["state"] key: headers for the tier bucket
_build_lock = threading.Lock()


def limiter_of(app: Any) -> LimiterBackend:
    """The app's limiter backend, built from settings on first use (one per application)."""
    backend = getattr(app.state, "varco_limiter", None)
    if backend is None:
        with _build_lock:
            backend = getattr(app.state, "varco_limiter", None)
            if backend is None:
                backend = app.state.varco_limiter = build_backend(get_settings())
    return backend


def use_limiter(app: FastAPI, backend: LimiterBackend) -> None:
    """Replace the app's limiter backend (tests, benchmarks)."""
    app.state.varco_limiter = backend


def install(app: FastAPI) -> None:
    """Add the middleware; call before RequestMiddleware is added so that it runs inside it."""
    ip.check_trusted_proxies(get_settings())  # a bad entry stops the start, not a request later
    app.add_middleware(LimitsMiddleware)


def now_ms() -> int:
    return int(current_clock().now().timestamp() * 1000)


class LimitsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = get_settings()
        if settings.ip_limits_enabled:
            rule = ip.match(scope["method"], scope["path"])
            if rule is not None:
                refusal = await self._refusal(scope, rule)
                if refusal is not None:
                    request = Request(scope)
                    response = render(
                        request,
                        status=refusal.status,
                        code=refusal.code,
                        message=str(refusal),
                        headers=refusal.headers,
                    )
                    await response(scope, receive, send)
                    return
        state = scope.setdefault("state", {})

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = state.get(STATE_HEADERS)
                if extra:
                    message["headers"] = [
                        *message.get("headers", []),
                        *((k.lower().encode(), v.encode()) for k, v in extra.items()),
                    ]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _refusal(self, scope: Scope, rule: ip.IpRule) -> LimitError | None:
        settings = get_settings()
        peer = (scope.get("client") or ("unknown", 0))[0]
        forwarded = [v.decode("latin-1") for k, v in scope["headers"] if k == b"x-forwarded-for"]
        client = ip.client_ip(peer, forwarded, settings)
        limit = getattr(settings, rule.setting)
        try:
            decision = await limiter_of(scope["app"]).ahit_window(
                f"ip:{rule.family}:{client}", now_ms(), limit, MINUTE_MS
            )
        except LimiterUnavailable as exc:
            log.error("per-IP limit of %s not decided: %s", client, exc)
            return limiter_unavailable()
        if decision.allowed:
            return None
        return rate_limited(
            f"Too many {rule.label}: at most {limit} per minute per IP address (§8.1)",
            decision.retry_after_s,
            limit=f"ip:{rule.family}",
        )
