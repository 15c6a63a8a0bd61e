"""POST /auth/signin (§4.1): password and refresh_token grants, form-encoded."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import JSONResponse

from varco.audit import service as audit
from varco.auth import service
from varco.auth.schemas import OAuthErrorBody, TokenResponse
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import InvalidGrant, InvalidRequest, Shape, UnsupportedGrantType, shaped_router
from varco.limits import credentials

router = shaped_router(Shape.OAUTH, tags=["authentication"])  # §2.2

# §5.2: credentials travel in the body only; any of these in the query string blocks the call.
SENSITIVE_QUERY = ("username", "password", "grant_type", "refresh_token", "access_token")


@router.post(
    "/auth/signin",
    response_model=TokenResponse,
    response_model_by_alias=True,
    responses={
        400: {"model": OAuthErrorBody, "description": "Wrong credentials or malformed request (§2.2)"}
    },
    summary="Obtain or refresh a token",
)
def signin(
    request: Request,
    session: SessionDep,
    clock: ClockDep,
    settings: SettingsDep,
    grant_type: Annotated[str | None, Form(examples=["password", "refresh_token"])] = None,
    username: Annotated[str | None, Form(examples=["demo-premium"])] = None,
    password: Annotated[
        str | None, Form(examples=["demo-premium-pw"], json_schema_extra={"format": "password"})
    ] = None,
    refresh_token: Annotated[str | None, Form()] = None,
    client_id: Annotated[str | None, Form()] = None,
) -> JSONResponse:
    blocked = [name for name in SENSITIVE_QUERY if name in request.query_params]
    if blocked:
        raise InvalidRequest(
            f"Sensitive parameters are not accepted in the query string ({', '.join(blocked)}); "
            "send them in the form body"
        )
    actor = audit.actor_of(request)
    if grant_type == "password":
        if not username or not password:
            raise InvalidRequest("The username and password fields are required")
        credentials.refuse_if_guessing(request, username, clock)
        try:
            issued = service.sign_in(session, username, password, client_id or "", clock, settings, actor)
        except InvalidGrant as refused:
            if isinstance(refused, service.WrongCredentials):
                credentials.count_failure(request, username, clock)
            service.audit_refusal(session, refused, username, actor, clock, "api")
            raise
    elif grant_type == "refresh_token":
        if not refresh_token:
            raise InvalidRequest("The refresh_token field is required")
        issued = service.refresh(session, refresh_token, client_id or "", clock, settings, actor)
    elif not grant_type:
        raise InvalidRequest(
            "The grant_type field is required (form body, application/x-www-form-urlencoded)"
        )
    else:
        raise UnsupportedGrantType(f"Unsupported grant_type {grant_type!r}: use password or refresh_token")
    body = TokenResponse.of(issued).model_dump(by_alias=True)
    return JSONResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})
