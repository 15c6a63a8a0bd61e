"""Simulated time: the injected clock plus an offset stored in the database.

`varco sdi advance 15d` moves only the simulator (its deadlines and the dates in its messages),
in every process at once, without touching varco's own clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from sqlalchemy import select

from varco.core.clock import Clock
from varco.core.dialects import dialect_of
from varco.core.errors import BadRequest
from varco.core.uow import Fact, UnitOfWork
from varco.sdi.models import SimClock

_PART = re.compile(r"([0-9]{1,9})([dhms])")  # ASCII digits; a bound no timedelta overflows
_SECONDS = re.compile(r"[0-9]{1,9}")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_OFFSET: Fact[timedelta | None] = Fact("simulated clock offset", lambda: None)  # read once
_OFFSET_SECONDS = select(SimClock.__table__.c.offset_seconds).where(SimClock.__table__.c.id == 1)


class InvalidDuration(BadRequest):
    """Invalid duration."""


def parse_duration(text: str) -> timedelta:
    """`15d`, `2h`, `30s`, `10m`, combined (`1d12h`), or plain seconds (`90`)."""
    value = text.strip().lower()
    if _SECONDS.fullmatch(value):
        return timedelta(seconds=int(value))
    if not value or _PART.sub("", value):
        raise InvalidDuration(f"invalid duration {text!r}: use e.g. 15d, 2h, 10m, 30s or 1d12h")
    delta = timedelta()
    try:
        for amount, unit in _PART.findall(value):
            delta += timedelta(**{_UNITS[unit]: int(amount)})
    except OverflowError:
        raise InvalidDuration(f"duration {text!r} is too long") from None
    return delta


def format_duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts) or "0s"


def offset(session: UnitOfWork) -> timedelta:
    known = session.fact(_OFFSET)
    if known is None:
        known = session.remember(_OFFSET, timedelta(seconds=session.scalar(_OFFSET_SECONDS) or 0))
    return known


def sim_now(session: UnitOfWork, clock: Clock) -> datetime:
    """The simulator's now."""
    return clock.now() + offset(session)


def advance(session: UnitOfWork, delta: timedelta, clock: Clock) -> datetime:
    """Move simulated time forward; returns the new simulated now."""
    if delta < timedelta():
        raise InvalidDuration("the simulated clock only moves forward")
    # Create the single row without racing another `advance`, then lock it.
    insert = dialect_of(session).insert
    session.execute(insert(SimClock).values(id=1, offset_seconds=0).on_conflict_do_nothing())
    row = session.get(SimClock, 1, with_for_update=True, populate_existing=True)
    assert row is not None
    row.offset_seconds += int(delta.total_seconds())
    session.flush()
    session.remember(_OFFSET, timedelta(seconds=row.offset_seconds))
    return clock.now() + timedelta(seconds=row.offset_seconds)


def reset(session: UnitOfWork) -> None:
    """Back to varco's clock (tests)."""
    row = session.get(SimClock, 1, with_for_update=True)
    if row is not None:
        row.offset_seconds = 0
    session.remember(_OFFSET, timedelta())
