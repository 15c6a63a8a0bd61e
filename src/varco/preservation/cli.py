"""`varco preservation ...`: check an account's package chain, seal what is pending now."""

from __future__ import annotations

from typing import Annotated

import typer

preservation_app = typer.Typer(no_args_is_help=True, help="Preservation packages (PDD)")


@preservation_app.command("verify")
def verify(username: Annotated[str, typer.Argument(help="The account whose package chain to check")]) -> None:
    """Check every package of an account: file digests against its index, and the SHA-256 chain."""
    from varco.accounts import service as accounts
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.preservation import service

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = accounts.get_by_username(session, username)
        count = len(service.chain_of(session, account.id))
        problems = service.verify_chain(session, account.id)
    for problem in problems:
        typer.echo(problem)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"{count} packages of {username}: chain intact")


@preservation_app.command("seal-pending")
def seal_pending() -> None:
    """Seal now the final invoices still without a package (the worker does it every minute)."""
    from varco.cli_support import prepare_database
    from varco.preservation.tasks import seal_unsealed

    prepare_database()
    typer.echo(f"sealed {len(seal_unsealed())} invoices")


# `varco pdd verify USERNAME` (issue 10): the same walk under the name the issue gives it.
pdd_app = typer.Typer(no_args_is_help=True, help="Preservation packages (PDD) of invoices and communications")
pdd_app.command("verify")(verify)
