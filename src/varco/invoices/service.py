"""The invoices service: the upload (§4.3, the synchronous stage of §7.2; refused files are not
stored) and the state-applying entry points (§3.1: the only writer of `Invoice.state`, and the
store of the SDI's notifications)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import OperationalError

from varco import fatturapa
from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core import blobs, jobs, metrics
from varco.core.clock import Clock
from varco.core.db import append_row, reading
from varco.core.errors import VarcoError
from varco.core.uow import Fact, UnitOfWork
from varco.events import service as events
from varco.invoices import check_cache, filenames, preflight, signing
from varco.invoices.models import Invoice, InvoiceTransition, Notification
from varco.invoices.repository import InvoiceRepository, body_values, party_columns, signature_column
from varco.invoices.states import IllegalTransition, InvoiceEvent, InvoiceState, next_state
from varco.limits import usage
from varco.settings import Settings

log = logging.getLogger("varco.invoices")

# The asynchronous stage (invoices.tasks): due ones run in batches, one commit for several.
PROCESS = jobs.Task("invoices.process", ("invoice_id",), batches=True)

# Library codes reported as they are; anything else of the synchronous stage is mapped here.
_SAME_CODE = {"0002", "0033", "0092", "0093", "0094", "0098"}
_AS_CODE = {"FATRSM401": "0002"}  # an empty file is a missing dataFile for the upload


class UploadRefused(VarcoError):
    """A synchronous check failed: HTTP 200 with its §7.2 code (413 for 0033), in the §2.8 shape
    of the upload routes."""

    def __init__(self, code: str, message: str, status: int = 200) -> None:
        super().__init__(message, code=code, status=status)


@dataclass(frozen=True)
class Upload:
    data_file: str | None
    signed_endpoint: bool  # uploadSigned
    credential: str | None = None
    domain: str | None = None
    sender_piva: str | None = None
    skip_extra_schema: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Accepted:
    filename: str
    invoice_id: int | None  # None for a dry run


@dataclass(frozen=True)
class Checked:
    """An upload that passed the checks that only read (§7.2 up to 0096)."""

    upload: Upload
    data: bytes  # the decoded file, as sent
    report: fatturapa.Report
    taxpayer: Account
    identity: signing.Identity | None


def accept_upload(
    session: UnitOfWork, caller: Account, upload: Upload, settings: Settings, clock: Clock
) -> Accepted:
    """Run the synchronous checks in the contract's order; store and count an accepted file."""
    # The checks only read: on SQLite they run before the write lock, which the store alone holds.
    with reading(session):
        checked = check_upload(session, caller, upload, settings)
    return store_upload(session, caller, checked, settings, clock)


def check_upload(session: UnitOfWork, caller: Account, upload: Upload, settings: Settings) -> Checked:
    """The checks that only read, in the contract's order: 0002/0098, 0033, 0092, 0094, issuer
    rules, 0093, 0096. Run them inside `reading` (`accept_upload` does)."""
    data = _decode(upload.data_file, settings)
    if (upload.credential or upload.domain) and upload.signed_endpoint:
        raise UploadRefused("0002", "credential and domain are for automatic signature on upload only")
    identity = None
    if upload.credential or upload.domain:
        identity = signing.identity_for(session, caller, upload.credential, upload.domain)
    report = fatturapa.check_sync(data, _options(upload, settings))
    extra_schema = [f for f in report.errors if f.code not in _SAME_CODE and f.code not in _AS_CODE]
    if not report.accepted and len(extra_schema) < len(report.errors):
        first = report.errors[0]
        code = _AS_CODE.get(first.code, first.code)
        same = [f.message for f in report.errors if f.code == first.code]
        raise UploadRefused(code, _join(same), status=413 if code == "0033" else 200)
    assert report.summary is not None
    taxpayer = _taxpayer(session, caller, report.summary, upload.sender_piva)
    if extra_schema:  # §7.3 synchronous rules (00313) come after the delegation check
        raise UploadRefused("0096", _join(f.upload_text for f in extra_schema))
    if caller.preflight_sdi_controls and (refused := preflight.sdi_findings(session, report, len(data))):
        raise UploadRefused("0096", _join(f.upload_text for f in refused))
    return Checked(upload, data, report, taxpayer, identity)


