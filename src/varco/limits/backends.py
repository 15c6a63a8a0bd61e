"""Where limiter state lives: process memory (embedded, one process) or Redis (shared, exact).

Both give the same decisions (tests/limits run one suite on both). Time is passed in by the
caller (the injectable clock, in milliseconds), never read here.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Protocol

from varco.limits.decisions import HOUR_MS, MINUTE_MS, TierDecision, WindowDecision, leaked, tier_step

_SWEEP_EVERY = 4096  # operations between sweeps of idle keys (bounded memory under many IPs)


class LimiterUnavailable(Exception):
    """The limiter state cannot be reached (Redis down): limited requests are answered 503."""


class LimiterBackend(Protocol):
    def hit_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        """Count one call in the tier bucket `key` and decide it (atomic)."""
        ...

    def peek_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        """The bucket as it is now, without counting a call."""
        ...

    def hit_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        """Count one call in the sliding window `key` if it fits, and decide it (atomic)."""
        ...

    async def ahit_window(
        self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS
    ) -> WindowDecision:
        """`hit_window` for the ASGI middleware (does not block the event loop on I/O)."""
        ...

    def peek_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        """Would a call fit the window now? Counts nothing."""
        ...

    def close(self) -> None: ...


class MemoryBackend:
    """State in this process: exact for one process (embedded mode), not shared between processes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tiers: dict[str, tuple[int, int]] = {}  # key -> (level, last call ms)
        self._windows: dict[str, deque[int]] = {}  # key -> accepted call times, oldest first
        self._ops = 0
        self._idle_ms = 0  # longest idle reset / window seen: what the sweep may forget
        self._window_ms = 0

    def hit_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        with self._lock:
            level, last = self._tiers.get(key, (0, now_ms))
            allowed, level, last = tier_step(level, last, now_ms, limit, idle_ms)
            self._tiers[key] = (level, last)
            self._idle_ms = max(self._idle_ms, idle_ms)
            self._tick(now_ms)
        return TierDecision(allowed, limit, level, idle_ms)

    def peek_tier(self, key: str, now_ms: int, limit: int, idle_ms: int) -> TierDecision:
        with self._lock:
            level, last = self._tiers.get(key, (0, now_ms))
        level = leaked(level, last, now_ms, limit, idle_ms)
        return TierDecision(level + HOUR_MS <= limit * HOUR_MS, limit, level, idle_ms)

    def hit_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        with self._lock:
            self._window_ms = max(self._window_ms, window_ms)
            times = self._windows.setdefault(key, deque())
            while times and times[0] <= now_ms - window_ms:
                times.popleft()
            if len(times) < limit:
                times.append(now_ms)
                decision = WindowDecision(True, limit, len(times), 0)
            else:
                decision = WindowDecision(False, limit, len(times), times[0] + window_ms - now_ms)
            self._tick(now_ms)
        return decision

    async def ahit_window(
        self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS
    ) -> WindowDecision:
        return self.hit_window(key, now_ms, limit, window_ms)  # microseconds under a lock: no I/O

    def peek_window(self, key: str, now_ms: int, limit: int, window_ms: int = MINUTE_MS) -> WindowDecision:
        with self._lock:
            times = [t for t in self._windows.get(key, ()) if t > now_ms - window_ms]
        if len(times) < limit:
            return WindowDecision(True, limit, len(times), 0)
        return WindowDecision(False, limit, len(times), times[0] + window_ms - now_ms)

    def close(self) -> None:
        pass

    def _tick(self, now_ms: int) -> None:
        self._ops += 1
        if self._ops % _SWEEP_EVERY:
            return
        for key in [k for k, (_, last) in self._tiers.items() if now_ms - last >= self._idle_ms]:
            del self._tiers[key]
        for key in [k for k, t in self._windows.items() if not t or t[-1] <= now_ms - self._window_ms]:
            del self._windows[key]
