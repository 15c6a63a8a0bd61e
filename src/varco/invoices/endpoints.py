"""§4.3 invoice transmission: POST /services/invoice/upload and /services/invoice/uploadSigned."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from functools import partial

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from varco.accounts.models import Account
from varco.auth.dependencies import authenticated
from varco.core import idempotency, metrics
from varco.core.bodies import carries_file
from varco.core.clock import current_clock
from varco.core.db import reading
from varco.core.deps import SessionDep
from varco.core.errors import Shape, VarcoError, request_id, shaped_router
from varco.core.requests import annotate
from varco.core.turns import run_writing
from varco.core.uow import UnitOfWork
from varco.invoices.schemas import UploadRequest, UploadResult
from varco.invoices.service import Checked, Upload, UploadRefused, check_upload, store_upload
from varco.settings import get_settings

router = shaped_router(Shape.UPLOAD, tags=["invoice transmission"])  # §2.8

# Bodies up to this size are checked on the event loop when the database is free (core/turns.py):
# a few milliseconds at most. Typical invoices weigh 5-30 KB; larger files go to the threadpool.
_BRIEF_BODY = 64 * 1024


def _brief(raw: bytes) -> bool:
    """A few milliseconds on the event loop, waiting on nothing else: a small body, in embedded
    mode (with Redis the §8 guard is a network call), not asking for the automatic signature (its
    key and the CAdES signature take tens of milliseconds). Signed files (uploadSigned) go to the
    threadpool."""
    # `\u` escapes could spell "credential" past the check: such a body goes to the threadpool.
    plain = b"credential" not in raw and b"\\u" not in raw
    return len(raw) <= _BRIEF_BODY and plain and get_settings().embedded


_RESPONSES = {
    409: {
        "model": UploadResult,
        "description": "Idempotency-Key reused for another request (errorCode 0409)",
    },
    413: {"model": UploadResult, "description": "File exceeds the maximum size (errorCode 0033)"},
}


@dataclass(frozen=True)
class _Read:
    """What the upload's reads and checks decided, for its write part."""

    caller: Account
    checked: Checked
    key: str | None
    route: str
    body_sha256: str


def _read(request: Request, raw: bytes, signed: bool, session: UnitOfWork) -> UploadResult | _Read:
    """The reads and checks of an upload, before the write lock (core/turns.py; this is the path
    clients hit hardest): the bearer check and §8 guard first, as `Caller` would run them, then the
    body and the checks. An idempotent request answered before gets that answer.
    Settings and clock are read here, not injected: each dependency costs the hottest path a hop."""
    settings, clock = get_settings(), current_clock()
    route = "uploadSigned" if signed else "upload"
    # One transaction for the request: on SQLite these reads take no lock (see reading).
    with reading(session, then_write=True, begin=False):
        caller = authenticated(request, session, clock)
        body = _body(raw)
        key = idempotency.key_of(request)
        body_sha256 = idempotency.digest(body.model_dump_json()) if key else ""
        if key and (first := idempotency.replay(session, caller.id, route, key, body_sha256, clock)):
            return UploadResult.model_validate(first)
        upload = Upload(
            data_file=body.dataFile,
            signed_endpoint=signed,
            credential=None if signed else body.credential,
            domain=None if signed else body.domain,
            sender_piva=body.senderPIVA,
            skip_extra_schema=body.skipExtraSchema,
            dry_run=body.dryRun,
        )
        checked = check_upload(session, caller, upload, settings)
    return _Read(caller, checked, key, route, body_sha256)


def _write(request: Request, session: UnitOfWork, read: _Read) -> UploadResult:
    """The checks that need the write lock, the store, the commit."""
    settings, clock = get_settings(), current_clock()
    caller, key, route = read.caller, read.key, read.route
    if key and (first := idempotency.claim(session, caller.id, route, key, read.body_sha256, clock)):
        return UploadResult.model_validate(first)  # a copy sent at the same time went first
    accepted = store_upload(session, caller, read.checked, settings, clock)
    text = "Dry run: checks passed, nothing sent" if read.checked.upload.dry_run else "Operation done"
    result = UploadResult(
        uploadFileName=accepted.filename,
        errorCode="0000",
        errorDescription=f"{text} [request {request_id(request)}]",
    )
    if key:
        idempotency.answered(session, caller.id, route, key, result.model_dump())
    session.commit()  # here, not after the response is built: on SQLite this frees the write lock sooner
    # In the request's line.
    annotate(request.scope, file_name=accepted.filename, dry_run=read.checked.upload.dry_run)
    return result


def _body(raw: bytes) -> UploadRequest:
    """The JSON body, parsed here rather than by FastAPI so that it comes after the bearer check.
    One status per kind of mistake: a body that is not a JSON object is a syntax error (§7.1: 400
    0002); a JSON object whose fields are missing or of the wrong type is the synchronous check
    "dataFile wrong format or missing" of §7.2 (200 0002, like `{}`), naming the field."""
    if not raw.strip():
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required"}])
    try:
        return UploadRequest.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if any(not e["loc"] for e in errors):  # not JSON, or JSON but not an object
            raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in errors]) from None
        fields = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
        raise UploadRefused("0002", f"Input parameter error: {fields}") from None


# The body is read by the endpoint (see _body): described here for the OpenAPI document.
_BODY = {
    "security": [{"bearer": []}],  # the endpoint checks the bearer token itself (see _upload)
    "parameters": [idempotency.OPENAPI_PARAMETER],
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": UploadRequest.model_json_schema()}},
    },
}


@router.post(
    "/services/invoice/upload",
    response_model=UploadResult,
    responses=_RESPONSES,
    summary="Send an XML invoice not yet digitally signed",
    openapi_extra=_BODY,
)
@carries_file
async def upload(request: Request, session: SessionDep) -> UploadResult:
    return await _counted(_read_and_upload(request, session, signed=False))


@router.post(
    "/services/invoice/uploadSigned",
    response_model=UploadResult,
    responses=_RESPONSES,
    summary="Send an already signed invoice (CAdES-BES .p7m or XAdES-BES)",
    openapi_extra=_BODY,
)
@carries_file
async def upload_signed(request: Request, session: SessionDep) -> UploadResult:
    return await _counted(_read_and_upload(request, session, signed=True))


async def _read_and_upload(request: Request, session: UnitOfWork, *, signed: bool) -> UploadResult:
    raw = await request.body()
    brief = not signed and _brief(raw)
    return await run_writing(
        session,
        partial(_read, request, raw, signed, session),
        partial(_write, request, session),
        done=UploadResult,
        brief=brief,
    )


async def _counted(upload: Awaitable[UploadResult]) -> UploadResult:
    """The upload's outcome by the errorCode its answer carries (/metrics): 0000 accepted, the
    §7.2 code of a refused file, 0033 too large, 0429 a limit, `unauthorized` without a token."""
    try:
        result = await upload
    except Exception as exc:
        metrics.count(metrics.UPLOADS, _code_of(exc))
        raise
    metrics.count(metrics.UPLOADS, result.errorCode)
    return result


def _code_of(exc: Exception) -> str:
    if isinstance(exc, VarcoError):
        return exc.code
    if isinstance(exc, RequestValidationError):
        return "0002"
    if isinstance(exc, HTTPException) and exc.status_code == 413:  # the body limit (core/bodies.py)
        return "0033"
    return "0001"
