"""Date-time query values as real clients send them, and dates as they expect them back (decisions.md)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import unquote
from zoneinfo import ZoneInfo

ROME = ZoneInfo("Europe/Rome")
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
FORMS = (
    "2026-07-24, 2026-07-24T10:00:00Z, 2026-07-24T10:00:00+01:00, 2026-07-24T10:00:00.0000000 "
    "(no zone: Italian time)"
)

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<hms>\d{2}:\d{2}(?::\d{2})?)(?:[.,](?P<frac>\d{1,9}))?"
    r"\s*(?P<zone>Z|z|[+\- ]\d{2}(?::?\d{2})?)?$"
)


class DateParseError(ValueError):
    """A value that no accepted form matches."""


def parse_instant(raw: str, *, end_of_day: bool = False) -> datetime:
    """An aware UTC datetime from any accepted form; a date alone is the day's start (or its end)."""
    text = raw.strip()
    for _ in range(3):  # percent-encoded colons, sometimes encoded twice
        if "%" not in text:
            break
        text = unquote(text)
    if _DATE.match(text):
        day = _date(text, raw)
        if end_of_day:
            return _localize(datetime.combine(day, time.max))
        return _localize(datetime.combine(day, time.min))
    match = _DATETIME.match(text)
    if match is None:
        raise DateParseError(f"{raw!r} is not a date or date-time; accepted forms: {FORMS}")
    day = _date(match["date"], raw)
    hms = match["hms"] + (":00" if match["hms"].count(":") == 1 else "")
    try:
        clock_time = time.fromisoformat(hms)
    except ValueError:
        raise DateParseError(f"{raw!r} has an impossible time of day") from None
    micro = int((match["frac"] or "0")[:6].ljust(6, "0"))
    naive = datetime.combine(day, clock_time.replace(microsecond=micro))
    zone = match["zone"]
    if zone is None:
        return _localize(naive)
    if zone in ("Z", "z"):
        return _clamp(naive, timedelta())
    # An unencoded "+" in a query string arrives as a space.
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    if offset >= timedelta(hours=24):
        raise DateParseError(f"{raw!r} has an impossible zone offset")
    return _clamp(naive, sign * offset)


def _date(text: str, raw: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise DateParseError(f"{raw!r} is not a real calendar date") from None


def _localize(naive: datetime) -> datetime:
    """No zone given: Italian local time (the service's users are Italian)."""
    if naive.year <= 1:  # .NET DateTime.MinValue ("0001-01-01T00:00:00.0000000"): no lower bound
        return EARLIEST
    if naive.year >= 9999:
        return LATEST
    return naive.replace(tzinfo=ROME).astimezone(UTC)


def _clamp(naive: datetime, offset: timedelta) -> datetime:
    try:
        return (naive - offset).replace(tzinfo=UTC)
    except OverflowError:
        return EARLIEST if naive.year <= 1 else LATEST


def format_instant(value: datetime | None) -> str | None:
    """ISO 8601 with milliseconds and the Italian offset: 2026-11-23T09:00:00.000+01:00."""
    if value is None:
        return None
    local = value.astimezone(ROME)
    return local.isoformat(timespec="milliseconds")


def format_day(value: date | None) -> str | None:
    """An invoice date as the start of that day in Italy: 2026-02-02T00:00:00.000+01:00."""
    if value is None:
        return None
    return datetime.combine(value, time.min, tzinfo=ROME).isoformat(timespec="milliseconds")
