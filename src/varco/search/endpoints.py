"""Version-2 read paths (decisions.md "Read endpoints"): /api/v2/invoices-{out,in}[/...], bulk downloads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

from varco.auth.dependencies import Caller
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.search import downloads, params, service
from varco.search.schemas import (
    DownloadAccepted,
    DownloadRequest,
    DownloadStatus,
    InvoicePage,
    InvoiceRecord,
    NotificationList,
    NotificationRecord,
    UnsignedInvoiceRecord,
)
from varco.search.web import ZIP_RESPONSES, json_response, paging, zip_response
from varco.settings import Settings

router = APIRouter(tags=["search (version 2)"])
Q = Annotated[str | None, Query()]
IDS = "id, filename, idSdi"


def _window(start_raw: str | None, end_raw: str | None, settings: Settings) -> tuple[datetime, datetime]:
    """decisions.md: creationStartDate and creationEndDate are required, at most 10 days apart."""
    if params.text(start_raw) is None or params.text(end_raw) is None:
        raise params.SearchInputError(
            "creationStartDate and creationEndDate are both required "
            f"(a window of at most {settings.search_window.days} days)"
        )
    start = params.instant(start_raw, "creationStartDate")
    end = params.instant(end_raw, "creationEndDate", end_of_day=True)
    params.check_range(start, end, "creationStartDate", "creationEndDate")
    assert start is not None and end is not None
    if end - start > settings.search_window:
        raise params.SearchInputError(
            f"the creation window {start_raw}..{end_raw} is longer than {settings.search_window.days} "
            f"days; narrow creationStartDate..creationEndDate to at most {settings.search_window.days} days"
        )
    return start, end


def _modified(start_raw: str | None, end_raw: str | None) -> tuple[datetime | None, datetime | None]:
    start = params.instant(start_raw, "modifiedStartDate")
    end = params.instant(end_raw, "modifiedEndDate", end_of_day=True)
    if (start is None) != (end is None):
        raise params.SearchInputError("give both modifiedStartDate and modifiedEndDate, or neither")
    params.check_range(start, end, "modifiedStartDate", "modifiedEndDate")
    return start, end


def _routes(direction: str) -> None:
    base = f"/api/v2/invoices-{direction}"
    what = service.WHAT[direction]
    detail_model = UnsignedInvoiceRecord if direction == "in" else InvoiceRecord

    def ref(id: str | None, filename: str | None, idSdi: str | None) -> service.Ref:
        return service.exactly_one(
            params.identifier(id, "id"), params.text(filename), params.text(idSdi), IDS
        )

    @router.get(
        base, response_model=InvoicePage, summary=f"Search {what}s (creation window of at most 10 days)"
    )
    def search(
        caller: Caller,
        session: SessionDep,
        settings: SettingsDep,
        creationStartDate: Q = None,
        creationEndDate: Q = None,
        page: Q = None,
        size: Q = None,
        senderCountry: Q = None,
        senderVatcode: Q = None,
        senderFiscalcode: Q = None,
        receiverCountry: Q = None,
        receiverVatcode: Q = None,
        receiverFiscalcode: Q = None,
        status: Q = None,
        documentType: Q = None,
        modifiedStartDate: Q = None,
        modifiedEndDate: Q = None,
        username: Q = None,
    ) -> Response:
        created = _window(creationStartDate, creationEndDate, settings)
        modified = _modified(modifiedStartDate, modifiedEndDate)
        filters = params.filters(
            created=created,
            modified=modified,
            sender=(senderCountry, senderVatcode, senderFiscalcode),
            receiver=(receiverCountry, receiverVatcode, receiverFiscalcode),
            status=status,
            doc_type=documentType,
        )
        found = service.search(
            session, caller, direction, filters, paging(page, size, settings), params.text(username)
        )
        return json_response(found)

    @router.get(f"{base}/detail", response_model=detail_model, summary=f"One {what} (exactly one of {IDS})")
    def detail(
        caller: Caller,
        session: SessionDep,
        id: Q = None,  # the contract's name
        filename: Q = None,
        idSdi: Q = None,
        includeFile: Q = None,
        includePdf: Q = None,
        includeUnsignedFile: Q = None,
    ) -> InvoiceRecord:
        invoice = service.find(session, caller, direction, ref(id, filename, idSdi))
        include_file = params.flag(includeFile, "includeFile")
        pdf = params.flag(includePdf, "includePdf")
        if direction == "in":
            unsigned = params.flag(includeUnsignedFile, "includeUnsignedFile")
            return service.unsigned_detail(
                session, invoice, include_file, include_unsigned=unsigned, include_pdf=pdf
            )
        return service.detail(session, invoice, include_file, pdf)

    @router.get(
        f"{base}/zip",
        response_class=Response,
        responses=ZIP_RESPONSES,
        summary=f"ZIP of a {what} and its notifications",
    )
    def zip_file(
        caller: Caller,
        session: SessionDep,
        id: Q = None,
        filename: Q = None,
        idSdi: Q = None,
    ) -> Response:
        invoice = service.find(session, caller, direction, ref(id, filename, idSdi))
        return zip_response(*service.invoice_zip(session, invoice))

    @router.get(
        f"{base}/pdd",
        response_class=Response,
        responses=ZIP_RESPONSES,
        summary=f"Preservation package of a {what}",
    )
    def pdd(
        caller: Caller,
        session: SessionDep,
        id: Q = None,
        filename: Q = None,
        idSdi: Q = None,
    ) -> Response:
        invoice = service.find(session, caller, direction, ref(id, filename, idSdi))
        return zip_response(*service.package(session, invoice))

    @router.get(
        f"{base}/notifications", response_model=NotificationList, summary=f"Notifications of a {what}"
    )
    def notifications(
        caller: Caller,
        session: SessionDep,
        id: Q = None,
        filename: Q = None,
    ) -> NotificationList:
        invoice = service.find(
            session,
            caller,
            direction,
            service.exactly_one(params.identifier(id, "id"), params.text(filename), None, "id, filename"),
        )
        found = service.notifications(session, invoice)
        return NotificationList(count=len(found), notifications=found)

    @router.get(
        f"{base}/notifications/detail",
        response_model=NotificationRecord,
        summary="One notification by file name",
    )
    def notification_detail(caller: Caller, session: SessionDep, filename: Q = None) -> NotificationRecord:
        name = params.text(filename)
        if name is None:
            raise params.SearchInputError("filename is required")
        return service.notification(session, caller, direction, name)

    @router.post(
        f"{base}/download", response_model=DownloadAccepted, summary=f"Start a bulk download of {what}s"
    )
    def download(
        body: DownloadRequest, caller: Caller, session: SessionDep, settings: SettingsDep, clock: ClockDep
    ) -> DownloadAccepted:
        job = downloads.request_download(
            session, caller, direction, body.ids, body.downloadTypes, settings, clock
        )
        return DownloadAccepted(jobId=job.id)


for _direction in ("out", "in"):
    _routes(_direction)


@router.get("/api/v2/download/{jobId}", response_model=DownloadStatus, summary="State of a bulk download")
def download_status(jobId: str, caller: Caller, session: SessionDep) -> DownloadStatus:
    return downloads.status(session, caller, jobId)
