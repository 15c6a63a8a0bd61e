"""§4.2 financial communications, version 2 (bearer token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Path, Request, Response

from varco.auth.dependencies import Caller
from varco.comfin import service
from varco.comfin.ranges import zip_download
from varco.comfin.schemas import CreateRequest, CreateResponse, InfoResponse, info_fields
from varco.core import idempotency
from varco.core.bodies import carries_file
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import shaped_router

router = shaped_router(too_large_code="AR03", tags=["financial communications"])  # §7.4
# §4.2 names the path parameter requestId.
RequestId = Annotated[
    str, Path(alias="requestId", description="The requestId answered by POST /api/v2/comfin (§2.7)")
]


@router.post(
    "/api/v2/comfin",
    response_model=CreateResponse,
    summary="Send a financial-communication request to the Exchange System",
    openapi_extra={"parameters": [idempotency.OPENAPI_PARAMETER]},
    responses={409: {"description": "Idempotency-Key reused for another request (errorCode 0409)"}},
)
@carries_file
def create(
    request: Request,
    body: CreateRequest,
    caller: Caller,
    session: SessionDep,
    clock: ClockDep,
    settings: SettingsDep,
) -> CreateResponse:
    key = idempotency.key_of(request)  # varco's addition: a blind retry creates nothing twice
    body_sha256 = idempotency.digest(body.model_dump_json()) if key else ""
    if key and (
        first := idempotency.replay(session, caller.id, "comfin", key, body_sha256, clock)
        or idempotency.claim(session, caller.id, "comfin", key, body_sha256, clock)
    ):
        return CreateResponse.model_validate(first)
    new = service.NewRequest(body.userId, body.comunicationType, body.dataFile)
    created = service.create(session, caller, new, clock, settings)
    result = CreateResponse(requestId=created.request_id)
    if key:
        idempotency.answered(session, caller.id, "comfin", key, result.model_dump())
    return result


@router.get(
    "/api/v2/comfin/{requestId}",
    response_model=InfoResponse,
    summary="Query the state of a financial-communication request",
)
def info(request_id: RequestId, caller: Caller, session: SessionDep) -> InfoResponse:
    found = service.get_visible(session, caller, request_id)
    return InfoResponse(**info_fields(found, service.notify_result(session, found)))  # type: ignore[arg-type]


@router.get(
    "/api/v2/comfin/{requestId}/pdd",
    response_class=Response,
    summary="Download the preservation package of a financial-communication request",
    responses={
        200: {"content": {"application/zip": {}}},
        206: {"description": "A byte range"},
        404: {},
        416: {},
    },
)
def pdd(
    request_id: RequestId,
    caller: Caller,
    session: SessionDep,
    range_: str | None = Header(None, alias="Range"),
) -> Response:
    name, content = service.package_of(session, caller, request_id)
    return zip_download(name, content, range_)
