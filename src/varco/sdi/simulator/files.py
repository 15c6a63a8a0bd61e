"""The simulated SDI's files: identifiers, facts read at the check, and the messages it sends."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from lxml import etree
from sqlalchemy import bindparam, insert, select
from sqlalchemy.orm import make_transient_to_detached

from varco import fatturapa
from varco.core import blobs, db
from varco.core.clock import Clock
from varco.core.db import append_row, locked_rows
from varco.core.numbers import is_id
from varco.core.uow import UnitOfWork
from varco.fatturapa import sdi_controls
from varco.invoices.check_cache import checks, receipt_day
from varco.sdi import inbound, messages
from varco.sdi.models import SimFile, SimInvoiceKey
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import network, signing

SDI_ID_BASE = 100_000_000  # IdentificativoSdI = base + row id: numeric, unique, up to 12 digits
_CODE = re.compile(r"[A-Z0-9]{6,7}")
_TYPE_INDEX = {t: i for i, t in enumerate(messages.ROOTS)}
# Library codes whose SDI equivalent has another number (docs/sdi.md).
_SDI_CODES = {"0092": "00200", "FATRSM302": "00102", "0033": "00003", "0098": "00200", "FATRSM401": "00200"}
_INTERMEDIARY_ONLY = {"0093", "0094", "0002"}  # the service's own rules, not the Exchange System's


def sdi_id(file: SimFile) -> str:
    return str(SDI_ID_BASE + file.id)


def by_sdi_id(session: UnitOfWork, value: str, *, lock: bool = False) -> SimFile | None:
    if not is_id(value) or int(value) <= SDI_ID_BASE:
        return None
    return session.get(SimFile, int(value) - SDI_ID_BASE, with_for_update=lock, populate_existing=lock)


def by_filename(session: UnitOfWork, filename: str, origin: str) -> SimFile | None:
    query = select(SimFile).where(SimFile.filename == filename, SimFile.origin == origin)
    return session.scalar(query.limit(1))


def new_file(
    session: UnitOfWork,
    *,
    origin: str,
    filename: str,
    content: bytes,
    clock: Clock,
    invoice_id: int | None = None,
    blob_id: int | None = None,
    codice_destinatario: str | None = None,
    format_: str | None = None,
    next_step: str | None = None,
) -> SimFile:
    now = sim_clock.sim_now(session, clock)
    values = {
        "origin": origin,
        "invoice_id": invoice_id,
        "filename": filename,
        "format": format_,
        "codice_destinatario": codice_destinatario,
        "blob_id": blob_id,
        "sha256": hashlib.sha256(content).hexdigest(),
        "received_at": now,
        "next_step": next_step,
        "due_at": now if next_step else None,
        "outcome": None,
        "delay_seconds": 0,
        "errors": [],
        "facts": {},
        "counters": {},
        "delivered_at": None,
        "delivered_invoice_id": None,
        "esito": None,
        "finished_at": None,
    }
    # A Core insert (no ORM flush), then the row joins the session as loaded: its steps change it
    # through the ORM like any file read from the database.
    file = append_row(session, SimFile, values)
    make_transient_to_detached(file)
    session.add(file)
    locked_rows(session, SimFile)[file.id] = file  # ours until commit: current
    return file


def get_for_update(session: UnitOfWork, file_id: int) -> SimFile | None:
    """The file locked for this transaction; read once (created or locked before: no query)."""
    return db.get_for_update(session, SimFile, file_id)


def content_of(session: UnitOfWork, file: SimFile) -> bytes:
    assert file.blob_id is not None, f"simulated file {file.id} has no content"
    return blobs.content(session, file.blob_id)


def run_checks(session: UnitOfWork, content: bytes, at: datetime) -> fatturapa.Report:
    """The SDI's own checks: the extra-schema rules run even if the sender skipped them. Shared
    with the service's checks of the same file in this transaction (the same rules, once)."""
    options = fatturapa.CheckOptions(received_date=receipt_day(at), skip_extra_schema=False)
    return fatturapa.check(content, options, cache=checks(session))


def sdi_errors(report: fatturapa.Report) -> list[dict[str, str]]:
    """Findings as NS ListaErrori entries (Codice has exactly five characters)."""
    errors = []
    for finding in report.errors:
        if finding.code in _INTERMEDIARY_ONLY:
            continue
        code = _SDI_CODES.get(finding.code, finding.code)
        errors.append({"code": code if len(code) == 5 else "00200", "description": finding.message[:255]})
    return errors


