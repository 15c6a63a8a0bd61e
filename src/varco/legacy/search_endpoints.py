"""Version-1 read paths (decisions.md "Read endpoints"): /services/invoice/{out,in}/... and
/services/notification/{out,in}/... Routes are registered once per direction."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from varco.auth.dependencies import Caller
from varco.core import numbers  # noqa: F401 - registers the {name:id} path convertor
from varco.core.deps import SessionDep, SettingsDep
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.search import params, service
from varco.search.schemas import (
    InvoicePageV1,
    InvoiceRecord,
    NotificationListV1,
    NotificationRecord,
    UnsignedInvoiceRecord,
)
from varco.search.web import ZIP_RESPONSES, json_response, paging, zip_response

router = APIRouter(tags=["version 1: searches"])
Q = Annotated[str | None, Query()]
OK_CODE, OK_TEXT = "0000", "Operation done"


def _invoice_routes(direction: str) -> None:
    base = f"/services/invoice/{direction}"
    what = service.WHAT[direction]

    @router.get(f"{base}/findByUsername", response_model=InvoicePageV1, summary=f"Search {what}s")
    def find_by_username(
        caller: Caller,
        session: SessionDep,
        settings: SettingsDep,
        username: Q = None,
        page: Q = None,
        size: Q = None,
        startDate: Q = None,
        endDate: Q = None,
        countrySender: Q = None,
        vatcodeSender: Q = None,
        fiscalcodeSender: Q = None,
        countryReceiver: Q = None,
        vatcodeReceiver: Q = None,
        fiscalcodeReceiver: Q = None,
    ) -> Response:
        start = params.instant(startDate, "startDate")
        end = params.instant(endDate, "endDate", end_of_day=True)
        params.check_range(start, end, "startDate", "endDate")
        filters = params.filters(
            created=(start, end),
            sender=(countrySender, vatcodeSender, fiscalcodeSender),
            receiver=(countryReceiver, vatcodeReceiver, fiscalcodeReceiver),
        )
        found = service.search(
            session, caller, direction, filters, paging(page, size, settings), params.text(username)
        )
        return json_response(
            InvoicePageV1.model_construct(**dict(found), errorCode=OK_CODE, errorDescription=OK_TEXT)
        )

    @router.get(f"{base}/getByFilename", response_model=InvoiceRecord, summary=f"One {what} by file name")
    def get_by_filename(
        caller: Caller, session: SessionDep, filename: Q = None, includeFile: Q = None, includePdf: Q = None
    ) -> InvoiceRecord:
        name = _required(filename, "filename")
        pdf = params.flag(includePdf, "includePdf")
        invoice = service.find(session, caller, direction, service.Ref(filename=name))
        return service.detail(session, invoice, params.flag(includeFile, "includeFile"), pdf)

    @router.get(f"{base}/getByIdSdi", response_model=InvoiceRecord, summary=f"One {what} by SDI id")
    def get_by_id_sdi(
        caller: Caller, session: SessionDep, idSdi: Q = None, includeFile: Q = None, includePdf: Q = None
    ) -> InvoiceRecord:
        sdi_id = _required(idSdi, "idSdi")
        pdf = params.flag(includePdf, "includePdf")
        invoice = service.find(session, caller, direction, service.Ref(sdi_id=sdi_id))
        return service.detail(session, invoice, params.flag(includeFile, "includeFile"), pdf)

    @router.get(
        f"{base}/getZipByFilename",
        response_class=Response,
        responses=ZIP_RESPONSES,
        summary=f"ZIP of a {what} and its notifications",
    )
    def get_zip_by_filename(caller: Caller, session: SessionDep, filename: Q = None) -> Response:
        invoice = service.find(
            session, caller, direction, service.Ref(filename=_required(filename, "filename"))
        )
        return zip_response(*service.invoice_zip(session, invoice))

    @router.get(
        f"{base}/pdd",
        response_class=Response,
        responses=ZIP_RESPONSES,
        summary=f"Preservation package of a {what}",
    )
    def pdd(caller: Caller, session: SessionDep, invoiceFilename: Q = None, invoiceId: Q = None) -> Response:
        ref = service.exactly_one(
            params.identifier(invoiceId, "invoiceId"),
            params.text(invoiceFilename),
            None,
            "invoiceFilename, invoiceId",
        )
        invoice = service.find(session, caller, direction, ref)
        return zip_response(*service.package(session, invoice))

    if direction == "in":

        @router.get(
            f"{base}/getInvoiceWithUnsignedFile",
            response_model=UnsignedInvoiceRecord,
            summary="A received invoice with its XML without signature",
        )
        def get_invoice_with_unsigned_file(
            caller: Caller,
            session: SessionDep,
            invoiceId: Q = None,
            filename: Q = None,
            includeFile: Q = None,
        ) -> UnsignedInvoiceRecord:
            ref = service.exactly_one(
                params.identifier(invoiceId, "invoiceId"), params.text(filename), None, "invoiceId, filename"
            )
            invoice = service.find(session, caller, direction, ref)
            return service.unsigned_detail(session, invoice, params.flag(includeFile, "includeFile"))

    @router.get(f"{base}/{{invoiceId:id}}", response_model=InvoiceRecord, summary=f"One {what} by id")
    def get_by_id(
        invoiceId: int, caller: Caller, session: SessionDep, includeFile: Q = None, includePdf: Q = None
    ) -> InvoiceRecord:
        pdf = params.flag(includePdf, "includePdf")
        invoice = service.find(session, caller, direction, service.Ref(invoice_id=invoiceId))
        return service.detail(session, invoice, params.flag(includeFile, "includeFile"), pdf)


def _notification_routes(direction: str) -> None:
    base = f"/services/notification/{direction}"
    what = service.WHAT[direction]

    @router.get(
        f"{base}/getByFilename", response_model=NotificationRecord, summary="One notification by file name"
    )
    def notification_by_filename(
        caller: Caller, session: SessionDep, filename: Q = None
    ) -> NotificationRecord:
        return service.notification(session, caller, direction, _required(filename, "filename"))

    @router.get(
        f"{base}/getByInvoiceFilename",
        response_model=NotificationListV1,
        summary=f"Notifications of a {what}",
    )
    def notifications_by_invoice_filename(
        caller: Caller, session: SessionDep, invoiceFilename: Q = None
    ) -> NotificationListV1:
        ref = service.Ref(filename=_required(invoiceFilename, "invoiceFilename"))
        return _notification_list(session, service.find(session, caller, direction, ref))

    @router.get(
        f"{base}/{{invoiceId:id}}", response_model=NotificationListV1, summary=f"Notifications of a {what}"
    )
    def notifications_by_invoice_id(
        invoiceId: int, caller: Caller, session: SessionDep
    ) -> NotificationListV1:
        return _notification_list(
            session, service.find(session, caller, direction, service.Ref(invoice_id=invoiceId))
        )


def _notification_list(session: UnitOfWork, invoice: Invoice) -> NotificationListV1:
    found = service.notifications(session, invoice)
    return NotificationListV1(
        errorCode=OK_CODE, errorDescription=OK_TEXT, count=len(found), notifications=found
    )


def _required(value: str | None, name: str) -> str:
    text = params.text(value)
    if text is None:
        raise params.SearchInputError(f"{name} is required")
    return text


for _direction in ("out", "in"):
    _invoice_routes(_direction)
    _notification_routes(_direction)
