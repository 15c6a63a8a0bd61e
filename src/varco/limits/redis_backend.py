"""Limiter state in Redis: one Lua script per decision, so any number of API processes share
one bucket exactly (Redis runs each script atomically). The scripts mirror `decisions.py`."""

from __future__ import annotations

import asyncio
import itertools
import os
import weakref
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from varco.limits.backends import LimiterBackend, LimiterUnavailable, MemoryBackend
from varco.limits.decisions import HOUR_MS, MAX_LEVEL, MINUTE_MS, TierDecision, WindowDecision, leaked
from varco.settings import Settings

# KEYS[1] bucket; ARGV now_ms, limit (calls/hour), idle_ms, call (HOUR_MS), max level.
# Returns {allowed, level}. Same steps as decisions.tier_step; integers only, all below 2^53, stored
# with %.0f (Lua's default number format keeps 14 digits only).
TIER_LUA = """
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local idle = tonumber(ARGV[3])
local call = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'l', 't')
local level = tonumber(state[1]) or 0
local last = tonumber(state[2]) or now
if now - last >= idle then
  level = 0
else
  level = math.max(0, level - math.max(0, now - last) * limit)
end
local allowed = 0
if level + call <= limit * call then allowed = 1 end
level = math.min(level + call, tonumber(ARGV[5]))
last = math.max(now, last)
redis.call('HSET', KEYS[1], 'l', string.format('%.0f', level), 't', string.format('%.0f', last))
redis.call('PEXPIRE', KEYS[1], idle)
return {allowed, level}
"""

# KEYS[1] sorted set of accepted call times; ARGV now_ms, limit, window_ms, unique member.
# Returns {allowed, count, retry_after_ms}.
WINDOW_LUA = """
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, count + 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, count, tonumber(oldest[2]) + window - now}
"""

# The same window, looked at without counting: {count, retry_after_ms when full}.
PEEK_LUA = """
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  return {count, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {count, tonumber(oldest[2]) + window - now}
"""

_members = itertools.count()


def _member(now_ms: int) -> str:
    # Unique per call across processes: the window set must not merge two calls in one millisecond.
    return f"{now_ms}:{os.getpid()}:{next(_members)}"


class RedisBackend:
    def __init__(self, url: str, prefix: str, *, timeout: float = 0.5) -> None:
        self.url, self.prefix, self.timeout = url, prefix, timeout
        self.client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._tier = self.client.register_script(TIER_LUA)
        self._window = self.client.register_script(WINDOW_LUA)
        self._peek = self.client.register_script(PEEK_LUA)
        # redis.asyncio clients belong to one event loop (uvicorn has one; each TestClient its own).
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def hit_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        try:
            allowed, level = self._tier(
                keys=[self.prefix + key], args=[now_ms, limit, idle_ms, HOUR_MS, MAX_LEVEL]
            )
        except RedisError as exc:
            raise LimiterUnavailable(f"limiter state unreachable: {exc}") from exc
        return TierDecision(bool(allowed), limit, int(level), idle_ms)

    def peek_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        try:
            level, last = self.client.hmget(self.prefix + key, ["l", "t"])
        except RedisError as exc:
            raise LimiterUnavailable(f"limiter state unreachable: {exc}") from exc
        current = leaked(int(level or 0), int(last or now_ms), now_ms, limit, idle_ms)
        return TierDecision(current + HOUR_MS <= limit * HOUR_MS, limit, current, idle_ms)

    def hit_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        try:
            result = self._window(keys=[self.prefix + key], args=[now_ms, limit, window_ms, _member(now_ms)])
        except RedisError as exc:
            raise LimiterUnavailable(f"limiter state unreachable: {exc}") from exc
        return WindowDecision(bool(result[0]), limit, int(result[1]), int(result[2]))

    def peek_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        try:
            count, retry = self._peek(keys=[self.prefix + key], args=[now_ms, limit, window_ms])
        except RedisError as exc:
            raise LimiterUnavailable(f"limiter state unreachable: {exc}") from exc
        return WindowDecision(int(count) < limit, limit, int(count), int(retry))

    async def ahit_window(
        self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS
    ) -> WindowDecision:
        script = self._async_script()
        try:
            result = await script(keys=[self.prefix + key], args=[now_ms, limit, window_ms, _member(now_ms)])
        except RedisError as exc:
            raise LimiterUnavailable(f"limiter state unreachable: {exc}") from exc
        return WindowDecision(bool(result[0]), limit, int(result[1]), int(result[2]))

    def _async_script(self) -> Any:
        loop = asyncio.get_running_loop()
        script = self._async.get(loop)
        if script is None:
            client = aioredis.Redis.from_url(
                self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
            )
            script = self._async[loop] = client.register_script(WINDOW_LUA)
        return script

    def close(self) -> None:
        self.client.close()


def build_backend(settings: Settings) -> LimiterBackend:
    """Redis when VARCO_REDIS_URL is set (shared by every API process), else process memory."""
    if settings.redis_url:
        return RedisBackend(
            settings.redis_url, settings.limits_key_prefix, timeout=settings.limits_redis_timeout_seconds
        )
    return MemoryBackend()
