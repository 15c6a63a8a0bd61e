"""Invoices in the panel: list, detail, downloads, outcome, upload with dry run (the API's services)."""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, time

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from varco import fatturapa
from varco.core import disposition
from varco.core.bodies import carries_file
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import VarcoError
from varco.core.numbers import MAX_BIGINT, optional_whole_number  # and the {name:id} path convertor
from varco.invoices import filenames
from varco.invoices import service as invoices
from varco.invoices.check_cache import receipt_day
from varco.invoices.models import Invoice
from varco.limits import annual
from varco.panel import reads
from varco.panel.i18n import translator
from varco.panel.web import PanelUser, check_csrf, language, page, redirect
from varco.rendering import service as rendering
from varco.sdi import esito as esiti
from varco.search import archives, params
from varco.search import service as search
from varco.search.schemas import SdiError

router = APIRouter(prefix="/panel", include_in_schema=False)
DIRECTIONS = ("out", "in")
PAGE_SIZE = 20


def _direction(direction: str) -> str:
    if direction not in DIRECTIONS:
        raise HTTPException(404, "Not found")
    return direction


def _day(value: str, end: bool) -> datetime | None:
    if not value:
        return None
    try:
        day = datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise params.SearchInputError(f"invalid date {value!r}: use YYYY-MM-DD") from None
    return datetime.combine(day, time.max if end else time.min, tzinfo=UTC)


def _vat(value: str) -> tuple[str | None, str | None]:
    """The VAT filter as typed: "IT01234560017" is country IT + code 01234560017 (how Italians
    write it; stored invoices keep them apart), "01234560017" a code in any country."""
    typed = "".join(value.split()).upper()
    if re.fullmatch(r"[A-Z]{2}[0-9][0-9A-Z]*", typed):
        return typed[:2], typed[2:]
    return None, typed or None


