"""Tolerant date-time query values (decisions.md "Hosts and conventions") and the returned format."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from varco.search.dates import EARLIEST, DateParseError, format_day, format_instant, parse_instant


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-07-24", datetime(2026, 7, 23, 22, 0, tzinfo=UTC)),  # Italian midnight (summer, +02:00)
        ("2026-01-24", datetime(2026, 1, 23, 23, 0, tzinfo=UTC)),  # winter, +01:00
        ("2026-07-24T10:00:00Z", datetime(2026, 7, 24, 10, 0, tzinfo=UTC)),
        ("2026-07-24T10:00:00.123Z", datetime(2026, 7, 24, 10, 0, 0, 123000, tzinfo=UTC)),
        ("2026-07-24T10:00:00+02:00", datetime(2026, 7, 24, 8, 0, tzinfo=UTC)),
        ("2026-07-24T10:00:00-0130", datetime(2026, 7, 24, 11, 30, tzinfo=UTC)),
        ("2026-07-24T10:00:00 02:00", datetime(2026, 7, 24, 8, 0, tzinfo=UTC)),  # "+" decoded as a space
        ("2026-07-24T10:00:00.1234567", datetime(2026, 7, 24, 8, 0, 0, 123456, tzinfo=UTC)),  # no zone
        ("2026-07-24T10%3A00%3A00Z", datetime(2026, 7, 24, 10, 0, tzinfo=UTC)),
        ("2026-07-24T10%253A00%253A00Z", datetime(2026, 7, 24, 10, 0, tzinfo=UTC)),  # encoded twice
        ("2026-07-24 10:00", datetime(2026, 7, 24, 8, 0, tzinfo=UTC)),
        ("0001-01-01T00:00:00.0000000", EARLIEST),  # .NET DateTime.MinValue: no lower bound
        ("  2026-07-24T10:00:00Z ", datetime(2026, 7, 24, 10, 0, tzinfo=UTC)),
    ],
)
def test_accepted_forms(raw, expected):
    assert parse_instant(raw) == expected


def test_a_date_alone_as_an_end_bound_covers_the_whole_day():
    end = parse_instant("2026-07-24", end_of_day=True)
    assert end == datetime(2026, 7, 24, 21, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    "raw", ["yesterday", "2026-13-01", "2026-02-30", "24/07/2026", "2026-07-24T25:00:00"]
)
def test_refused_forms_say_what_is_accepted(raw):
    with pytest.raises(DateParseError) as error:
        parse_instant(raw)
    assert raw in str(error.value)


def test_returned_dates_have_milliseconds_and_the_italian_offset():
    assert format_instant(datetime(2026, 11, 23, 8, 0, tzinfo=UTC)) == "2026-11-23T09:00:00.000+01:00"
    assert format_instant(datetime(2026, 7, 1, 8, 0, 0, 5000, tzinfo=UTC)) == "2026-07-01T10:00:00.005+02:00"
    assert format_day(date(2026, 2, 2)) == "2026-02-02T00:00:00.000+01:00"
    assert format_day(date(2026, 8, 2)) == "2026-08-02T00:00:00.000+02:00"
    assert format_instant(None) is None
