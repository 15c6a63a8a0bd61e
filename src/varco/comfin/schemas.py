"""§2.7 bodies, with the contract's field names (v2); the v1 shapes live in `varco.legacy`."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from varco.comfin.errors import RESULT_TEXT
from varco.comfin.models import ComfinRequest
from varco.core.blobs import Blob

ROME = ZoneInfo("Europe/Rome")


class CreateRequest(BaseModel):
    """§2.7 create request; everything optional here so that a missing field is a §7.4 code, not a 422."""

    model_config = ConfigDict(extra="ignore")

    userId: str | None = None
    comunicationType: str | None = None
    dataFile: str | None = None


class CreateResponse(BaseModel):
    requestId: str


class InfoResponse(BaseModel):
    result: str
    notifyResult: str | None
    elaboratedResult: str | None
    receiptTimestamp: str | None
    fileId: str | None
    fileName: str | None
    pddAvailable: bool
    status: str


def receipt_timestamp(request: ComfinRequest) -> str | None:
    """decisions.md: `yyyy-MM-dd HH:mm:ss`, Italian local time (docs/comfin.md)."""
    return request.receipt_at.astimezone(ROME).strftime("%Y-%m-%d %H:%M:%S") if request.receipt_at else None


def info_fields(request: ComfinRequest, notify_b64: str | None) -> dict[str, object]:
    """The info fields shared by v2 and v1 (v1 renames fileId and drops status)."""
    return {
        "result": request.result,
        "notifyResult": notify_b64,
        "elaboratedResult": request.elaborated_result,
        "receiptTimestamp": receipt_timestamp(request),
        "fileId": request.file_id,
        "fileName": request.file_name,
        "pddAvailable": request.pdd_available,
        "status": request.status,
    }


def result_text(request: ComfinRequest) -> str:
    text = RESULT_TEXT.get(request.result, request.result)
    return f"{text}: {request.error}" if request.error else text


__all__ = ["Blob", "CreateRequest", "CreateResponse", "InfoResponse", "info_fields", "result_text"]
