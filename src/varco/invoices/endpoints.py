"""§4.3 invoice transmission: POST /services/invoice/upload and /services/invoice/uploadSigned."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request

from varco.auth.dependencies import Caller
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import request_id
from varco.invoices.schemas import UploadRequest, UploadResult
from varco.invoices.upload import Upload, accept_upload

router = APIRouter(tags=["invoice transmission"])
log = logging.getLogger("varco.upload")

_RESPONSES = {413: {"model": UploadResult, "description": "File exceeds the maximum size (errorCode 0033)"}}


def _upload(
    request: Request, body: UploadRequest, signed: bool, caller, session, settings, clock
) -> UploadResult:  # noqa: ANN001
    upload = Upload(
        data_file=body.dataFile,
        signed_endpoint=signed,
        credential=None if signed else body.credential,
        domain=None if signed else body.domain,
        sender_piva=body.senderPIVA,
        skip_extra_schema=body.skipExtraSchema,
        dry_run=body.dryRun,
    )
    accepted = accept_upload(session, caller, upload, settings, clock)
    session.commit()  # here, not after the response is built: on SQLite this frees the write lock sooner
    rid = request_id(request)
    log.info("upload accepted: %s by %s (dry run %s)", accepted.filename, caller.username, upload.dry_run)
    text = "Dry run: checks passed, nothing sent" if upload.dry_run else "Operation done"
    return UploadResult(
        uploadFileName=accepted.filename, errorCode="0000", errorDescription=f"{text} [request {rid}]"
    )


@router.post(
    "/services/invoice/upload",
    response_model=UploadResult,
    responses=_RESPONSES,
    summary="Send an XML invoice not yet digitally signed",
)
def upload(
    request: Request,
    body: UploadRequest,
    caller: Caller,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> UploadResult:
    return _upload(request, body, False, caller, session, settings, clock)


@router.post(
    "/services/invoice/uploadSigned",
    response_model=UploadResult,
    responses=_RESPONSES,
    summary="Send an already signed invoice (CAdES-BES .p7m or XAdES-BES)",
)
def upload_signed(
    request: Request,
    body: UploadRequest,
    caller: Caller,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> UploadResult:
    return _upload(request, body, True, caller, session, settings, clock)
