"""The file checks of one transaction: each file checked once per set of options.

The service's asynchronous stage and the SDI simulator, when it runs in the same transaction (a
follow-on of the stage, core/jobs.py), check the same bytes; the second check reads the first's
report instead of parsing and validating the file again.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from varco import fatturapa
from varco.core.uow import Fact, UnitOfWork

ROME = ZoneInfo("Europe/Rome")
_CHECKS: Fact[fatturapa.CheckCache] = Fact("file checks", fatturapa.CheckCache, per_job=True)


def checks(session: UnitOfWork) -> fatturapa.CheckCache:
    """This transaction's checks (the reports are shared: read them, never change them)."""
    return session.fact(_CHECKS)


def checked_ahead(cache: fatturapa.CheckCache) -> dict[Fact[Any], Any]:
    """The facts that give a job the checks run for it before its transaction (core/jobs.py)."""
    return {_CHECKS: cache}


def receipt_day(at: datetime) -> date:
    """The SDI's receipt day (00403 and the other dated rules): the day in Italy."""
    return at.astimezone(ROME).date()