def sdi_control_errors(
    session: UnitOfWork, file: SimFile, report: fatturapa.Report, contract_errors: bool, at: datetime
) -> list[dict[str, str]]:
    """The Exchange System's own controls (fatturapa.sdi_controls), as NS ListaErrori entries.
    00001/00002 look at names the SDI took over SOAP or from varco (an injected file is named by
    whoever injects it); 00404 at the register of invoices this SDI took (`register_invoices`)."""
    named = file.origin in ("varco", "soap")
    facts = sdi_controls.SdiFacts(
        filename=file.filename if named else None,
        file_name_seen=(lambda _name: earlier_with_name(session, file)) if file.origin == "soap" else None,
        invoice_seen=lambda key: _taken_before(session, key, file),
    )
    findings = sdi_controls.check_sdi(report, facts, receipt_day(at))
    if contract_errors:  # the contract's 0092 are already there as 00200
        findings = [f for f in findings if f.code not in ("00200", "00201", "00106")]
    return [{"code": f.code, "description": f.message[:255]} for f in findings]


# Core statements built once: every file the SDI checks runs them (the register is only ever
# written by register_invoices, with the insert below: no ORM object of it to flush first).
_KEYS = SimInvoiceKey.__table__
_TAKEN_BEFORE = (
    select(_KEYS.c.id)
    .where(
        _KEYS.c.supplier == bindparam("supplier"),
        _KEYS.c.document_type == bindparam("document_type"),
        _KEYS.c.number == bindparam("number"),
        _KEYS.c.invoice_date == bindparam("invoice_date"),
        _KEYS.c.file_id != bindparam("file_id"),
    )
    .limit(1)
)
_REGISTER = insert(_KEYS)


def _taken_before(session: UnitOfWork, key: sdi_controls.InvoiceKey, file: SimFile) -> bool:
    values = {
        "supplier": key.supplier,
        "document_type": key.document_type,
        "number": key.number,
        "invoice_date": key.date,
        "file_id": file.id,
    }
    return session.connection().execute(_TAKEN_BEFORE, values).first() is not None


def register_invoices(session: UnitOfWork, file: SimFile, report: fatturapa.Report) -> None:
    """The invoices of a file the SDI took. Two files with the same invoice checked at once: the
    unique key refuses the second insert, its job is retried and then finds the first (00404)."""
    rows = [
        {
            "supplier": key.supplier[:32],
            "document_type": key.document_type,
            "number": key.number,
            "invoice_date": key.date,
            "file_id": file.id,
        }
        for key in sdi_controls.keys_of(report)
    ]
    if rows:
        session.connection().execute(_REGISTER, rows)


def facts(report: fatturapa.Report) -> dict[str, Any]:
    """What later steps need, read once from the file at the check."""
    summary = report.summary
    if summary is None:
        return {}
    client = summary.customer
    return {
        "recipient": client.description or "Destinatario",
        "client": {"country": client.country, "vat": client.vat_code, "fiscal_code": client.fiscal_code},
        "bodies": [{"numero": b.number, "anno": b.date.year} for b in summary.bodies],
    }


def client_party(file: SimFile) -> fatturapa.Party | None:
    client = file.facts.get("client")
    if not client:
        return None
    return fatturapa.Party(
        description=file.facts.get("recipient"),
        country=client["country"],
        vat_code=client["vat"],
        fiscal_code=client["fiscal_code"],
    )


def recipient(file: SimFile, recipient_code: str | None = None) -> tuple[str, str]:
    """Destinatario (Codice, Descrizione) of RC and AT."""
    code = recipient_code or file.codice_destinatario or ""
    return (code if _CODE.fullmatch(code) else "0000000", file.facts.get("recipient") or "Destinatario")


def message_id(file: SimFile, type_: str, progressive: int) -> str:
    return f"{file.id}{_TYPE_INDEX[type_]}{progressive:02d}"[-14:]


def next_progressive(file: SimFile, type_: str) -> int:
    n = file.counters.get(type_, 0) + 1
    file.counters = {**file.counters, type_: n}  # a new dict: JSON columns track assignment only
    return n


def sign_and_name(
    session: UnitOfWork, file: SimFile, type_: str, element: etree._Element, progressive: int, clock: Clock
) -> tuple[str, bytes]:
    """The message file (signed when the schema requires it) and its name."""
    if type_ in messages.SIGNED:
        element = signing.sign(session, element, clock)
    return messages.message_name(file.filename, type_, progressive), messages.serialize(element)


def notify_sender(session: UnitOfWork, file: SimFile, type_: str, build: Any, clock: Clock) -> str | None:
    """Send a message to the file's transmitter: varco in this database, or the intermediary that
    sent it over SOAP. External senders are simulated, so their messages are not kept."""
    n = next_progressive(file, type_)
    if file.origin not in ("varco", "soap"):
        return None
    name, xml = sign_and_name(session, file, type_, build(message_id(file, type_, n)), n, clock)
    if file.origin == "soap":
        network.required().notify(session, file, type_, name, xml, clock)
    else:
        inbound.receive_notification(session, name, xml, clock)
    return name


def earlier_with_name(session: UnitOfWork, file: SimFile) -> bool:
    """Whether the SDI took a file of this name over SOAP before (NS 00002 Nome file duplicato)."""
    query = select(SimFile.id).where(
        SimFile.filename == file.filename, SimFile.origin == file.origin, SimFile.id < file.id
    )
    return session.scalar(query.limit(1)) is not None