@router.get("/invoices/{direction}")
def invoice_list(
    request: Request,
    direction: str,
    current: PanelUser,
    session: SessionDep,
    page_number: str = "1",
    start: str = "",
    end: str = "",
    vat: str = "",
    status: str = "",
) -> Response:
    direction = _direction(direction)
    form = {"start": start, "end": end, "vat": vat, "status": status}
    try:
        country, code = _vat(vat)
        other_party = (country, code, None)  # the client of a sent invoice, the supplier of a received one
        nobody = (None, None, None)
        filters = params.filters(
            created=(_day(start, False), _day(end, True)),
            sender=other_party if direction == "in" else nobody,
            receiver=other_party if direction == "out" else nobody,
            status=status or None,
        )
        number = optional_whole_number(page_number, "page", 1, low=1, high=MAX_BIGINT // PAGE_SIZE)
        paging = search.Paging(number, PAGE_SIZE)
        result = search.search(session, current.account, direction, filters, paging, None)
        error = None
    except VarcoError as exc:
        result, error = None, str(exc)
    return page(
        request,
        "invoices.html",
        current,
        status=400 if error else 200,
        direction=direction,
        result=result,
        error=error,
        form=form,
    )


def _find(session: SessionDep, current: PanelUser, direction: str, invoice_id: int):
    return search.find(session, current.account, _direction(direction), search.Ref(invoice_id=invoice_id))


@router.get("/invoices/{direction}/{invoice_id:id}")
def invoice_detail(
    request: Request, direction: str, invoice_id: int, current: PanelUser, session: SessionDep
) -> Response:
    invoice = _find(session, current, direction, invoice_id)
    lang = language(request)
    base = f"/panel/invoices/{direction}/{invoice_id}"
    try:
        rendered = rendering.invoice_html(
            session, invoice, translator(lang), lambda body, index: f"{base}/attachments/{body}/{index}"
        )
    except rendering.RenderingFailed as exc:
        rendered = str(exc)
    outcome = None
    if direction == "in":
        try:
            outcome = esiti.get_esito(session, current.account, invoice.filename)
        except esiti.EsitoNotFound:
            outcome = None
    record = search.detail(session, invoice, include_file=False)
    return page(
        request,
        "invoice.html",
        current,
        direction=direction,
        invoice=invoice,
        record=record,
        error_hints=_error_hints(session, invoice, record.sdiErrors),
        history=reads.state_history(session, invoice),
        notifications=search.notifications(session, invoice),
        rendered=rendered,
        outcome=outcome,
        base=base,
        message=request.query_params.get("message"),
        error=request.query_params.get("error"),
    )


def _error_hints(session: SessionDep, invoice: Invoice, errors: list[SdiError]) -> list[str]:
    """The validator's fix hint for each SDI error (same order; "" when no finding matches).

    SDI errors are stored as code + description; the description quotes the finding's message (NS
    `ListaErrori`, FATRSM212 "code - message"), so the file is checked again, only when it has
    errors, and each error gets the hint of the finding its description quotes (else of its code).
    """
    if not errors:
        return []
    day = receipt_day(invoice.sdi_received_at or invoice.created_at)
    content = reads.stored_file(session, invoice)
    options = fatturapa.CheckOptions(received_date=day, max_bytes=len(content) + 1)
    findings = [f for f in fatturapa.check(content, options).errors if f.hint]
    hints = []
    for error in errors:
        quoted = next((f for f in findings if f.message[:255] in error.description), None)
        same_code = next((f for f in findings if f.code == error.code), None)
        hints.append((quoted or same_code).hint if quoted or same_code else "")
    return hints


@router.get("/invoices/{direction}/{invoice_id:id}/download/{kind}")
def download(direction: str, invoice_id: int, kind: str, current: PanelUser, session: SessionDep) -> Response:
    invoice = _find(session, current, direction, invoice_id)
    stem = filenames.stem(invoice.filename)
    if kind == "file":  # as stored: .xml, or .xml.p7m with its signature
        content, name, media = (
            reads.stored_file(session, invoice),
            invoice.filename,
            "application/octet-stream",
        )
    elif kind == "xml":
        content = archives.unsigned_xml(reads.stored_file(session, invoice))
        name, media = archives.unsigned_name(invoice.filename), "application/xml"
    elif kind == "zip":
        (name, content), media = search.invoice_zip(session, invoice), "application/zip"
    elif kind == "pdd":
        (name, content), media = search.package(session, invoice), "application/zip"
    elif kind == "pdf":
        content, name, media = rendering.invoice_pdf(session, invoice), f"{stem}.pdf", "application/pdf"
    else:
        raise HTTPException(404, "Not found")
    return Response(content, media_type=media, headers={"Content-Disposition": disposition.attachment(name)})


@router.get("/invoices/{direction}/{invoice_id:id}/attachments/{body:id}/{index:id}")
def attachment(
    direction: str, invoice_id: int, body: int, index: int, current: PanelUser, session: SessionDep
) -> Response:
    invoice = _find(session, current, direction, invoice_id)
    found = rendering.attachment(session, invoice, body, index)
    return Response(
        found.content,
        media_type="application/octet-stream",
        headers={"Content-Disposition": disposition.attachment(found.name)},
    )


@router.post("/invoices/in/{invoice_id:id}/esito")
def send_outcome(
    invoice_id: int,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    esito: str = Form(""),
    descrizione: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    invoice = _find(session, current, "in", invoice_id)
    request = esiti.EsitoRequest(
        filename=invoice.filename, sdi_id=invoice.sdi_id or "", esito=esito, descrizione=descrizione or None
    )
    base = f"/panel/invoices/in/{invoice_id}"
    try:
        esiti.send_esito(session, current.account, request, clock)
    except VarcoError as exc:
        session.rollback()
        return redirect(f"{base}?error={_q(str(exc))}")
    return redirect(f"{base}?message=Outcome+sent")


def _q(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text[:300])


@router.get("/upload")
def upload_form(request: Request, current: PanelUser) -> Response:
    return page(request, "upload.html", current, outcome=None)


@router.post("/upload")
@carries_file
def upload(
    request: Request,
    current: PanelUser,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    action: str = Form("dry-run"),
    file: UploadFile | None = File(None),
) -> Response:
    check_csrf(current, csrf_token)
    data = file.file.read(settings.max_upload_bytes + 1) if file is not None and file.filename else b""
    name = file.filename if file is not None else ""
    dry_run = action != "send"
    outcome: dict[str, object] = {"dry_run": dry_run, "name": name, "findings": []}
    try:
        if not dry_run:
            annual.refuse_transmission_if_locked(session, current.account, settings, clock)  # §8.4 as the API
        accepted = invoices.accept_upload(
            session,
            current.account,
            invoices.Upload(
                data_file=base64.b64encode(data).decode() if data else None,
                signed_endpoint=name.lower().endswith(".p7m"),
                dry_run=dry_run,
            ),
            settings,
            clock,
        )
        outcome.update(accepted=True, filename=accepted.filename, invoice_id=accepted.invoice_id)
    except VarcoError as exc:
        outcome.update(accepted=False, code=exc.code, message=str(exc))
    if dry_run and data:
        # The full report (also the asynchronous §7.3 rules) so a file is fixed before it is sent.
        report = fatturapa.check(
            data,
            fatturapa.CheckOptions(
                transmitter_id=settings.transmitter_id,
                max_bytes=settings.max_upload_bytes,
                received_date=receipt_day(clock.now()),
            ),
        )
        outcome["findings"] = report.errors
    status = 200 if outcome.get("accepted") else 400
    return page(request, "upload.html", current, status=status, outcome=outcome)
