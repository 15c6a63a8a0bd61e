"""`varco sdi ...`: scenarios, simulated time, received invoices of the SDI simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from varco.core.clock import current_clock

sdi_app = typer.Typer(no_args_is_help=True, help="The simulated Exchange System (SDI)")
scenario_app = typer.Typer(no_args_is_help=True, help="Which outcome the simulated SDI produces")
sdi_app.add_typer(scenario_app, name="scenario")

RecipientCode = Annotated[
    str | None, typer.Option("--recipient-code", help="Rule for this 1.1.4 recipient code")
]
Filename = Annotated[str | None, typer.Option("--filename", help="Rule for this file name")]
Default = Annotated[bool, typer.Option("--default", help="The rule used when no other matches")]


@scenario_app.command("set")
def scenario_set(
    recipient_code: RecipientCode = None,
    filename: Filename = None,
    default: Default = False,
    outcome: Annotated[
        str | None, typer.Option(help="RC, MC, NS, AT, NE-EC01, NE-EC02 or DT (PA: RC means NE-EC01)")
    ] = None,
    esito_outcome: Annotated[
        str | None, typer.Option("--esito-outcome", help="Answer to customer outcomes: ACCEPT or SE")
    ] = None,
    delay: Annotated[
        str | None, typer.Option(help="Simulated time before each outcome, e.g. 30s, 2h")
    ] = None,
) -> None:
    """Create or replace a scenario rule."""
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator import control

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        rule = control.set_scenario(
            session,
            current_clock(),
            recipient_code=recipient_code,
            filename=filename,
            default=default,
            outcome=outcome,
            esito_outcome=esito_outcome,
            delay=delay,
        )
        details = control.rule_details(rule)
        audit.record(session, audit.Kind.SDI_SCENARIO_SET, audit.CLI, current_clock(), details=details)
    typer.echo(f"scenario set: {_describe(rule)}")


@scenario_app.command("list")
def scenario_list() -> None:
    """Show the rules and the simulated clock."""
    from varco.cli_support import prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator import control, scenarios
    from varco.sdi.simulator.clock import format_duration

    prepare_database()
    with unit_of_work() as session:
        state = control.clock_state(session, current_clock())
        rules = scenarios.list_rules(session)
    typer.echo(f"simulated now {state.simulated_now.isoformat()} (offset {format_duration(state.offset)})")
    if not rules:
        typer.echo("no rules: every file is delivered (RC), a PA accepts (NE EC01), outcomes are accepted")
    for rule in rules:
        typer.echo(_describe(rule))


@scenario_app.command("comfin")
def scenario_comfin(
    outcome: Annotated[str, typer.Option(help="ES01, ES02 or ES03 (docs/comfin.md)")],
    target: Annotated[str, typer.Option(help="LI, DF, a communication file name, or empty for all")] = "",
) -> None:
    """Force the esito of financial communications."""
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator import control, scenarios

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        rule = scenarios.set_rule(session, "comfin", target, current_clock(), outcome=outcome)
        details = control.rule_details(rule)
        audit.record(session, audit.Kind.SDI_SCENARIO_SET, audit.CLI, current_clock(), details=details)
    typer.echo(f"scenario set: communications {target or 'all'} -> {outcome.upper()}")


@scenario_app.command("clear")
def scenario_clear(
    recipient_code: RecipientCode = None, filename: Filename = None, default: Default = False
) -> None:
    """Delete one rule, or all rules when none is named."""
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator import control

    prepare_database()
    with cli_errors(), unit_of_work() as session:
        deleted = control.clear_scenarios(
            session, recipient_code=recipient_code, filename=filename, default=default
        )
        details = control.cleared_details(recipient_code, filename, default, deleted)
        audit.record(session, audit.Kind.SDI_SCENARIO_DELETED, audit.CLI, current_clock(), details=details)
    typer.echo(f"{deleted} rule(s) deleted")


def _describe(rule) -> str:
    from varco.sdi.simulator.clock import format_duration

    target = "default" if rule.kind == "default" else f"{rule.kind.replace('_', ' ')} {rule.value}"
    parts = [target]
    if rule.outcome:
        parts.append(f"outcome {rule.outcome}")
    if rule.esito_outcome:
        parts.append(f"esito {rule.esito_outcome}")
    parts.append(f"delay {format_duration(rule.delay)}")
    return "\t".join(parts)


@sdi_app.command("advance")
def advance(duration: Annotated[str, typer.Argument(help="e.g. 15d, 2h, 30s")]) -> None:
    """Move the simulated clock forward and run what became due (e.g. DT after 15d)."""
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator import clock as sim_clock
    from varco.sdi.simulator import engine

    prepare_database()
    clock = current_clock()
    with cli_errors(), unit_of_work() as session:
        now = sim_clock.advance(session, sim_clock.parse_duration(duration), clock)
        details = {"duration": duration, "to": now.isoformat()}
        audit.record(session, audit.Kind.SDI_CLOCK_ADVANCED, audit.CLI, clock, details=details)
    ran = engine.run_due(clock)
    typer.echo(f"simulated now {now.isoformat()}; {ran} step(s) run")


@sdi_app.command("inject")
def inject(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Invoice file (XML or .p7m)")],
    filename: Annotated[
        str | None, typer.Option(help="SDI file name (default: the file's, or derived)")
    ] = None,
) -> None:
    """Deliver an invoice from an outside sender to varco's recipient code."""
    from varco.accounts import service as accounts
    from varco.audit import service as audit
    from varco.cli_support import cli_errors, prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.simulator.inject import FILENAME
    from varco.sdi.simulator.inject import inject as inject_file

    prepare_database()
    name = filename or (file.name if FILENAME.fullmatch(file.name) else None)
    with cli_errors(), unit_of_work() as session:
        result = inject_file(session, file.read_bytes(), current_clock(), name)
        delivery = result.delivery
        status = "DISCARDED" if delivery is None else "DELIVERED" if delivery.invoice else "UNROUTABLE"
        details = {"filename": result.filename, "sdiId": result.sdi_id, "result": status}
        audit.record(session, audit.Kind.SDI_INVOICE_INJECTED, audit.CLI, current_clock(), details=details)
        if delivery is not None and delivery.invoice is not None:
            owner = accounts.get(session, delivery.invoice.account_id)
            message = (
                f"delivered {result.filename} (IdentificativoSdI {result.sdi_id}) to "
                f"{owner.username if owner else delivery.invoice.account_id} as {delivery.invoice.filename}"
            )
        elif delivery is not None and delivery.unroutable is not None:
            message = (
                f"kept aside {result.filename} (IdentificativoSdI {result.sdi_id}, unroutable "
                f"#{delivery.unroutable.id}): {delivery.unroutable.reason}"
            )
        else:
            message = ""
    if not message:
        typer.echo(f"discarded by the SDI: {result.filename}", err=True)
        for error in result.errors:
            typer.echo(f"  {error['code']} {error['description']}", err=True)
        raise typer.Exit(1)
    typer.echo(message)


