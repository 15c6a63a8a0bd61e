"""Injectable time. Domain code is handed a Clock and never reads the system time itself."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Aware UTC now."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)  # noqa: TID251 - the one place that reads the system clock


class ManualClock:
    """A clock that moves only when told to: tests, the SDI simulator's `advance`."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 15, 9, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        with self._lock:
            self._now += delta
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when


_current: Clock = SystemClock()


def current_clock() -> Clock:
    """The process-wide clock (jobs and the app read it; tests replace it with `use_clock`)."""
    return _current


def use_clock(clock: Clock) -> None:
    global _current
    _current = clock


def as_utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; we store UTC everywhere, so naive means UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