def store_upload(
    session: UnitOfWork, caller: Account, checked: Checked, settings: Settings, clock: Clock
) -> Accepted:
    """The checks that need the write lock (0034, 0097), then store and count (0013)."""
    upload, data, report, taxpayer, identity = (
        checked.upload,
        checked.data,
        checked.report,
        checked.taxpayer,
        checked.identity,
    )
    stored = data if identity is None else signing.sign_cades(report.content or data, identity)
    is_signed = upload.signed_endpoint or identity is not None
    sha = hashlib.sha256(stored).hexdigest()
    repo = InvoiceRepository(session)
    now = clock.now()
    since = now - settings.duplicate_upload_window
    same, used = repo.same_content_and_used_bytes(taxpayer.id, sha, since=since)
    if same is not None:
        raise UploadRefused("0034", "This file was already sent recently and is still being processed")
    if used + len(stored) > taxpayer.max_space_kb * 1024:
        raise UploadRefused(
            "0097",
            f"Storage space insufficient: {used // 1024} KB used of {taxpayer.max_space_kb} KB, "
            "the file needs "
            f"{-(-len(stored) // 1024)} KB; increase the space",
        )
    if upload.dry_run:
        return Accepted(filenames.peek_filename(session, settings.transmitter_id, signed=is_signed), None)
    try:
        # The stage re-checks the file unless this process's worker runs it with this check (the
        # bytes checked are those stored: not signed on the way).
        handed: dict[Fact[Any], Any] = {}
        if stored is data and jobs.handing_over():
            handed = check_cache.checked_at_upload(data, report, _options(upload, settings), clock)
        invoice = _store(
            session,
            caller,
            taxpayer,
            report,
            stored,
            sha,
            is_signed,
            upload,
            settings,
            clock,
            handed,
        )
    except OperationalError as exc:
        log.error("storing an upload failed: %s", exc)
        raise UploadRefused("0013", "Error saving data; nothing was stored, send the file again") from exc
    return Accepted(invoice.filename, invoice.id)


def _decode(data_file: str | None, settings: Settings) -> bytes:
    if not data_file:
        raise UploadRefused("0002", "Input parameter error: dataFile wrong format or missing")
    # Base64 is 4/3 of the file: refuse an oversized file before decoding it.
    if len(data_file) * 3 // 4 > settings.max_upload_bytes + 3:
        raise UploadRefused("0033", f"File exceeds the maximum size ({settings.max_upload_bytes} bytes)", 413)
    try:
        return fatturapa.decode_base64(data_file)
    except fatturapa.FatturaPAError as exc:
        raise UploadRefused(exc.finding.code, exc.finding.message) from exc


def _options(upload: Upload, settings: Settings) -> fatturapa.CheckOptions:
    contacts = None
    if settings.transmitter_phone or settings.transmitter_email:
        contacts = (settings.transmitter_phone, settings.transmitter_email)
    return fatturapa.CheckOptions(
        transmitter_id=settings.transmitter_id,
        transmitter_contacts=contacts,
        sender_piva=upload.sender_piva,
        skip_extra_schema=upload.skip_extra_schema,
        max_bytes=settings.max_upload_bytes,
        require_signed=upload.signed_endpoint,
    )


def _taxpayer(
    session: UnitOfWork, caller: Account, summary: fatturapa.InvoiceSummary, sender_piva: str | None
) -> Account:
    """§1 issuer rule: the issuer is 1.2 (1.4 with SoggettoEmittente CC; senderPIVA for TD26)."""
    if sender_piva:
        country, vat = sender_piva[:2], sender_piva[2:]
    else:
        party = summary.customer if summary.soggetto_emittente == "CC" else summary.supplier
        country, vat = party.country, party.vat_code
    try:
        return accounts.taxpayer_for(session, caller, country, vat)
    except accounts.DelegationInvalid as exc:
        raise UploadRefused("0093", str(exc)) from exc
    except OperationalError as exc:
        log.error("delegation lookup failed: %s", exc)
        raise UploadRefused(
            "0095", "Service temporarily unavailable: permissions cannot be verified; retry later"
        ) from exc


