"""The `varco` command: serve, worker, db, users, validate."""

from __future__ import annotations

import gc
import logging
import os
from datetime import date
from functools import partial
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

    from varco.app import configure_logging, configure_metrics, create_app
    from varco.core.shutdown import Server

    settings = settings_or_exit()
    sdicoop = None
    if sdicoop_port is not None:
        from varco.sdicoop_listener import sdicoop_listener

        tls = {"cert": ssl_certfile, "key": ssl_keyfile, "client_ca": ssl_ca_certs}
        sdicoop = sdicoop_listener(settings, host, sdicoop_port, **{k: v for k, v in tls.items() if v})
    configure_logging()
    configure_metrics()  # before anything counts (seeding the demo data may enqueue jobs)
    prepare_database()
    if settings.profile == "demo" and settings.demo_data:
        seed_demo()
    application = create_app()
    timeout = settings.shutdown_timeout.total_seconds()
    on_signal = []  # what stops taking work at SIGTERM besides uvicorn's listener (core/shutdown.py)
    if worker and settings.embedded:
        from varco.core.jobs import get_queue, hand_over_to_workers_here
        from varco.core.worker import EmbeddedWorker

        hand_over_to_workers_here()  # an upload's checks of its file serve its stage (core/jobs.py)
        embedded = EmbeddedWorker(get_queue(), settings.embedded_workers, timeout)
        application.router.on_startup.append(embedded.start)
        application.router.on_shutdown.append(embedded.stop)
        on_signal.append(embedded.begin_stop)
    if sdicoop is not None:
        on_signal.append(partial(setattr, sdicoop.server, "should_exit", True))
    # The loaded app is some 250k long-lived objects; every full collection walked them all (long
    # pauses, the p99 of list pages). Frozen, they are skipped (docs/performance.md, Search).
    gc.collect()
    gc.freeze()
    if sdicoop is not None:
        sdicoop.start()
    # proxy_headers off: uvicorn would trust X-Forwarded-For from 127.0.0.1 by itself; varco reads
    # it only from VARCO_TRUSTED_PROXIES (limits/ip.py).
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        log_level="info",
        log_config=None,  # uvicorn's lines go through ours (core/logs.py)
        access_log=False,  # replaced by the line per request of core/requests.py
        proxy_headers=False,
        timeout_graceful_shutdown=timeout,  # typed int, used as asyncio.wait_for's timeout
    )
    server = Server(config, on_signal)
    try:
        server.run()
    finally:
        if sdicoop is not None:
            sdicoop.stop()
    if not server.started:  # as uvicorn.run: the port was in use, the startup failed...
        raise typer.Exit(3)


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
    """Run background workers (and the reconciler) until stopped, at a lower CPU priority
    (VARCO_WORKER_NICE): SIGTERM lets the running jobs finish (VARCO_SHUTDOWN_TIMEOUT), a second
    SIGTERM or SIGINT stops at once."""
    from varco.app import configure_logging, configure_metrics
    from varco.core.jobs import get_queue, work_ahead_of_the_lock
    from varco.core.worker import run_standalone

    settings = settings_or_exit()
    if settings.worker_nice:
        # First: on Linux it applies to the calling thread and to the threads it starts later
        # (the log writer's among them), not to those already running.
        os.nice(settings.worker_nice)
    configure_logging()
    configure_metrics()
    prepare_database()
    work_ahead_of_the_lock()  # on SQLite, beside a `varco serve` that writes to the same file
    run_standalone(get_queue(), workers, settings.shutdown_timeout.total_seconds())


