"""The limits of an authenticated call, run by the `Caller` dependency once the account is known."""

from __future__ import annotations

import logging
import re

from fastapi import Request

from varco.accounts.models import Account
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.limits import annual
from varco.limits.attribution import Payer, cache_of
from varco.limits.backends import LimiterUnavailable
from varco.limits.decisions import TierDecision
from varco.limits.errors import limiter_unavailable, rate_limited
from varco.limits.middleware import STATE_HEADERS, limiter_of
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.limits")

# §8.4 "further transmission attempts": invoice uploads and financial communications (v2; the v1
# communication paths authenticate in the body and call `annual.refuse_if_locked` themselves).
TRANSMISSIONS = re.compile(r"/services/invoice/upload(Signed)?/?|/api/v2/comfin/?")


def guard(request: Request, session: UnitOfWork, account: Account, clock: Clock) -> None:
    """§8.3: count the call in the paying account's hourly bucket (429 when full); §8.4: refuse a
    transmission while the paying account is in annual lock."""
    settings = get_settings()
    path: str = request.scope["path"]
    if settings.tier_limits_enabled:
        payer = cache_of(request.app).payer(session, account, clock.now(), settings.limits_attribution_ttl)
        decision = hit_tier(request, payer, settings, clock)
        if not decision.allowed:
            raise rate_limited(
                f"Hourly limit reached: tier {payer.tier} allows {decision.limit} requests per hour "
                f"for account {payer.username} (§8.3)",
                -(-decision.retry_after_ms // 1000),
                limit="tier",
            )
    if request.scope["method"] == "POST" and TRANSMISSIONS.fullmatch(path):
        annual.refuse_transmission_if_locked(session, account, settings, clock)  # afresh: it is money


def _bucket(tier: int, settings: Settings, clock: Clock) -> tuple[int, int, int]:
    """(now in ms, calls per hour of the tier, idle reset in ms) for a bucket decision."""
    limit = settings.tiers.get(tier, settings.tiers[settings.default_tier])[0]
    idle_ms = int(settings.tier_idle_reset.total_seconds() * 1000)
    return int(clock.now().timestamp() * 1000), limit, idle_ms


def hit_tier(request: Request, payer: Payer, settings: Settings, clock: Clock) -> TierDecision:
    try:
        decision = limiter_of(request.app).hit_tier(f"tier:{payer.id}", *_bucket(payer.tier, settings, clock))
    except LimiterUnavailable as exc:
        log.error("tier limit of %s not decided: %s", payer.username, exc)
        raise limiter_unavailable() from exc
    request.scope.setdefault("state", {})[STATE_HEADERS] = decision.headers()
    return decision


def tier_status(app: object, payer: Account, settings: Settings, clock: Clock) -> TierDecision:
    """The paying account's bucket now, without counting a call (tests, operators)."""
    return limiter_of(app).peek_tier(f"tier:{payer.id}", *_bucket(payer.tier, settings, clock))
