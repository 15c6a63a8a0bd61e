"""§8.3 hourly flow control, tier 0: the worked cases (a), (b), (c), exactly, driven by the clock.

Every test runs on both limiter backends (memory, Redis) and both databases."""

from __future__ import annotations

from datetime import timedelta

from tests.factories import make_account
from tests.limits.support import User, bucket, burst, call

MIN = timedelta(minutes=1)


def tier0(client):
    account = make_account(tier=0)
    return account.username, User(client, account.username)


def test_case_a_burst_of_75(tiered, clock):
    name, token = tier0(tiered)
    assert burst(tiered, token, 75) == [200] * 60 + [429] * 15
    # "after 15 minutes the counter is 60 and calls are still rejected"
    clock.advance(15 * MIN)
    assert bucket(tiered, name).counter == 60
    assert bucket(tiered, name).remaining == 0
    # "after 30 minutes it is 45 and 15 slots are free"
    clock.advance(15 * MIN)
    assert bucket(tiered, name).counter == 45
    assert burst(tiered, token, 16) == [200] * 15 + [429]
    # "after 1 hour of inactivity it is 0"
    clock.advance(60 * MIN)
    assert bucket(tiered, name).counter == 0
    assert burst(tiered, token, 61) == [200] * 60 + [429]


def test_case_a_a_call_after_15_minutes_is_rejected_and_counted(tiered, clock):
    name, token = tier0(tiered)
    burst(tiered, token, 75)
    clock.advance(15 * MIN)
    response = call(tiered, token)
    assert response.status_code == 429
    # the rejected call counted too: 61 now, so two minutes until one slot is free
    assert bucket(tiered, name).counter == 61
    assert response.headers["Retry-After"] == "120"
    clock.advance(2 * MIN - timedelta(seconds=1))
    assert call(tiered, token).status_code == 429
    clock.advance(2 * MIN)
    assert call(tiered, token).status_code == 200


def test_case_b_burst_of_180_needs_one_silent_hour(tiered, clock):
    name, token = tier0(tiered)
    statuses = burst(tiered, token, 180)
    assert statuses.count(200) == 60 and statuses[:60] == [200] * 60 and statuses.count(429) == 120
    last = call(tiered, token)  # the 181st, rejected like the others
    assert last.status_code == 429
    assert last.headers["Retry-After"] == "3600"  # leaking alone would take 122 minutes: the idle reset wins
    clock.advance(60 * MIN - timedelta(milliseconds=1))
    assert bucket(tiered, name).counter > 60  # still rejecting, one millisecond before the hour
    clock.advance(timedelta(milliseconds=1))
    assert bucket(tiered, name).counter == 0
    assert burst(tiered, token, 61) == [200] * 60 + [429]  # the clean block of 60


def test_case_b_a_call_in_the_hour_postpones_the_clean_block(tiered, clock):
    name, token = tier0(tiered)
    burst(tiered, token, 180)
    clock.advance(30 * MIN)
    assert call(tiered, token).status_code == 429  # 151 now, and the hour starts again
    clock.advance(30 * MIN)
    assert bucket(tiered, name).counter == 121
    assert call(tiered, token).status_code == 429
    clock.advance(60 * MIN)
    assert burst(tiered, token, 61) == [200] * 60 + [429]


def test_case_c_each_request_restarts_the_hour(tiered, clock):
    name, token = tier0(tiered)
    burst(tiered, token, 180)
    # one request in every hour keeps arriving: each is rejected, counted, and restarts the timer
    clock.advance(59 * MIN)
    assert call(tiered, token).status_code == 429  # 180 - 59 + 1 = 122
    clock.advance(MIN)
    assert bucket(tiered, name).counter == 121  # one hour after the burst: NOT cleared (compare case b)
    clock.advance(58 * MIN)
    assert call(tiered, token).status_code == 429  # 122 - 59 = 63, rejected: 64
    clock.advance(60 * MIN - timedelta(seconds=1))
    before = bucket(tiered, name)
    assert before.remaining < 60  # one second short of a silent hour: the full limit is not back
    clock.advance(timedelta(seconds=1))
    after = bucket(tiered, name)
    assert (after.counter, after.remaining) == (0, 60)  # one hour of complete inactivity since the last try
    assert burst(tiered, token, 61) == [200] * 60 + [429]


def test_headers_describe_the_tier_bucket(tiered, clock):
    name, token = tier0(tiered)
    first = call(tiered, token)
    assert first.headers["X-RateLimit-Limit"] == "60"
    assert first.headers["X-RateLimit-Remaining"] == "59"
    assert first.headers["X-RateLimit-Reset"] == "60"  # one call leaks in a minute (tier 0)
    burst(tiered, token, 59)
    refused = call(tiered, token)
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Reset"] == "3600"  # 61 calls to leak, the idle reset comes first
    assert refused.headers["Retry-After"] == "120"
    body = refused.json()
    assert body["errorCode"] == "0429"
    assert "tier 0 allows 60 requests per hour" in body["errorDescription"]
    assert name in body["errorDescription"] and "retry in 120 s" in body["errorDescription"]
    assert f"[request {refused.headers['x-request-id']}]" in body["errorDescription"]
