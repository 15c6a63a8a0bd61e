"""The asynchronous stage (§3.1, §7.3, §7.3a): checks, then hand-off to the SDI channel (state 3)
or Processing Error (state 2). Idempotent: it acts only on an invoice still in state 1."""

from __future__ import annotations

import logging

from varco import fatturapa
from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.core import blobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.invoices import service as invoices
from varco.invoices.check_cache import checks, stage_options
from varco.invoices.models import Invoice
from varco.invoices.repository import InvoiceRepository
from varco.invoices.states import InvoiceEvent, InvoiceState
from varco.sdi import channels

log = logging.getLogger("varco.processing")

# §7.3a messages
MESSAGES = {
    "FATRSM201": "Formal validation error of the invoice file; check the XML",
    "FATRSM202": "Supplier VAT number or country missing",
    "FATRSM205": "VAT number not linked to a user of the service",
    "FATRSM208": "Username not found",
    "FATRSM212": "Validation error",
    "FATRSM217": "Username not found",
    "FATRSM218": "Delegated user not found",
    "FATRSM302": "Signature check failed or signature wrong",
    "FATRSM401": "XML file empty",
    "FATRSM403": "User disabled",
}


def _error(code: str, detail: str | None = None) -> dict[str, str]:
    return {"code": code, "description": f"{MESSAGES[code]}: {detail}" if detail else MESSAGES[code]}


def process_invoice(session: UnitOfWork, invoice_id: int, clock: Clock) -> None:
    """Run the asynchronous checks of one accepted invoice and move it to state 2 or 3."""
    invoice = InvoiceRepository(session).get_for_update(invoice_id)
    if invoice is None or not to_process(invoice):
        return  # already processed (or handed to the channel): a duplicate wake-up changes nothing
    # Nothing read below depends on the invoice's pending changes: they go in one UPDATE at the end.
    with session.no_autoflush:
        _process(session, invoice, clock)


def to_process(invoice: Invoice) -> bool:
    """Still in state 1 and not handed to the channel."""
    return invoice.state == InvoiceState.PRESA_IN_CARICO and not invoice.handed_over_at


def _process(session: UnitOfWork, invoice: Invoice, clock: Clock) -> None:
    content = blobs.content(session, invoice.blob_id)
    errors = account_errors(session, invoice) or file_errors(
        invoice.skip_extra_schema, content, clock, checks(session)
    )
    if errors:
        invoices.apply_event(
            session, invoice.id, InvoiceEvent.CHECKS_FAILED, key="process", clock=clock, sdi_errors=errors
        )
        return
    # The channel records what to send; it goes out after this transaction commits. With SDICoop
    # the IdentificativoSdI (and state 3) come with the SDI's answer (invoices.record_sent).
    invoice.handed_over_at = clock.now()
    sdi_id = channels.get_channel().send_invoice(session, invoice, content, clock)
    if sdi_id is not None:
        invoices.record_sent(session, invoice, sdi_id, clock.now(), clock)


def account_errors(session: UnitOfWork, invoice: Invoice) -> list[dict[str, str]]:
    """The accounts may have changed since the upload: re-check them (FATRSM205/208/217/218/403)."""
    uploader = accounts.get(session, invoice.uploaded_by_id) if invoice.uploaded_by_id else None
    taxpayer = accounts.get(session, invoice.account_id)
    if uploader is None:
        return [_error("FATRSM208")]
    if uploader.is_disabled:
        return [_error("FATRSM403", uploader.username)]
    if taxpayer is None:
        return [_error("FATRSM217")]
    if not taxpayer.vat_code:
        return [_error("FATRSM205", f"{taxpayer.username} has no VAT number")]
    if taxpayer.id != uploader.id and not _still_delegated(session, uploader, taxpayer):
        return [_error("FATRSM218", f"{taxpayer.username} no longer delegates {uploader.username}")]
    if taxpayer.is_disabled:
        return [_error("FATRSM403", taxpayer.username)]
    return []


def _still_delegated(session: UnitOfWork, uploader: Account, taxpayer: Account) -> bool:
    try:
        return (
            accounts.taxpayer_for(session, uploader, taxpayer.country_code, taxpayer.vat_code).id
            == taxpayer.id
        )
    except accounts.DelegationInvalid:
        return False


def file_errors(
    skip_extra_schema: bool, content: bytes, clock: Clock, cache: fatturapa.CheckCache
) -> list[dict[str, str]]:
    """The file checks the service runs after accepting it (§7.3a)."""
    options = stage_options(skip_extra_schema, content, clock)
    report = cache.sync(content, options)
    if not report.accepted:  # the file passed at upload; only a changed rule set gets here
        first = report.errors[0]
        return [_error("FATRSM401" if first.code == "FATRSM401" else "FATRSM201", first.message)]
    summary = report.summary
    if summary is None or not summary.supplier.vat_code or not summary.supplier.country:
        return [_error("FATRSM202")]
    findings = cache.async_(report, options)
    errors = []
    for finding in findings:
        if finding.code == "FATRSM302":
            errors.append(_error("FATRSM302", finding.message))
        else:  # §7.3a: extra-schema findings are FATRSM212 as "code - message"
            errors.append({"code": "FATRSM212", "description": finding.upload_text})
    return errors
