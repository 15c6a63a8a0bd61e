"""`varco delegations`: create, change and list delegations (the operator's side of §3.3).

Helpers of `varco.cli` are imported inside the commands: `varco.cli` imports this module.
"""

from __future__ import annotations

from typing import Annotated

import typer

from varco.core.numbers import is_id

delegations_app = typer.Typer(no_args_is_help=True, help="Delegations between accounts (multisellers)")

CREATE_STATUSES = ("ACTIVE", "PENDING")


def _status(value: str, allowed: tuple[str, ...] | None = None):  # DelegationStatus
    """Parse a status; call inside `cli_errors()` (a wrong value is a one-line error, exit 2)."""
    from varco.accounts.delegations import parse_status
    from varco.cli_support import fail

    status = parse_status(value)
    if allowed is not None and status not in allowed:
        fail(f"invalid --status {value!r}: a new delegation is {' or '.join(allowed)}")
    return status


def _id(value: str) -> int:
    from varco.cli_support import fail

    if not is_id(value.strip()) or int(value) == 0:
        fail(f"invalid delegation id {value!r}: a positive number (see `varco delegations list`)")
    return int(value)


@delegations_app.command("create")
def create(
    delegator: Annotated[str, typer.Argument(help="Username of the taxpayer who delegates")],
    delegate: Annotated[str, typer.Argument(help="Username of the Premium user who transmits for it")],
    status: Annotated[str, typer.Option(help="ACTIVE or PENDING (awaiting approval)")] = "ACTIVE",
) -> None:
    """Create a delegation: DELEGATOR lets the Premium user DELEGATE transmit for it."""
    from varco.accounts import service
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work

    with cli_errors():
        wanted = _status(status, CREATE_STATUSES)
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        giver = service.get_by_username(session, delegator)
        taker = service.get_by_username(session, delegate)
        made = service.create_delegation(session, giver, taker, wanted, current_clock(), actor="cli")
        typer.echo(f"delegation {made.id}: {delegator} -> {delegate} {made.status}")


@delegations_app.command("set-status")
def set_status(
    delegation_id: Annotated[str, typer.Argument(metavar="ID", help="Delegation id")],
    status: Annotated[str, typer.Argument(help="ACTIVE, SUSPEND, INACTIVE or PENDING")],
) -> None:
    """Move a delegation to STATUS (approve, suspend, resume, revoke, request again)."""
    from varco.accounts import delegations
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work

    number = _id(delegation_id)
    with cli_errors():
        wanted = _status(status)
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        delegations.set_status(session, number, wanted, current_clock(), actor="cli")
        change = delegations.history(session, number)[-1]
        typer.echo(f"delegation {number}: {change.from_status} -> {change.to_status} ({change.event})")


@delegations_app.command("list")
def list_(
    username: Annotated[
        str | None, typer.Argument(help="Only delegations given or received by this user")
    ] = None,
) -> None:
    """List delegations: id, delegator -> delegate, status, created, last change."""
    from varco.accounts import delegations, service
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = service.get_by_username(session, username) if username else None
        for d, delegator, delegate in delegations.listing(session, account):
            typer.echo(
                f"{d.id}\t{delegator} -> {delegate}\t{d.status}\t"
                f"created {d.created_at.isoformat(timespec='seconds')}\t"
                f"updated {d.updated_at.isoformat(timespec='seconds')}"
            )


@delegations_app.command("history")
def history(delegation_id: Annotated[str, typer.Argument(metavar="ID", help="Delegation id")]) -> None:
    """Show every status change of a delegation."""
    from varco.accounts import delegations
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work

    number = _id(delegation_id)
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        for c in delegations.history(session, number):
            typer.echo(
                f"{c.at.isoformat(timespec='seconds')}\t{c.event}\t{c.from_status or '-'} -> {c.to_status}"
                f"\t{c.actor or '-'}"
            )
