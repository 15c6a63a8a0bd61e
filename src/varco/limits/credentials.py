"""Failed password checks, per client IP address and per user name (docs/security.md).

Every place that checks a password (the sign-in, the version-1 calls with credentials in the body,
the panel's sign-in) asks `refuse_if_guessing` first and reports a wrong password with
`count_failure`: past `credential_failures_limit` failures in `credential_failures_window`, the
check is refused with 429 before argon2 runs, so nothing answers whether a guess was right and no
one spends the server's CPU on guesses. The §8.1 one-sign-in-per-minute limit is per route; this
one follows the password, whichever route carries it.
"""

from __future__ import annotations

import logging

from starlette.requests import Request

from varco.core.clock import Clock
from varco.limits import ip
from varco.limits.errors import rate_limited
from varco.limits.middleware import limiter_of
from varco.settings import get_settings

log = logging.getLogger("varco.limits")


def _keys(request: Request, username: str | None) -> list[str]:
    settings = get_settings()
    peer = request.client.host if request.client else "unknown"
    client = ip.client_ip(peer, request.headers.getlist("x-forwarded-for"), settings)
    keys = [f"credentials:ip:{client}"]
    if username:
        keys.append(f"credentials:user:{username.strip().lower()[:200]}")
    return keys


def refuse_if_guessing(request: Request, username: str | None, clock: Clock) -> None:
    """429 when the client or the user name has failed too often lately."""
    settings = get_settings()
    limit = settings.credential_failures_limit
    if limit <= 0:
        return
    window_ms = int(settings.credential_failures_window.total_seconds() * 1000)
    now_ms = int(clock.now().timestamp() * 1000)
    backend = limiter_of(request.app)
    for key in _keys(request, username):
        decision = backend.peek_window(key, now_ms, limit, window_ms)
        if not decision.allowed:
            log.warning("password checks refused for %s: %d failures", key.split(":", 2)[1], decision.count)
            minutes = settings.credential_failures_window.total_seconds() / 60
            raise rate_limited(
                f"Too many failed sign-ins: at most {limit} in {minutes:g} minutes",
                decision.retry_after_s,
                limit="credentials",
            )


def count_failure(request: Request, username: str | None, clock: Clock) -> None:
    settings = get_settings()
    if settings.credential_failures_limit <= 0:
        return
    window_ms = int(settings.credential_failures_window.total_seconds() * 1000)
    now_ms = int(clock.now().timestamp() * 1000)
    backend = limiter_of(request.app)
    for key in _keys(request, username):
        backend.hit_window(key, now_ms, settings.credential_failures_limit, window_ms)