def _store(
    session: UnitOfWork,
    caller: Account,
    taxpayer: Account,
    report: fatturapa.Report,
    stored: bytes,
    sha: str,
    is_signed: bool,
    upload: Upload,
    settings: Settings,
    clock: Clock,
    handed: dict[Fact[Any], Any],
) -> Invoice:
    """Everything in this transaction: name, file, invoice, usage, job. A failure leaves nothing."""
    summary = report.summary
    assert summary is not None and report.format is not None
    now = clock.now()
    filename = filenames.next_filename(session, settings.transmitter_id, signed=is_signed)
    blob = blobs.store(session, filename, stored, taxpayer.id, now, sha256=sha)
    payer = accounts.paying_account(session, taxpayer)
    invoice = InvoiceRepository(session).append(
        {
            "direction": "out",
            "filename": filename,
            "account_id": taxpayer.id,
            "uploaded_by_id": caller.id,
            "charged_account_id": payer.id,
            "format": report.format,
            "state": InvoiceState.PRESA_IN_CARICO.value,
            "blob_id": blob.id,
            "content_sha256": sha,
            "is_signed": is_signed,
            "signature": signature_column(report),
            "skip_extra_schema": upload.skip_extra_schema,
            "codice_destinatario": summary.codice_destinatario,
            "pec_destinatario": summary.pec_destinatario,
            "sdi_errors": [],
            "created_at": now,
            "updated_at": now,
            **party_columns(summary),
        },
        body_values(summary),
    )
    record_initial_state(session, invoice, now)
    usage.charge(session, payer, clock)  # §8.5: counted when the name is generated and the file accepted
    jobs.enqueue(
        session, PROCESS, key=f"process:{invoice.id}", clock=clock, facts=handed, invoice_id=invoice.id
    )
    return invoice


def _join(messages: object) -> str:
    items = list(messages)  # type: ignore[call-overload]
    text = " | ".join(items[:5])
    return text + (f" | (+{len(items) - 5} more)" if len(items) > 5 else "")


# -- state: the only writer of Invoice.state, and the SDI notifications --------------------


def apply_event(
    session: UnitOfWork,
    invoice_id: int,
    event: InvoiceEvent,
    *,
    key: str,
    clock: Clock,
    sdi_errors: list[dict[str, str]] | None = None,
    notification: Notification | None = None,
) -> tuple[Invoice, bool]:
    """Move an invoice through one guarded transition. A key seen before is a no-op: (invoice, False).

    Raises IllegalTransition for a move the lifecycle does not allow (callers log and drop it).
    `notification`: the SDI message that causes the move, if the caller has it (else looked up).
    """
    repo = InvoiceRepository(session)
    invoice = repo.get_for_update(invoice_id)
    if invoice is None:
        raise LookupError(f"invoice {invoice_id} does not exist")
    current = InvoiceState(invoice.state)
    # Keys read for a batch under its invoices' lock (`read_transition_keys`): decided in memory,
    # the row written at commit. Not in a savepoint, whose rollback would keep that row.
    known = None if session.in_nested_transaction() else repo.transition_keys(invoice.id)
    if known is not None and key in known:
        return invoice, False  # a duplicate of a move made before: a no-op
    try:
        target = next_state(current, event)
    except IllegalTransition:
        if known is None and repo.has_transition(invoice.id, key):
            return invoice, False  # a duplicate of a move made before: not illegal, a no-op
        raise
    now = clock.now()
    values = {
        "invoice_id": invoice.id,
        "key": key,
        "event": event.value,
        "from_state": current.value,
        "to_state": target.value,
        "at": now,
    }
    if known is not None:
        known.add(key)
        repo.add_transition_at_commit(values)
    # Otherwise the unique (invoice_id, key) decides: a key seen before inserts nothing (one statement).
    elif not repo.insert_transition(**values):
        return invoice, False
    invoice.state = target.value
    invoice.updated_at = now
    metrics.count_on_commit(session, metrics.INVOICE_STATES, target.name)
    if sdi_errors is not None:
        invoice.sdi_errors = sdi_errors
    events.record(
        session,
        invoice.account_id,
        "updateInvoiceStatus",
        status_payload(invoice, event, notification or _notification_for(session, invoice.id, event)),
        now,
        subject=invoice.filename,
    )
    return invoice, True


def record_sent(
    session: UnitOfWork, invoice: Invoice, sdi_id: str, received_at: datetime, clock: Clock
) -> None:
    """The SDI took the file (its IdentificativoSdI and time): 1 → 3 Inviata, once."""
    invoice.sdi_id = sdi_id
    invoice.sdi_received_at = invoice.sdi_received_at or received_at
    apply_event(session, invoice.id, InvoiceEvent.SENT, key="process", clock=clock)


