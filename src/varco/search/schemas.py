"""Response shapes of the read endpoints, field for field as decisions.md "Read endpoints" fixes them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RECORD_EXAMPLE = {
    "id": "42",
    "filename": "IT05555550028_0000A.xml",
    "idSdi": "1234567890",
    "sender": {
        "description": "ACME S.r.l.",
        "countryCode": "IT",
        "vatCode": "01234560017",
        "fiscalCode": None,
    },
    "receiver": {
        "description": "Cliente S.p.A.",
        "countryCode": "IT",
        "vatCode": "09876540015",
        "fiscalCode": None,
    },
    "invoiceType": "FPR12",
    "docType": "out",
    "username": "acme",
    "creationDate": "2026-11-23T09:00:00.000+01:00",
    "lastUpdate": "2026-11-23T09:05:00.000+01:00",
    "pddAvailable": False,
    "file": None,
    "pdfFile": None,
    "channelGroup": None,
    "shopName": None,
    "sdiErrors": [],
    "invoices": [
        {
            "invoiceDate": "2026-02-02T00:00:00.000+01:00",
            "number": "123",
            "documentType": "TD01",
            "status": "Consegnata",
            "statusDescription": "Delivered to the recipient (RC)",
            "totalDocument": 122.0,
            "totalVat": 22.0,
            "netPayable": 122.0,
        }
    ],
}


class Party(BaseModel):
    description: str | None
    countryCode: str | None
    vatCode: str | None
    fiscalCode: str | None


class SdiError(BaseModel):
    code: str
    description: str


class InvoiceLine(BaseModel):
    """One invoice of the file (a batch holds several)."""

    invoiceDate: str | None
    number: str | None
    documentType: str | None
    status: str = Field(description="State label, e.g. Consegnata")
    statusDescription: str | None
    totalDocument: float | None
    totalVat: float | None
    netPayable: float | None


class InvoiceRecord(BaseModel):
    """One SDI file."""

    model_config = ConfigDict(json_schema_extra={"example": RECORD_EXAMPLE})

    id: str
    filename: str
    idSdi: str | None
    sender: Party
    receiver: Party
    invoiceType: str
    docType: Literal["out", "in"]
    username: str | None
    creationDate: str
    lastUpdate: str
    pddAvailable: bool
    file: str | None = Field(description="Base64 of the stored file; only when asked (includeFile)")
    pdfFile: str | None = Field(description="Base64 PDF rendering (detail with includePdf=true), else null")
    channelGroup: str | None = Field(
        description="Sales channel group of the invoice in the real service; always null: varco has no sales "
        "channels"
    )
    shopName: str | None = Field(
        description="Shop the invoice came from in the real service; always null: varco has no shops"
    )
    sdiErrors: list[SdiError]
    invoices: list[InvoiceLine]


class UnsignedInvoiceRecord(InvoiceRecord):
    unsignedFile: str | None = Field(description="Base64 of the invoice XML without the signature")
    signed: bool


class InvoicePage(BaseModel):
    content: list[InvoiceRecord]
    first: bool
    last: bool
    number: int = Field(description="The 1-based page asked for")
    numberOfElements: int
    size: int
    totalElements: int = Field(description="Number of files found")
    totalPages: int


class InvoicePageV1(InvoicePage):
    errorCode: str
    errorDescription: str | None


class NotificationRecord(BaseModel):
    date: str
    docType: str = Field(description="RC NS MC NE DT AT MT EC SE")
    file: str = Field(description="Base64 of the SDI message")
    filename: str
    invoiceId: str
    notificationDate: str
    number: str | None
    result: str | None = Field(description="EC01 | EC02 | null")


class NotificationList(BaseModel):
    count: int
    notifications: list[NotificationRecord]


class NotificationListV1(NotificationList):
    errorCode: str
    errorDescription: str | None


class DownloadRequest(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "example": {"ids": ["42", "43"], "downloadTypes": ["XML", "NOTIFICATIONS", "REPORT"]}
        },
    )

    ids: list[str | int] | None = None
    downloadTypes: list[str] | None = Field(
        default=None,
        description="Any of XML, P7M, NOTIFICATIONS, PDF, REPORT, PDD (preservation packages), in any case; "
        "also DownloadXml, DownloadP7m, DownloadPdf, DownloadNotifications, ReportExcel, DownloadArchiving",
    )


class DownloadAccepted(BaseModel):
    jobId: str


class DownloadStatus(BaseModel):
    jobId: str
    status: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"]
    progress: int = Field(description="0-100")
    file: str | None = Field(description="Base64 of the ZIP once COMPLETED")
    error: str | None
