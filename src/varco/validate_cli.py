"""`varco validate FILE...`: run the service's checks on invoice files, offline.

Registered by `varco.cli` as `app.command("validate")(validate)`. Exit 0 when every file is
accepted, 1 when any is refused, 2 on usage errors. Files are read up to the contract's size
(5 MB) and one byte more: anything larger (/dev/zero too) is refused as 0033, the rest unread.
"""

from __future__ import annotations

import json
import os
import stat
from datetime import date
from pathlib import Path
from typing import NoReturn
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import typer

from varco.core.clock import current_clock
from varco.fatturapa import CheckOptions, Finding, Report, check
from varco.fatturapa.sdi_controls import SdiFacts, check_sdi

TRANSMITTER_ENV = "VARCO_TRANSMITTER_ID"


def validate(
    files: list[Path] = typer.Argument(..., help="Invoice files: .xml, .p7m, or base64 text of either."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON list of reports."),
    skip_extra_schema: bool = typer.Option(
        False, "--skip-extra-schema", help="Skip the extra-schema rules (00313 and the asynchronous ones)."
    ),
    transmitter: str | None = typer.Option(
        None,
        "--transmitter",
        help=f"Intermediary id for 0094, e.g. IT05555550028 (default: ${TRANSMITTER_ENV}; unset skips 0094).",
    ),
    account_vat: str | None = typer.Option(
        None, "--account-vat", help="VAT number of the sending account (default: the issuer implied by 1.6)."
    ),
    today: str | None = typer.Option(
        None, "--today", help="YYYY-MM-DD: the SDI receipt day for 00403 (default: today in Italy)."
    ),
    no_sdi_controls: bool = typer.Option(
        False,
        "--no-sdi-controls",
        help="Skip the Exchange System's own controls (stage sdi: 00423, 00404, ...; docs/sdi-controls.md).",
    ),
) -> None:
    """Check invoice files as the service would on upload, then as its asynchronous checks would,
    then as the Exchange System's own controls would (stage sdi)."""
    options = CheckOptions(
        transmitter_id=transmitter if transmitter is not None else os.environ.get(TRANSMITTER_ENV) or None,
        account_vat=account_vat,
        skip_extra_schema=skip_extra_schema,
        received_date=_received_date(today),
    )
    contents = [_read(path, options.max_bytes) for path in files]  # usage errors first, before any output
    reports = [_too_large(options.max_bytes) if data is None else check(data, options) for data in contents]
    if not no_sdi_controls:
        for data, report in zip(contents, reports, strict=True):
            if data is not None:
                _add_sdi_findings(report, data, options.received_date)
    if json_output:
        typer.echo(json.dumps([_as_json(path, r) for path, r in zip(files, reports, strict=True)], indent=2))
    else:
        for path, report in zip(files, reports, strict=True):
            for finding in report.errors:
                # XSD messages name the path themselves (the upload reports messages alone).
                where = f" {finding.xpath}" if finding.xpath and finding.xpath not in finding.message else ""
                hint = f" ({finding.hint})" if finding.hint else ""
                stage = " [sdi]" if finding.stage == "sdi" else ""
                typer.echo(f"{path}: {finding.code}{stage}{where} {finding.message}{hint}")
            typer.echo(f"{path}: {'ACCEPTED' if report.accepted else 'REFUSED'}")
    raise typer.Exit(0 if all(r.accepted for r in reports) else 1)


def _add_sdi_findings(report: Report, data: bytes, received: date | None) -> None:
    """The SDI's controls after the contract's checks, as stage "sdi". The file's name on disk is
    not the transmitted name (varco names what it sends), so 00001/00002 are not checked; 00200
    repeats the contract's 0092 findings, so it is left out when they are there."""
    findings = check_sdi(report, SdiFacts(size=len(data)), received)
    if any(f.code == "0092" for f in report.errors):
        findings = [f for f in findings if f.code not in ("00200", "00201")]
    report.errors.extend(findings)
    report.accepted = report.accepted and not findings


def _received_date(today: str | None) -> date:
    if today is not None:
        try:
            return date.fromisoformat(today)
        except ValueError:
            _usage(f"--today {today!r} is not a date (YYYY-MM-DD)")
    try:
        zone = ZoneInfo("Europe/Rome")  # the SDI's day, not the machine's
    except ZoneInfoNotFoundError:
        return current_clock().now().date()
    return current_clock().now().astimezone(zone).date()


def _read(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `max_bytes` (never read further)."""
    try:
        # Non-blocking open: a FIFO without a writer must not hang the command.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        _usage(f"{path}: no such file")
    except OSError as exc:
        _usage(f"{path}: cannot read: {exc.strerror}")
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        _usage(f"{path}: is a directory")
    os.set_blocking(fd, True)  # a FIFO with a writer: wait for what it writes
    try:
        with open(fd, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as exc:
        _usage(f"{path}: cannot read: {exc.strerror}")
    if stat.S_ISFIFO(mode) and not data:
        _usage(f"{path}: is a FIFO with nothing written to it")
    return None if len(data) > max_bytes else data


def _too_large(max_bytes: int) -> Report:
    finding = Finding(
        code="0033",
        message=f"The file is larger than {max_bytes} bytes; the maximum is {max_bytes} bytes",
        stage="sync",
        hint="Reduce the file (e.g. move attachments out of the invoice) below the limit.",
    )
    return Report(accepted=False, errors=[finding])


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _as_json(path: Path, report: Report) -> dict[str, object]:
    return {
        "file": str(path),
        "accepted": report.accepted,
        "format": report.format,
        "signature": report.signature.as_dict() if report.signature else None,
        "errors": [
            {k: f.as_dict()[k] for k in ("code", "message", "xpath", "body", "hint", "stage")}
            for f in report.errors
        ],
    }