def status_payload(
    invoice: Invoice, event: InvoiceEvent | None = None, notification: Notification | None = None
) -> dict[str, Any]:
    """What a callback receiver needs without another call (issue: callbacks)."""
    state = InvoiceState(invoice.state)
    return {
        "invoiceId": invoice.id,
        "filename": invoice.filename,
        "idSdi": invoice.sdi_id,
        "status": state.value,
        "statusDescription": state.label,
        "event": event.value if event else None,
        "notificationType": notification.type if notification else None,
        "notificationFilename": notification.filename if notification else None,
        "sdiErrors": invoice.sdi_errors or [],
    }


def _notification_for(session: UnitOfWork, invoice_id: int, event: InvoiceEvent) -> Notification | None:
    """The SDI message that caused this change (stored just before it), if any."""
    type_ = event.value[:2]  # NE-EC01 -> NE
    if type_ not in {"NS", "MC", "AT", "RC", "NE", "DT"}:
        return None
    return InvoiceRepository(session).latest_notification(invoice_id, type_)


def record_initial_state(session: UnitOfWork, invoice: Invoice, now: datetime) -> None:
    """History row for the state an invoice is created in."""
    values = {
        "invoice_id": invoice.id,
        "key": "created",
        "event": "created",
        "from_state": None,
        "to_state": invoice.state,
        "at": now,
    }
    append_row(session, InvoiceTransition, values)
    metrics.count_on_commit(session, metrics.INVOICE_STATES, InvoiceState(invoice.state).name)


def add_notification(
    session: UnitOfWork,
    invoice: Invoice,
    type_: str,
    filename: str,
    content: bytes,
    clock: Clock,
    *,
    result: str | None = None,
    number: str | None = None,
    notification_date: datetime | None = None,
) -> Notification | None:
    """Store an SDI message for an invoice; a file name seen before is a duplicate: None.

    The message is stored first and its row inserted unless the name is taken, rather than asked
    about first: one statement fewer for every message, a file deleted again for a duplicate."""
    now = clock.now()
    blob = blobs.store(session, filename, content, invoice.account_id, now)
    values = {
        "invoice_id": invoice.id,
        "type": type_,
        "filename": filename,
        "blob_id": blob.id,
        "result": result,
        "number": number,
        "notification_date": notification_date or now,
        "created_at": now,
    }
    notification = InvoiceRepository(session).add_notification(values)
    if notification is None:
        blobs.discard(session, blob)
    return notification


def safe_apply(
    session: UnitOfWork,
    invoice_id: int,
    event: InvoiceEvent,
    *,
    key: str,
    clock: Clock,
    sdi_errors: list[dict[str, str]] | None = None,
    notification: Notification | None = None,
) -> Invoice | None:
    """apply_event for inbound notifications: an illegal move is logged and refused, not raised."""
    try:
        invoice, _ = apply_event(
            session, invoice_id, event, key=key, clock=clock, sdi_errors=sdi_errors, notification=notification
        )
        return invoice
    except IllegalTransition as exc:
        log.warning("invoice %s: refused %s (%s)", invoice_id, event.value, exc)
        return None


def lock_invoice(session: UnitOfWork, invoice_id: int) -> Invoice | None:
    """The invoice locked for update as `apply_event` locks it (bodies not loaded): `apply_event`
    then reads it with no query."""
    return InvoiceRepository(session).get_for_update(invoice_id)


def find_invoice(
    session: UnitOfWork,
    *,
    sdi_id: str | None = None,
    filename: str | None = None,
    direction: str | None = None,
    lock: bool = False,
) -> Invoice | None:
    """One invoice by IdentificativoSdI and/or file name (the SDI side looks invoices up this way).

    A file name needs its direction (the sent and received copies share it). `lock`: locked
    for update as `apply_event` would, which then does not read it again.
    """
    return InvoiceRepository(session).find(sdi_id=sdi_id, filename=filename, direction=direction, lock=lock)


def add_invoice(session: UnitOfWork, invoice: Invoice, now: datetime) -> Invoice:
    """Store a new invoice (e.g. a received one) with the history row of its first state."""
    InvoiceRepository(session).add(invoice)
    record_initial_state(session, invoice, now)
    return invoice


def count_notifications(session: UnitOfWork, invoice_id: int, type_: str) -> int:
    return InvoiceRepository(session).count_notifications(invoice_id, type_)
