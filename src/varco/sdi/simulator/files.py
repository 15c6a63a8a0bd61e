"""The simulated SDI's files: identifiers, facts read at the check, and the messages it sends."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from lxml import etree
from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import make_transient_to_detached

from varco import fatturapa
from varco.core import blobs, db
from varco.core.clock import Clock
from varco.core.db import append_row, detached_row, locked_rows
from varco.core.dialects import per_dialect
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


_FILES = SimFile.__table__
# A file that varco sends: one per invoice (invoice_id is unique). A second one for the same
# invoice is not inserted (see `file_of_invoice`), in the statement that inserts the first.
_INSERT_FOR_INVOICE = per_dialect(
    lambda insert: insert(_FILES).on_conflict_do_nothing(index_elements=["invoice_id"]).returning(_FILES.c.id)
)


def new_file(
    session: UnitOfWork,
    *,
    origin: str,
    filename: str,
    content: bytes,
    clock: Clock,
    blob_id: int | None = None,
    codice_destinatario: str | None = None,
    format_: str | None = None,
    next_step: str | None = None,
) -> SimFile:
    """A new file in the session, from a sender other than varco."""
    values = _values(session, origin, filename, content, clock, None, blob_id, codice_destinatario, format_)
    return _joined(session, append_row(session, SimFile, _with_step(values, next_step)))


def file_of_invoice(
    session: UnitOfWork, invoice_id: int, filename: str, content: bytes, clock: Clock, **fields: Any
) -> SimFile | None:
    """A new file sent by varco for an invoice, its check due at once; None when the invoice has one
    already: varco sent it before (a sender's file and the invoice's IdentificativoSdI commit
    together, so this is a safeguard, which costs no query of its own)."""
    values = _values(session, "varco", filename, content, clock, invoice_id, **fields)
    file_id = session.connection().execute(_INSERT_FOR_INVOICE(session), _with_step(values, "check")).scalar()
    return None if file_id is None else _joined(session, detached_row(SimFile, values, file_id))


def _values(
    session: UnitOfWork,
    origin: str,
    filename: str,
    content: bytes,
    clock: Clock,
    invoice_id: int | None,
    blob_id: int | None = None,
    codice_destinatario: str | None = None,
    format_: str | None = None,
    sha256: str | None = None,  # the content's, when the caller has it
) -> dict[str, Any]:
    return {
        "origin": origin,
        "invoice_id": invoice_id,
        "filename": filename,
        "format": format_,
        "codice_destinatario": codice_destinatario,
        "blob_id": blob_id,
        "sha256": sha256 or hashlib.sha256(content).hexdigest(),
        "received_at": sim_clock.sim_now(session, clock),
        "next_step": None,
        "due_at": None,
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


def _with_step(values: dict[str, Any], next_step: str | None) -> dict[str, Any]:
    """The first step, due at once: set before the insert (one UPDATE fewer)."""
    if next_step is not None:
        values.update(next_step=next_step, due_at=values["received_at"])
    return values


def _joined(session: UnitOfWork, file: SimFile) -> SimFile:
    """A file inserted with a Core statement (no ORM flush) joins the session as loaded: its steps
    change it through the ORM like any file read from the database."""
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
    session: UnitOfWork,
    file: SimFile,
    report: fatturapa.Report,
    contract_errors: bool,
    at: datetime,
    register: Register,
) -> list[dict[str, str]]:
    """The Exchange System's own controls (fatturapa.sdi_controls), as NS ListaErrori entries.
    00001/00002 look at names the SDI took over SOAP or from varco (an injected file is named by
    whoever injects it); 00404 at the register of invoices this SDI took, where the file's own
    invoices are entered as they are looked up (`register`): the caller takes them back if the
    file is refused."""
    named = file.origin in ("varco", "soap")
    facts = sdi_controls.SdiFacts(
        filename=file.filename if named else None,
        file_name_seen=(lambda _name: earlier_with_name(session, file)) if file.origin == "soap" else None,
        invoice_seen=register.enter,
    )
    findings = sdi_controls.check_sdi(report, facts, receipt_day(at))
    if contract_errors:  # the contract's 0092 are already there as 00200
        findings = [f for f in findings if f.code not in ("00200", "00201", "00106")]
    return [{"code": f.code, "description": f.message[:255]} for f in findings]


# Core statements built once: every file the SDI checks runs them (the register is only ever
# written here: no ORM object of it to flush first).
_KEYS = SimInvoiceKey.__table__
_ENTER = per_dialect(
    lambda insert: (
        insert(_KEYS)
        .on_conflict_do_nothing(index_elements=["supplier", "document_type", "number", "invoice_date"])
        .returning(_KEYS.c.id)
    )
)
_SAME_INVOICE = (  # the register's unique key
    _KEYS.c.supplier == bindparam("supplier"),
    _KEYS.c.document_type == bindparam("document_type"),
    _KEYS.c.number == bindparam("number"),
    _KEYS.c.invoice_date == bindparam("invoice_date"),
)
_ENTERED_BY = select(_KEYS.c.file_id).where(*_SAME_INVOICE)
# By the unique key (its index), one row per invoice entered: the register has no index on file_id.
_TAKEN_BACK = delete(_KEYS).where(*_SAME_INVOICE, _KEYS.c.file_id == bindparam("file_id"))


class Register:
    """The register of invoices the SDI took (00404), entered as the control looks each invoice up:
    one statement per invoice, which inserts it unless it is there. Two files with the same invoice
    checked at once: on PostgreSQL the second insert waits for the first file's transaction and then
    finds its invoice (00404); on SQLite writers take turns."""

    def __init__(self, session: UnitOfWork, file: SimFile) -> None:
        self.session, self.file = session, file
        self.entered: list[dict[str, Any]] = []  # the rows this file inserted

    def enter(self, key: sdi_controls.InvoiceKey) -> bool:
        """Whether another file entered the invoice before (00404); if not, it is now this file's.
        (A batch's second body with the same key is 00409's, not 00404.)"""
        row = {
            "supplier": key.supplier[:32],
            "document_type": key.document_type,
            "number": key.number,
            "invoice_date": key.date,
        }
        connection = self.session.connection()
        mine = {**row, "file_id": self.file.id}
        if connection.execute(_ENTER(self.session), mine).first() is not None:
            self.entered.append(mine)
            return False
        return connection.execute(_ENTERED_BY, row).scalar() != self.file.id

    def take_back(self) -> None:
        """The file is refused: its invoices were not taken (a corrected copy may come)."""
        if self.entered:
            self.session.connection().execute(_TAKEN_BACK, self.entered)
            self.entered = []


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
