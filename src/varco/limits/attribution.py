"""Who pays for an account's calls (§8.5), remembered for a few seconds per process.

Resolving delegations costs a query on every authenticated call, several times what the bucket
decision costs; delegations and tiers change rarely, by an operator. So the hourly bucket reuses
an answer for `limits_attribution_ttl` (10 s): after a delegation or tier change, calls may be
counted against the previous paying account or limit for up to that long. The annual lock, which
decides money, always resolves afresh.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core.uow import UnitOfWork

_MAX_ENTRIES = 50_000  # forget everything past this: bounded memory, one query per account to refill


@dataclass(frozen=True)
class Payer:
    id: int
    username: str
    tier: int


class PayerCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[datetime, Payer]] = {}

    def payer(self, session: UnitOfWork, account: Account, now: datetime, ttl: timedelta) -> Payer:
        with self._lock:
            entry = self._entries.get(account.id)
        if entry is not None and now < entry[0] and entry[0] - ttl <= now:
            return entry[1]
        found = accounts.paying_account(session, account)
        payer = Payer(found.id, found.username, found.tier)
        with self._lock:
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.clear()
            self._entries[account.id] = (now + ttl, payer)
        return payer


def cache_of(app: object) -> PayerCache:
    """One cache per application (a test's app starts empty)."""
    state = app.state  # type: ignore[attr-defined]
    cache = getattr(state, "varco_payers", None)
    if cache is None:
        cache = state.varco_payers = PayerCache()
    return cache
