"""§2.4 Multiseller, §2.5 page, §2.6 report: contract field names as they are."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

ROME = ZoneInfo("Europe/Rome")


def contract_datetime(value: datetime) -> str:
    """Shared decisions: ISO-8601 with milliseconds and offset, e.g. 2026-02-02T00:00:00.000+01:00."""
    return value.astimezone(ROME).isoformat(timespec="milliseconds")


def kilobytes(size: int) -> int:
    """Stored bytes as KB, rounded up (a 1-byte file uses 1 KB)."""
    return -(-size // 1024)


class Multiseller(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "id": "12",
                "description": "Demo Cliente S.p.A.",
                "countryCode": "IT",
                "vatCode": "09876540015",
                "creationDate": "2026-11-23T09:00:00.000+01:00",
                "status": "ACTIVE",
                "usedSpaceKB": 18,
            }
        }
    )

    id: str  # the delegation's id (docs/multisellers.md)
    description: str
    countryCode: str
    vatCode: str | None
    creationDate: str
    status: str
    usedSpaceKB: int


class MultisellerPage(BaseModel):
    content: list[Multiseller]
    first: bool
    last: bool
    number: int
    numberOfElements: int
    size: int
    totalElements: None = None  # §2.5: declared as the total, the response carries null
    totalPages: int


class YearAndTotal(BaseModel):
    currentYear: int
    total: int


class ReportEntry(BaseModel):
    id: str
    username: str
    parentUsername: str
    description: str
    countryCode: str
    vatCode: str | None
    creationDate: str
    status: str
    notifications: int
    occupiedSpace: int  # KB
    sentInvoices: YearAndTotal
    receivedInvoices: YearAndTotal


class ReportRun(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    processingDate: str
    entries: list[ReportEntry] = Field(alias="list")


class MultisellerReportBody(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "report": [
                    {
                        "processingDate": "2026-11-23T09:01:00.000+01:00",
                        "list": [
                            {
                                "id": "12",
                                "username": "demo-basic",
                                "parentUsername": "demo-premium",
                                "description": "Demo Cliente S.p.A.",
                                "countryCode": "IT",
                                "vatCode": "09876540015",
                                "creationDate": "2026-11-23T09:00:00.000+01:00",
                                "status": "ACTIVE",
                                "notifications": 3,
                                "occupiedSpace": 18,
                                "sentInvoices": {"currentYear": 2, "total": 5},
                                "receivedInvoices": {"currentYear": 1, "total": 1},
                            }
                        ],
                    }
                ]
            }
        }
    )

    report: list[ReportRun]