@sdi_app.command("unroutable")
def unroutable() -> None:
    """List received invoices kept aside because no account matches their client."""
    from varco.cli_support import prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi import received

    prepare_database()
    with unit_of_work() as session:
        rows = received.list_unroutable(session)
        for row in rows:
            typer.echo(
                f"#{row.id}\t{row.filename}\tIdentificativoSdI {row.sdi_id}\t"
                f"{row.received_at.isoformat()}\t{row.reason}"
            )
    if not rows:
        typer.echo("no invoice kept aside")


@sdi_app.command("redeliver")
def redeliver() -> None:
    """Deliver kept-aside invoices whose client now has an account."""
    from varco.audit import service as audit
    from varco.cli_support import prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi import received

    prepare_database()
    with unit_of_work() as session:
        delivered = received.redeliver(session, current_clock())
        details = {"delivered": len(delivered)}
        audit.record(session, audit.Kind.SDI_REDELIVERED, audit.CLI, current_clock(), details=details)
        for row, invoice in delivered:
            typer.echo(f"#{row.id}\t{row.filename} delivered as invoice {invoice.id} ({invoice.filename})")
        left = len(received.list_unroutable(session))
    typer.echo(f"{len(delivered)} delivered, {left} still kept aside")


@sdi_app.command("unmatched")
def unmatched() -> None:
    """List SDICoop messages kept aside: answered to the SDI, applied to no invoice (docs/sdicoop.md)."""
    from sqlalchemy import select

    from varco.cli_support import prepare_database
    from varco.core.db import unit_of_work
    from varco.sdi.models import UnmatchedMessage

    prepare_database()
    with unit_of_work() as session:
        rows = session.scalars(select(UnmatchedMessage).order_by(UnmatchedMessage.id)).all()
        for row in rows:
            typer.echo(
                f"#{row.id}\t{row.filename}\t{row.type or '-'}\tIdentificativoSdI {row.sdi_id or '-'}\t"
                f"{row.received_at.isoformat()}\t{row.reason}"
            )
    if not rows:
        typer.echo("no message kept aside")


@sdi_app.command("make-test-pki")
def make_test_pki(
    directory: Annotated[Path, typer.Argument(file_okay=False, help="Where to write the PEM files")],
    intermediary: Annotated[
        list[str] | None, typer.Option("--intermediary", help="Name of an intermediary (repeat)")
    ] = None,
) -> None:
    """A throw-away CA with the SDI's and each intermediary's certificates (tests, demos only)."""
    from varco.cli_support import fail
    from varco.sdi.sdicoop.pki import make_test_pki as make

    try:
        pki = make(directory, intermediary or ["varco"])
    except ValueError as exc:
        fail(str(exc))
        return
    typer.echo(f"CA {pki.ca.cert}")
    typer.echo(f"SDI server {pki.sdi_server.cert}, client {pki.sdi_client.cert}")
    for name, pair in pki.intermediaries_server.items():
        typer.echo(f"{name}: server {pair.cert}, client {pki.intermediaries_client[name].cert}")


@sdi_app.command("serve-sdicoop")
def serve_sdicoop(
    config: Annotated[Path, typer.Option("--config", help="JSON: TLS and intermediaries (docs/sdicoop.md)")],
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTPS port")] = 8443,
    host: Annotated[str, typer.Option(help="Address to listen on")] = "127.0.0.1",
    workers: Annotated[int, typer.Option(min=1, max=16, help="Worker threads")] = 2,
) -> None:
    """Run a stand-alone simulated SDI that talks to intermediaries over SOAP and mutual TLS."""
    from varco.app import configure_logging
    from varco.cli_support import fail, prepare_database
    from varco.sdi.simulator.soap import app
    from varco.sdi.simulator.soap.config import ConfigError, load

    try:
        loaded = load(config)
    except ConfigError as exc:
        fail(str(exc))
        return
    configure_logging()
    prepare_database()
    typer.echo(
        f"simulated SDI (SDICoop) on https://{host}:{port}/ricevi_file, /ricevi_notifica, /dati-fattura"
    )
    app.serve(loaded, host, port, workers)
