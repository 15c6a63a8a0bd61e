"""Simulated time: the injected clock plus an offset stored in the database.

`varco sdi advance 15d` moves only the simulator (its deadlines and the dates in its messages),
in every process at once, without touching varco's own clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from varco.core.clock import Clock
from varco.core.db import conflict_insert, transaction_info
from varco.core.errors import BadRequest
from varco.sdi.models import SimClock

_PART = re.compile(r"([0-9]{1,9})([dhms])")  # ASCII digits; a bound no timedelta overflows
_SECONDS = re.compile(r"[0-9]{1,9}")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_OFFSET = "sim_clock_offset"  # transaction_info: read once per transaction
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


def offset(session: Session) -> timedelta:
    cached = transaction_info(session)
    if _OFFSET not in cached:
        cached[_OFFSET] = timedelta(seconds=session.scalar(_OFFSET_SECONDS) or 0)
    return cached[_OFFSET]


def sim_now(session: Session, clock: Clock) -> datetime:
    """The simulator's now."""
    return clock.now() + offset(session)


def advance(session: Session, delta: timedelta, clock: Clock) -> datetime:
    """Move simulated time forward; returns the new simulated now."""
    if delta < timedelta():
        raise InvalidDuration("the simulated clock only moves forward")
    # Create the single row without racing another `advance`, then lock it.
    insert = conflict_insert(session)
    session.execute(insert(SimClock).values(id=1, offset_seconds=0).on_conflict_do_nothing())
    row = session.get(SimClock, 1, with_for_update=True, populate_existing=True)
    assert row is not None
    row.offset_seconds += int(delta.total_seconds())
    session.flush()
    transaction_info(session)[_OFFSET] = timedelta(seconds=row.offset_seconds)
    return clock.now() + timedelta(seconds=row.offset_seconds)


def reset(session: Session) -> None:
    """Back to varco's clock (tests)."""
    row = session.get(SimClock, 1, with_for_update=True)
    if row is not None:
        row.offset_seconds = 0
    transaction_info(session)[_OFFSET] = timedelta()
