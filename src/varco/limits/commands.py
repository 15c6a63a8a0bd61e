"""`varco users unlock USERNAME` and `varco users set-tier USERNAME TIER` (operators, §8.2/§8.4)."""

from __future__ import annotations

from typing import Annotated

import typer


def users_unlock(username: str) -> None:
    """Lift the annual lock (§8.4) of an account for this year."""
    from varco.accounts import service as accounts
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.limits import annual

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = accounts.get_by_username(session, username)
        lock = annual.unlock(session, account, audit.CLI, current_clock())
        text = (
            f"unlocked {username}: {lock.used} of {lock.annual_limit} transmissions in {lock.year}; "
            "transmissions are accepted again"
        )
    typer.echo(text)


def users_set_tier(
    username: str,
    tier: Annotated[int, typer.Argument(min=0, max=6, help="Tier 0-6 (§8.2)")],
) -> None:
    """Set the tier of an account (§8.2): its hourly and annual limits."""
    from varco.accounts import service as accounts
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database, settings_or_exit
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.limits import annual

    settings = settings_or_exit()
    prepare_database()
    clock = current_clock()
    with cli_errors(), unit_of_work() as session:
        account = accounts.get_by_username(session, username)
        annual.set_tier(session, account, tier, settings, clock, audit.CLI)
        year = clock.now().year
        hourly, yearly = settings.tiers[tier]
        used = annual.used_transmissions(session, account.id, year)
        locked = annual.active_lock(session, account.id, year) is not None
    typer.echo(
        f"{username}: tier {tier}, {hourly} requests per hour, {yearly} transmissions per year "
        f"({used} used in {year}){'; in annual lock' if locked else ''}"
    )
