"""The two limiter backends decide alike (same suite on process memory and on real Redis)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from varco.core.coroutines import run_sync
from varco.limits.decisions import HOUR_MS, MINUTE_MS, TierDecision

IDLE = HOUR_MS
T0 = 1_795_420_800_000  # 2026-11-23 08:00 UTC in ms


def test_tier_bucket_counts_leaks_and_resets(backend):
    decisions = [backend.hit_tier("t", T0, 60, IDLE) for _ in range(61)]
    assert [d.allowed for d in decisions] == [True] * 60 + [False]
    assert decisions[-1].level == 61 * HOUR_MS  # the rejected call counted
    assert backend.hit_tier("t", T0 + 2 * MINUTE_MS - 1, 60, IDLE).allowed is False  # 59.00002 + 1 > 60
    assert backend.hit_tier("t", T0 + 4 * MINUTE_MS, 60, IDLE).allowed is True  # 60.00002 - 2.00002 + 1


def test_tier_bucket_idle_reset_is_one_hour_after_the_last_call(backend):
    for _ in range(180):
        backend.hit_tier("i", T0, 60, IDLE)
    assert backend.peek_tier("i", T0 + IDLE - 1, 60, IDLE).level == 120 * HOUR_MS + 60  # leaked 59.99998
    assert backend.peek_tier("i", T0 + IDLE, 60, IDLE).level == 0


def test_peek_does_not_count(backend):
    backend.hit_tier("p", T0, 60, IDLE)
    for _ in range(5):
        assert backend.peek_tier("p", T0, 60, IDLE).level == HOUR_MS
    assert backend.peek_tier("unknown", T0, 60, IDLE) == TierDecision(True, 60, 0, IDLE)


def test_a_clock_behind_the_last_call_leaks_nothing(backend):
    backend.hit_tier("skew", T0, 60, IDLE)
    behind = backend.hit_tier("skew", T0 - 5_000, 60, IDLE)  # another process, its clock 5 s behind
    assert behind.level == 2 * HOUR_MS
    assert backend.hit_tier("skew", T0 + MINUTE_MS, 60, IDLE).level == 2 * HOUR_MS  # leak from T0


def test_keys_are_independent(backend):
    for _ in range(60):
        backend.hit_tier("a", T0, 60, IDLE)
    assert backend.hit_tier("a", T0, 60, IDLE).allowed is False
    assert backend.hit_tier("b", T0, 60, IDLE).allowed is True
    assert backend.hit_window("w1", T0, 1).allowed is True
    assert backend.hit_window("w2", T0, 1).allowed is True


def test_window_is_exact_and_slides(backend):
    assert [backend.hit_window("w", T0 + i, 3).allowed for i in range(4)] == [True, True, True, False]
    refused = backend.hit_window("w", T0 + 10_000, 3)
    assert (refused.allowed, refused.count, refused.retry_after_ms) == (False, 3, 50_000)
    assert refused.retry_after_s == 50
    assert backend.hit_window("w", T0 + MINUTE_MS - 1, 3).allowed is False
    assert backend.hit_window("w", T0 + MINUTE_MS, 3).allowed is True  # the call at T0 left the window
    again = backend.hit_window("w", T0 + MINUTE_MS, 3)  # T0+1, T0+2, T0+60000 inside
    assert (again.allowed, again.retry_after_ms, again.retry_after_s) == (False, 1, 1)
    assert backend.hit_window("w", T0 + MINUTE_MS + 1, 3).allowed is True


def test_a_window_can_be_looked_at_without_counting(backend):
    assert backend.peek_window("w:peek", 1000, 2, 60_000).count == 0
    backend.hit_window("w:peek", 1000, 2, 60_000)
    backend.hit_window("w:peek", 2000, 2, 60_000)
    for _ in range(3):
        full = backend.peek_window("w:peek", 3000, 2, 60_000)
        assert not full.allowed and full.count == 2 and full.retry_after_ms == 58_000
    assert backend.peek_window("w:peek", 61_001, 2, 60_000).allowed  # the first hit left the window


def test_async_window_shares_the_state(backend):
    async def twice() -> list[bool]:
        return [(await backend.ahit_window("aw", T0, 1)).allowed for _ in range(2)]

    assert run_sync(twice()) == [True, False]
    assert backend.hit_window("aw", T0 + 1, 1).allowed is False


def test_concurrent_hits_are_exact(backend):
    with ThreadPoolExecutor(max_workers=8) as pool:
        tier = list(pool.map(lambda _: backend.hit_tier("c", T0, 60, IDLE), range(200)))
        window = list(pool.map(lambda _: backend.hit_window("cw", T0, 12), range(100)))
    assert sum(d.allowed for d in tier) == 60
    assert sorted(d.remaining for d in tier if d.allowed) == list(range(60))
    assert sum(d.allowed for d in window) == 12


def test_a_flood_keeps_the_counter_exact(backend):
    backend.hit_tier("f", T0, 60, IDLE)
    for _ in range(2000):
        decision = backend.hit_tier("f", T0, 60, IDLE)
    assert decision.level == 2001 * HOUR_MS
    assert decision.retry_after_ms == IDLE


def test_redis_url_selects_the_shared_backend():
    from varco.limits.backends import MemoryBackend
    from varco.limits.redis_backend import RedisBackend, build_backend
    from varco.settings import Settings

    assert isinstance(build_backend(Settings(redis_url=None)), MemoryBackend)
    shared = build_backend(Settings(redis_url="redis://127.0.0.1:6379/0", limits_key_prefix="p:"))
    assert isinstance(shared, RedisBackend) and shared.prefix == "p:"
    shared.close()
