"""§8.3/§8.5: what the hourly bucket counts and against whom, on both backends and databases."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.factories import bearer, make_account, make_basic
from tests.limits.support import User, bucket, burst, call
from varco.accounts import service as accounts
from varco.accounts.models import DelegationStatus
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.settings import get_settings


def test_other_tiers_leak_limit_over_60_per_minute(tiered, clock, configure):
    tiers = {**{t: list(v) for t, v in get_settings().tiers.items()}, 1: [120, 100_000]}
    configure(tiers=json.dumps(tiers))  # tier 1 at 120 per hour keeps the test short: 2 per minute
    user = User(tiered, make_account(tier=1).username)
    assert burst(tiered, user, 121) == [200] * 120 + [429]
    refused = call(tiered, user)
    assert refused.headers["X-RateLimit-Limit"] == "120"
    assert refused.headers["Retry-After"] == "90"  # 122 counted: three calls must leak, 30 s each
    clock.advance(timedelta(seconds=90))
    assert burst(tiered, user, 2) == [200, 429]  # 119 + 1, then 121
    clock.advance(timedelta(seconds=300))  # 121 - 10 = 111: nine slots
    assert burst(tiered, user, 10) == [200] * 9 + [429]


def test_rejected_calls_of_every_kind_count_but_unauthenticated_ones_do_not(tiered, clock):
    user = User(tiered, make_account(tier=0).username)
    headers = bearer(user.token)
    for _ in range(5):  # refused by the endpoint (no dataFile): still an authenticated call
        tiered.post("/services/invoice/upload", json={}, headers=headers)
    for _ in range(5):  # no valid token: nobody to count against
        assert tiered.get("/auth/userInfo", headers=bearer("not-a-token")).status_code == 401
    assert bucket(tiered, user.username).counter == 5
    assert burst(tiered, user, 56) == [200] * 55 + [429]


def test_a_basic_users_calls_hit_its_premiums_bucket(tiered, clock):
    premium = make_account(tier=0)
    basic = make_basic(delegate_to=premium, tier=6)  # the basic user's own tier does not matter
    p, b = User(tiered, premium.username), User(tiered, basic.username)
    assert burst(tiered, p, 30) == [200] * 30
    assert burst(tiered, b, 30) == [200] * 30
    refused = call(tiered, b)
    assert refused.status_code == 429
    assert premium.username in refused.json()["errorDescription"]
    assert refused.headers["X-RateLimit-Limit"] == "60"
    assert call(tiered, p).status_code == 429
    assert bucket(tiered, basic.username).counter == bucket(tiered, premium.username).counter == 62


def test_premium_delegating_premium_counts_against_the_final_premium(tiered, clock):
    final = make_account(tier=0)
    first = make_account(tier=6)
    with unit_of_work() as session:
        accounts.create_delegation(
            session,
            accounts.get(session, first.id),
            accounts.get(session, final.id),
            DelegationStatus.ACTIVE,
            current_clock(),
        )
    assert burst(tiered, User(tiered, first.username), 61) == [200] * 60 + [429]
    assert call(tiered, User(tiered, final.username)).status_code == 429


def test_each_paying_account_has_its_own_bucket(tiered, clock):
    one, two = User(tiered, make_account(tier=0).username), User(tiered, make_account(tier=0).username)
    assert burst(tiered, one, 61) == [200] * 60 + [429]
    assert burst(tiered, two, 60) == [200] * 60


def test_a_new_tier_applies_to_the_same_counter_within_the_attribution_ttl(tiered, clock):
    account = make_account(tier=0)
    user = User(tiered, account.username)
    assert burst(tiered, user, 61) == [200] * 60 + [429]
    with unit_of_work() as session:
        accounts.get(session, account.id).tier = 1
    assert call(tiered, user).status_code == 429  # the process remembers the payer for 10 s
    clock.advance(timedelta(seconds=10))  # VARCO_LIMITS_ATTRIBUTION_TTL; tier 1 leaks 10/min: 62 - 1.67
    response = call(tiered, user)
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Limit"] == "600"
    assert response.headers["X-RateLimit-Remaining"] == "538"  # 600 - 61.33


def test_a_new_delegation_moves_the_calls_within_the_attribution_ttl(tiered, clock):
    premium, other = make_account(tier=0), make_account(tier=0)
    user = User(tiered, other.username)
    call(tiered, user)
    with unit_of_work() as session:
        accounts.create_delegation(
            session,
            accounts.get(session, other.id),
            accounts.get(session, premium.id),
            DelegationStatus.ACTIVE,
            current_clock(),
        )
    call(tiered, user)
    clock.advance(timedelta(seconds=10))
    call(tiered, user)
    assert bucket(tiered, premium.username).counter == 1  # only the call after the ttl moved over


def test_switched_off_no_429_and_no_headers(app, backend, configure, clock):
    from fastapi.testclient import TestClient

    from varco.limits.middleware import use_limiter

    configure(ip_limits_enabled="false", tier_limits_enabled="false")
    use_limiter(app, backend)
    with TestClient(app) as client:
        user = User(client, make_account(tier=0).username)
        assert burst(client, user, 70) == [200] * 70
        assert "X-RateLimit-Limit" not in call(client, user).headers