@app.command()
def backup(
    dest: Annotated[Path | None, typer.Argument(help="A new or empty directory for the copy")] = None,
    verify: Annotated[
        bool, typer.Option("--verify", help="Instead: check every stored file (SQLite or PostgreSQL)")
    ] = False,
) -> None:
    """Copy the embedded installation while it runs (database, files, manifest.json with checksums);
    with --verify, check that every stored file of the database matches its recorded checksum."""
    from varco.core import backup as backups

    settings = settings_or_exit()
    if verify == (dest is not None):
        fail("give DEST to make a backup, or --verify to check the stored files")
    if dest is None:
        verify_stored_files(settings.resolved_database_url)
        return
    try:
        manifest = backups.backup(backups.Installation.of(settings), dest, current_clock().now())
    except backups.BackupError as exc:
        fail(str(exc))
    except OSError as exc:  # DEST unwritable, the disk full...
        fail(f"the backup could not be written to {dest}: {exc}")
    database = manifest["database"]
    typer.echo(
        f"backed up the database (schema {', '.join(manifest['schema_revision'])}, {database['size']} bytes) "
        f"and {len(manifest['files'])} files to {dest}"
    )
    typer.echo(f"  {backup_counts(manifest)}")


@app.command()
def restore(src: Annotated[Path, typer.Argument(help="A directory made by `varco backup DEST`")]) -> None:
    """Restore a backup into an empty VARCO_DATA_DIR, every checksum checked first."""
    from varco.core import backup as backups

    settings = settings_or_exit()
    try:
        installation = backups.Installation.of(settings)
        manifest = backups.restore(src, installation)
    except backups.BackupError as exc:
        fail(str(exc))
    except OSError as exc:  # the data dir's parent unwritable, the disk full...
        fail(f"the backup could not be restored into {settings.data_dir}: {exc}")
    typer.echo(
        f"restored the backup of {manifest['created_at']} (varco {manifest['varco_version']}, schema "
        f"{', '.join(manifest['schema_revision'])}) into {installation.data_dir}, every checksum verified:"
    )
    typer.echo(f"  {installation.database}: {manifest['database']['size']} bytes")
    folders: dict[str, int] = {}
    for entry in manifest["files"]:
        folder = entry["path"].partition("/")[0] if "/" in entry["path"] else "."
        folders[folder] = folders.get(folder, 0) + 1
    for folder, count in sorted(folders.items()):
        typer.echo(f"  {installation.data_dir / folder}: {count} files")
    typer.echo(f"  {backup_counts(manifest)}")
    typer.echo("The reconciler sends the pending jobs' wake-ups once `varco serve` or `varco worker` runs.")


def backup_counts(manifest: dict) -> str:
    tables = manifest["tables"]
    return (
        f"invoices {tables.get('invoices', 0)}, notifications {tables.get('notifications', 0)}, "
        f"stored files {tables.get('blobs', 0)}, pending jobs {manifest['pending_jobs']}"
    )


def verify_stored_files(url: str) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    from varco.core.file_check import verify_stored_files as check_files

    try:
        check = check_files(url)
    except SQLAlchemyError as exc:
        fail(f"cannot read the database: {exc}")
    typer.echo(f"{check.files} stored files checked, {check.bytes} bytes")
    if check.count:
        for problem in check.problems:
            typer.echo(f"  {problem}", err=True)
        hidden = check.count - len(check.problems)
        typer.echo(f"error: {check.count} problems" + (f", {hidden} not shown" if hidden else ""), err=True)
        raise typer.Exit(1)
    typer.echo("every stored file matches its recorded size and SHA-256, and every reference finds its file")


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
    from varco.audit import service as audit
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
        account = service.create_account(session, new, settings_or_exit(), current_clock(), audit.CLI)
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
    from varco.audit import service as audit
    from varco.auth import service as auth_service
    from varco.core.db import unit_of_work

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        account = service.disable_account(session, username, current_clock(), audit.CLI)
        revoked = auth_service.revoke_all(session, account, current_clock(), audit.CLI)
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
    from varco.audit import service as audit
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
        details, clock = {"domain": domain}, current_clock()  # never the credential nor the PKCS#12 password
        audit.record(session, audit.Kind.SIGNER_SET, audit.CLI, clock, subject=account, details=details)
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
