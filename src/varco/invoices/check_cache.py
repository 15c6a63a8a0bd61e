"""The file checks of one transaction: each file checked once per set of options.

The service's asynchronous stage and the SDI simulator, when it runs in the same transaction (a
follow-on of the stage, core/jobs.py), check the same bytes; the second check reads the first's
report instead of parsing and validating the file again. The stage's cache may come filled from
before its transaction: by a `varco worker`'s work ahead of the write lock (`checked_ahead`), or by
the upload, whose synchronous check a worker of the same process takes over (`checked_at_upload`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from varco import fatturapa
from varco.core.clock import Clock
from varco.core.uow import Fact, UnitOfWork

ROME = ZoneInfo("Europe/Rome")
_CHECKS: Fact[fatturapa.CheckCache] = Fact("file checks", fatturapa.CheckCache, per_job=True)


def checks(session: UnitOfWork) -> fatturapa.CheckCache:
    """This transaction's checks (the reports are shared: read them, never change them)."""
    return session.fact(_CHECKS)


def checked_ahead(cache: fatturapa.CheckCache) -> dict[Fact[Any], Any]:
    """The facts that give a job the checks run for it before its transaction (core/jobs.py)."""
    return {_CHECKS: cache}


def stage_options(skip_extra_schema: bool, content: bytes, clock: Clock) -> fatturapa.CheckOptions:
    """The options of the asynchronous stage's checks of a stored file (invoices/processing.py)."""
    return fatturapa.CheckOptions(
        skip_extra_schema=skip_extra_schema,
        received_date=receipt_day(clock.now()),
        max_bytes=len(content) + 1,
    )


# An upload's check of a larger file is not handed to its stage: its tree, some twelve times the
# file, would wait in memory (at most 64 of them, core/jobs.py), and typical invoices are 2-20 KB.
_HAND_OVER_BYTES = 32 * 1024


def checked_at_upload(
    data: bytes, report: fatturapa.Report, made_with: fatturapa.CheckOptions, clock: Clock
) -> dict[Fact[Any], Any]:
    """The upload's synchronous check of the file it stores, as the facts its asynchronous stage
    finds when a worker of the same process runs it (core/jobs.py, `enqueue`): the stage then
    checks it again only if the report does not hold for the stage's options."""
    if len(data) > _HAND_OVER_BYTES:
        return {}
    cache = fatturapa.CheckCache()
    options = stage_options(made_with.skip_extra_schema, data, clock)
    return checked_ahead(cache) if cache.adopt(data, report, made_with, options) else {}


def receipt_day(at: datetime) -> date:
    """The SDI's receipt day (00403 and the other dated rules): the day in Italy."""
    return at.astimezone(ROME).date()
