"""`varco demo invoice`: a fresh, valid invoice for a demo account, ready to upload (README)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from varco.invoices.examples import FORMATS, SELF_BILLING

demo_app = typer.Typer(no_args_is_help=True, help="Demo helpers: invoices that pass every check")


@demo_app.command("invoice")
def demo_invoice(
    account: Annotated[str, typer.Option(help="The sending account (its VAT number is the supplier's)")] = (
        "demo-premium"
    ),
    to: Annotated[
        str | None, typer.Option("--to", help="The customer's Italian VAT number (default: demo-basic's)")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="FPR12 (to a company), FPA12 (to a public office), FSM10 (simplified), "
            "TD17 (self-billing: the account is the customer of a foreign supplier)",
        ),
    ] = ("FPR12"),
    sign: Annotated[
        bool, typer.Option(help="Sign it CAdES-BES with the account's automatic-signature identity (.p7m)")
    ] = False,
    credential: Annotated[
        str, typer.Option(help="With --sign: the identity's credential")
    ] = "demo-credential",
    domain: Annotated[str, typer.Option(help="With --sign: the identity's domain")] = "demo",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout")
    ] = None,
) -> None:
    """Print a new invoice from ACCOUNT: this installation's transmitter, today's date, a number
    never used; upload it as is (uploadSigned with --sign)."""
    from stdnum.it import iva

    from varco.accounts import service
    from varco.cli_support import cli_errors, fail, prepare_database, settings_or_exit
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.invoices import signing
    from varco.invoices.examples import fresh_invoice

    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if to is not None and fmt in SELF_BILLING:
        fail(f"--to does not apply to {fmt}: the account issuing a self-billing invoice is its customer")
    if to is not None and not (len(to) == 11 and to.isascii() and to.isdigit() and iva.is_valid(to)):
        fail(f"--to {to!r} is not an Italian VAT number (11 digits with a valid check digit)")
    settings = settings_or_exit()
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        sender = service.find(session, account)
        if sender is None:
            fail(f"no account named {account!r} (the demo accounts exist once the service started: README)")
        if not sender.vat_code or sender.country_code != "IT":
            fail(f"{account} has no Italian VAT number to invoice from")
        data = fresh_invoice(
            fmt,
            transmitter_id=settings.transmitter_id,
            supplier_vat=sender.vat_code,
            customer_vat=to,
            now=current_clock().now(),
        )
        if sign:
            data = signing.sign_cades(data, signing.identity_for(session, sender, credential, domain))
    if output is not None:
        output.write_bytes(data)
    elif sign:
        sys.stdout.buffer.write(data)
    else:
        typer.echo(data.decode())
