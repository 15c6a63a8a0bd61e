"""The `varco` command: serve, worker, db, users, validate."""

from __future__ import annotations

import gc
import logging
import os
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from varco.accounts.cli import delegations_app
from varco.cli_support import cli_errors, fail, prepare_database, settings_or_exit
from varco.core.clock import current_clock
from varco.invoices.cli import demo_app
from varco.limits.commands import users_set_tier, users_unlock
from varco.preservation.cli import pdd_app, preservation_app
from varco.sdi.cli import sdi_app

app = typer.Typer(no_args_is_help=True, add_completion=False, help="varco e-invoicing intermediary")
db_app = typer.Typer(no_args_is_help=True, help="Database schema")
users_app = typer.Typer(no_args_is_help=True, help="Accounts")
app.add_typer(db_app, name="db")
app.add_typer(users_app, name="users")
app.add_typer(delegations_app, name="delegations")
app.add_typer(sdi_app, name="sdi")
app.add_typer(demo_app, name="demo")
app.add_typer(preservation_app, name="preservation")
app.add_typer(pdd_app, name="pdd")
users_app.command("unlock")(users_unlock)
users_app.command("set-tier")(users_set_tier)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every migration."""
    prepare_database()
    typer.echo("database is up to date")


@db_app.command("current")
def db_current() -> None:
    """Show the schema revision."""
    from varco.core import migrate
    from varco.core.db import get_database

    settings_or_exit()
    typer.echo(" ".join(migrate.current(get_database().url)) or "(empty)")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port")] = 8000,
    worker: Annotated[bool, typer.Option(help="Run the in-process worker (embedded mode)")] = True,
    sdicoop_port: Annotated[
        int | None,
        typer.Option(help="Also serve the SDICoop services on this port, TLS with client certificates"),
    ] = None,
    ssl_certfile: Annotated[
        Path | None, typer.Option(help="That listener's certificate (else VARCO_SDICOOP_SERVER_CERT)")
    ] = None,
    ssl_keyfile: Annotated[
        Path | None, typer.Option(help="That listener's key (else VARCO_SDICOOP_SERVER_KEY)")
    ] = None,
    ssl_ca_certs: Annotated[
        Path | None, typer.Option(help="CA of the clients it accepts (else VARCO_SDICOOP_CLIENT_CA)")
    ] = None,
) -> None:
    """Run the API (and, in embedded mode, an in-process worker)."""
    import uvicorn

    from varco.app import configure_logging, create_app

    settings = settings_or_exit()
    sdicoop = None
    if sdicoop_port is not None:
        from varco.sdicoop_listener import sdicoop_listener

        tls = {"cert": ssl_certfile, "key": ssl_keyfile, "client_ca": ssl_ca_certs}
        sdicoop = sdicoop_listener(settings, host, sdicoop_port, **{k: v for k, v in tls.items() if v})
    configure_logging()
    prepare_database()
    if settings.profile == "demo" and settings.demo_data:
        seed_demo()
    application = create_app()
    if worker and settings.embedded:
        from varco.core.jobs import get_queue
        from varco.core.worker import EmbeddedWorker

        embedded = EmbeddedWorker(get_queue(), settings.embedded_workers)
        application.router.on_startup.append(embedded.start)
        application.router.on_shutdown.append(embedded.stop)
    # The loaded app is some 250k long-lived objects; every full collection walked them all (long
    # pauses, the p99 of list pages). Frozen, they are skipped (docs/performance.md, Search).
    gc.collect()
    gc.freeze()
    # proxy_headers off: uvicorn would trust X-Forwarded-For from 127.0.0.1 by itself; varco reads
    # it only from VARCO_TRUSTED_PROXIES (limits/ip.py).
    if sdicoop is not None:
        sdicoop.start()
    try:
        uvicorn.run(application, host=host, port=port, log_level="info", proxy_headers=False)
    finally:
        if sdicoop is not None:
            sdicoop.stop()


def seed_demo() -> None:
    from varco.accounts.demo import seed_demo_accounts
    from varco.accounts.service import get_by_username
    from varco.core import migrate
    from varco.core.db import get_database, unit_of_work
    from varco.panel.sessions import register_seeded

    # Processes started together would each create the missing accounts: one at a time.
    with migrate.exclusive(get_database().url), unit_of_work() as session:
        created = seed_demo_accounts(session, settings_or_exit(), current_clock())
        for username, _ in created:  # ready to use in the panel: no registration step
            register_seeded(session, get_by_username(session, username), current_clock())
    for username, password in created:
        typer.echo(f"demo account created: {username} / {password}")


@app.command()
def worker(workers: Annotated[int, typer.Option(min=1, max=64, help="Worker threads")] = 2) -> None:
    """Run background workers (and the reconciler) until stopped."""
    from varco.app import configure_logging
    from varco.core.jobs import get_queue
    from varco.core.worker import run_standalone

    configure_logging()
    prepare_database()
    run_standalone(get_queue(), workers)


@users_app.command("create")
def users_create(
    username: str,
    password: Annotated[str, typer.Option("--password", help="Initial password")],
    basic: Annotated[bool, typer.Option("--basic", help="Basic user (default: Premium)")] = False,
    description: Annotated[str, typer.Option(help="Full name or company name")] = "",
    country: Annotated[str, typer.Option(help="Country code")] = "IT",
    vat_code: Annotated[str | None, typer.Option(help="VAT number, digits only")] = None,
    fiscal_code: Annotated[str | None, typer.Option(help="Tax code")] = None,
    pec: Annotated[str | None, typer.Option(help="Certified e-mail address")] = None,
    tier: Annotated[int | None, typer.Option(min=0, max=6, help="Tier 0-6")] = None,
    max_space_kb: Annotated[int | None, typer.Option(min=0, help="Storage purchased, KB")] = None,
    expires: Annotated[str | None, typer.Option(help="Expiry date YYYY-MM-DD")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="Operator: may use the admin endpoints")] = False,
) -> None:
    """Create an account."""
    from varco.accounts import service
    from varco.accounts.models import AccountKind
    from varco.core.db import unit_of_work

    expires_on = None
    if expires is not None:
        try:
            expires_on = date.fromisoformat(expires)
        except ValueError:
            fail(f"invalid --expires {expires!r}: use YYYY-MM-DD")
    new = service.NewAccount(
        username=username,
        password=password,
        kind=AccountKind.BASIC if basic else AccountKind.PREMIUM,
        description=description,
        country_code=country,
        vat_code=vat_code,
        fiscal_code=fiscal_code,
        pec=pec,
        tier=tier,
        max_space_kb=max_space_kb,
        expires_on=expires_on,
        is_admin=admin,
    )
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = service.create_account(session, new, settings_or_exit(), current_clock())
        typer.echo(f"created {account.kind} account {account.username}")


@users_app.command("list")
def users_list() -> None:
    """List accounts."""
    from varco.accounts import service
    from varco.core.db import unit_of_work

    prepare_database()
    with unit_of_work() as session:
        for a in service.list_accounts(session):
            state = "disabled" if a.is_disabled else "active"
            typer.echo(
                f"{a.username}\t{a.kind}\ttier {a.tier}\t{a.country_code}{a.vat_code or ''}\t"
                f"expires {a.expires_on.isoformat()}\t{state}"
            )


@users_app.command("disable")
def users_disable(username: str) -> None:
    """Disable an account and revoke its tokens."""
    from varco.accounts import service
    from varco.auth import service as auth_service
    from varco.core.db import unit_of_work

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = service.disable_account(session, username)
        revoked = auth_service.revoke_all(session, account, current_clock())
    typer.echo(f"disabled {username} ({revoked} tokens revoked)")


@users_app.command("set-signer")
def users_set_signer(
    username: str,
    credential: Annotated[str, typer.Option(help="Automatic-signature credential (unlocks the key)")],
    domain: Annotated[str, typer.Option(help="Automatic-signature domain")],
    pkcs12_file: Annotated[Path, typer.Option("--pkcs12", help="PKCS#12 file with key and certificate")],
    pkcs12_password: Annotated[str | None, typer.Option(help="Password of the PKCS#12 file")] = None,
) -> None:
    """Configure the automatic-signature identity used by upload with credential + domain."""
    from varco.accounts import service
    from varco.core.db import unit_of_work
    from varco.invoices import signing

    try:
        data = pkcs12_file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {pkcs12_file}: {exc.strerror}")
    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = service.get_by_username(session, username)
        identity = signing.set_identity(
            session, account, credential, domain, data, pkcs12_password, current_clock().now()
        )
        typer.echo(f"signing identity for {username} in domain {domain}: {identity.subject}")


def _register_optional_commands() -> None:
    try:
        from varco.validate_cli import validate
    except ImportError:  # the validation CLI lands with the fatturapa library
        return
    app.command("validate")(validate)


_register_optional_commands()


def main() -> None:
    # Data files (database, queue, mail, backups) readable by the owner only: they hold invoices,
    # password hashes and encrypted secrets (docs/security.md).
    os.umask(0o077)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    app()


if __name__ == "__main__":
    main()
