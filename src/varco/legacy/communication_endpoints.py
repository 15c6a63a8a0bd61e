"""§9 version-1 financial communications: credentials in the body, same services as version 2.

Invoice upload v1 is served by `varco.invoices.endpoints` unchanged (v1 clients simply send no
`dryRun`). The multiseller report and the annual-lock rule do not exist in v1 (§9).
"""

from __future__ import annotations

from fastapi import Header, Request, Response
from fastapi.responses import JSONResponse

from varco.accounts.models import Account
from varco.audit import service as audit
from varco.auth import service as auth
from varco.auth.dependencies import bearer_token
from varco.comfin import service
from varco.comfin.errors import RESULT_TEXT, ComfinRefused
from varco.comfin.ranges import zip_download
from varco.comfin.schemas import info_fields, result_text
from varco.core.bodies import carries_file
from varco.core.clock import Clock
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import InvalidGrant, OAuthError, Unauthorized, VarcoError, shaped_router
from varco.legacy.schemas import (
    CreateTransmission,
    CreateTransmissionResult,
    TransmissionInfo,
    TransmissionQuery,
    V1Credentials,
)
from varco.limits import credentials
from varco.limits import service as limits

router = shaped_router(
    too_large_code="AR03", prefix="/services/ClientRequest", tags=["version 1: communications"]
)


class V1AccessDenied(VarcoError):
    """§7.4 AR02: the body credentials are wrong (the pdd call answers a status, not a body)."""

    status, code = 401, "AR02"


def _account(request: Request, body: V1Credentials, session: SessionDep, clock: Clock) -> Account:
    """The body's userName/password (§9); without a password, a valid bearer token is accepted."""
    try:
        if body.userName and body.password:
            credentials.refuse_if_guessing(request, body.userName, clock)  # 429, as for sign-in
            try:
                account = auth.check_credentials(session, body.userName, body.password, clock)
            except InvalidGrant as refused:
                if isinstance(refused, auth.WrongCredentials):
                    credentials.count_failure(request, body.userName, clock)
                auth.audit_refusal(session, refused, body.userName, audit.actor_of(request), clock, "v1")
                raise
        elif (token := bearer_token(request)) is not None:
            account = auth.authenticate(session, token, clock)
        else:
            raise ComfinRefused("AR02", "userName and password are required")
    except (OAuthError, Unauthorized) as exc:
        raise ComfinRefused("AR02", str(exc)) from None
    request.state.account_id = account.id
    limits.guard(request, session, account, clock)  # §8.3 hourly bucket, as for bearer calls
    return account


@router.post(
    "/CreateTransmissionRequest",
    response_model=CreateTransmissionResult,
    summary="Create communication (version 1): send a request to the Exchange System",
)
@carries_file
def create_transmission(
    body: CreateTransmission, request: Request, session: SessionDep, clock: ClockDep, settings: SettingsDep
) -> CreateTransmissionResult:
    try:
        caller = _account(request, body, session, clock)
        new = service.NewRequest(body.userID, body.comunicationType, body.dataFile)
        created = service.create(session, caller, new, clock, settings)
    except ComfinRefused as exc:  # §9: the code in the body, requestID empty
        session.rollback()
        refused = CreateTransmissionResult(errorCode=exc.code, errorDescription=str(exc), requestID="")
        if exc.status == 413:  # §8.1: a file over the limit is 413 in every version
            return JSONResponse(refused.model_dump(), status_code=413)  # type: ignore[return-value]
        return refused
    return CreateTransmissionResult(errorCode="", errorDescription="", requestID=created.request_id)


@router.post(
    "/GetTransmissionInfoRequest",
    response_model=TransmissionInfo,
    summary="Communication status (version 1): query a request's state",
)
def transmission_info(
    body: TransmissionQuery, request: Request, session: SessionDep, clock: ClockDep
) -> TransmissionInfo:
    try:
        caller = _account(request, body, session, clock)
        found = service.get_visible(session, caller, body.requestID)
    except ComfinRefused as exc:
        return TransmissionInfo(
            result=exc.code,
            error=str(exc),
            notifyResult=None,
            elaboratedResult=None,
            receiptTimestamp=None,
            fileID=None,
            fileName=None,
            pddAvailable=False,
        )
    fields = info_fields(found, service.notify_result(session, found))
    return TransmissionInfo(
        result=found.result,
        error=result_text(found) if found.result in RESULT_TEXT else "",
        notifyResult=fields["notifyResult"],  # type: ignore[arg-type]
        elaboratedResult=found.elaborated_result,
        receiptTimestamp=fields["receiptTimestamp"],  # type: ignore[arg-type]
        fileID=found.file_id,
        fileName=found.file_name,
        pddAvailable=found.pdd_available,
    )


@router.post(
    "/pdd",
    response_class=Response,
    summary="Preservation package (version 1): download a request's preservation package",
    responses={200: {"content": {"application/zip": {}}}, 206: {}, 401: {}, 404: {}, 416: {}},
)
def pdd(
    body: TransmissionQuery,
    request: Request,
    session: SessionDep,
    clock: ClockDep,
    range_: str | None = Header(None, alias="Range"),
) -> Response:
    try:
        caller = _account(request, body, session, clock)
    except ComfinRefused as exc:
        raise V1AccessDenied(str(exc)) from None
    name, content = service.package_of(session, caller, body.requestID)
    return zip_download(name, content, range_)
