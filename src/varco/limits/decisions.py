"""The arithmetic of the two limiters, shared by every backend (the Redis scripts mirror it).

Tier bucket (§8.3): the counter is kept in units of 1/HOUR_MS of a call, so that it leaks exactly
`limit` units per millisecond (`limit` calls per hour, i.e. limit/60 per minute; tier 0: 1 per
minute) with integer arithmetic only. Every call adds one call (HOUR_MS units), rejected ones
included; a call is accepted when the counter plus that call stays within the limit; one idle
hour (`idle_ms`) since the last call clears it.

Per-IP window (§8.1): an exact sliding window: at most `limit` accepted calls in any `window_ms`.
"""

from __future__ import annotations

from dataclasses import dataclass

HOUR_MS = 3_600_000  # one call, in counter units; the leak period of the tier table (§8.2 "per hour")
MINUTE_MS = 60_000  # §8.1 "per minute"


def leaked(level: int, last_ms: int, now_ms: int, limit: int, idle_ms: int) -> int:
    """The counter at `now_ms`: cleared after `idle_ms` without calls, else leaked since `last_ms`."""
    if now_ms - last_ms >= idle_ms:
        return 0
    return max(0, level - max(0, now_ms - last_ms) * limit)


# Every call counts, rejected ones too, so a flood keeps raising the counter (as §8.3 says); it is
# only bounded so that it stays an exact integer in a double (Redis Lua): ~1.1e9 calls.
MAX_LEVEL = 4 * 10**15


def tier_step(level: int, last_ms: int, now_ms: int, limit: int, idle_ms: int) -> tuple[bool, int, int]:
    """One call: (accepted, counter after it, last-call time to store)."""
    current = leaked(level, last_ms, now_ms, limit, idle_ms)
    allowed = current + HOUR_MS <= limit * HOUR_MS
    return allowed, min(current + HOUR_MS, MAX_LEVEL), max(now_ms, last_ms)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TierDecision:
    allowed: bool
    limit: int  # calls per hour
    level: int  # counter after this call, in 1/HOUR_MS of a call
    idle_ms: int

    @property
    def counter(self) -> float:
        """The counter in calls (fractional while it leaks)."""
        return self.level / HOUR_MS

    @property
    def remaining(self) -> int:
        """Calls that would be accepted now, back to back."""
        return max(0, (self.limit * HOUR_MS - self.level) // HOUR_MS)

    @property
    def retry_after_ms(self) -> int:
        """Wait before one more call is accepted: the leak, or the idle reset if that comes first."""
        excess = self.level + HOUR_MS - self.limit * HOUR_MS
        if excess <= 0:
            return 0
        return min(_ceil_div(excess, self.limit), self.idle_ms)

    @property
    def reset_ms(self) -> int:
        """Wait until the counter is back to 0 (the full limit available) if no call comes."""
        return min(_ceil_div(self.level, self.limit), self.idle_ms)

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(_ceil_div(self.reset_ms, 1000)),
        }


@dataclass(frozen=True)
class WindowDecision:
    allowed: bool
    limit: int
    count: int  # accepted calls in the window, this one included when accepted
    retry_after_ms: int  # 0 when accepted

    @property
    def retry_after_s(self) -> int:
        return max(1, _ceil_div(self.retry_after_ms, 1000))
