"""One error type carrying HTTP status and contract code; one handler renders every error."""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import ClassVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("varco.errors")

UNAUTHORIZED_TEXT = "Full authentication is required to access this resource"  # §5.4


class Shape(StrEnum):
    OAUTH = "oauth"  # §2.2 {error, error_description}
    CODED = "coded"  # {errorCode, errorDescription}
    UPLOAD = "upload"  # §2.8 {uploadFileName, errorCode, errorDescription}


class VarcoError(Exception):
    status: ClassVar[int] = 500
    code: ClassVar[str] = "0001"
    shape: ClassVar[Shape] = Shape.CODED
    headers: dict[str, str] | None = None

    def __init__(self, message: str = "", *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message or self.__class__.__doc__ or self.code)
        if headers:
            self.headers = headers


class OAuthError(VarcoError):
    """Authentication failed."""

    status, code, shape = 400, "invalid_grant", Shape.OAUTH


class InvalidGrant(OAuthError):
    code = "invalid_grant"


class InvalidRequest(OAuthError):
    code = "invalid_request"


class UnsupportedGrantType(OAuthError):
    code = "unsupported_grant_type"


class Unauthorized(VarcoError):
    """Full authentication is required to access this resource"""

    status, code, shape = 401, "unauthorized", Shape.OAUTH


class Forbidden(VarcoError):
    """Valid request declined: the user lacks authorization."""

    status, code = 403, "0012"


class NotFound(VarcoError):
    """Resource not found."""

    status, code = 404, "0002"


class BadRequest(VarcoError):
    """Input parameter error."""

    status, code = 400, "0002"


class ServiceUnavailable(VarcoError):
    """Service temporarily unavailable; retry later."""

    status, code = 503, "0095"


def request_id(request: Request) -> str:
    return getattr(request.state, "request_id", "-")


def render(
    request: Request,
    *,
    status: int,
    shape: Shape,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    match shape:
        case Shape.OAUTH:
            body = {"error": code, "error_description": message}
        case Shape.CODED:
            body = {"errorCode": code, "errorDescription": f"{message} [request {request_id(request)}]"}
        case Shape.UPLOAD:
            body = {
                "uploadFileName": None,
                "errorCode": code,
                "errorDescription": f"{message} [request {request_id(request)}]",
            }
    return JSONResponse(body, status_code=status, headers=headers)


def _is_auth_path(request: Request) -> bool:
    return request.url.path.startswith("/auth/signin")


def _varco_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, VarcoError)
    if exc.status >= 500:
        log.error("request %s failed: %s %s", request_id(request), exc.code, exc)
    return render(
        request, status=exc.status, shape=exc.shape, code=exc.code, message=str(exc), headers=exc.headers
    )


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header"))
        parts.append(f"{loc or 'request'}: {err.get('msg', 'invalid value')}")
    return "Invalid request: " + "; ".join(parts)


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    message = _describe_validation(exc)
    if _is_auth_path(request):
        return render(request, status=400, shape=Shape.OAUTH, code="invalid_request", message=message)
    return render(request, status=400, shape=Shape.CODED, code="0002", message=message)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 401:
        return render(
            request,
            status=401,
            shape=Shape.OAUTH,
            code="unauthorized",
            message=UNAUTHORIZED_TEXT,
            headers={"WWW-Authenticate": "Bearer"},
        )
    message = exc.detail if isinstance(exc.detail, str) else "Request cannot be met"
    shape = Shape.OAUTH if _is_auth_path(request) else Shape.CODED
    code = "invalid_request" if shape is Shape.OAUTH else ("0001" if exc.status_code >= 500 else "0002")
    return render(
        request,
        status=exc.status_code,
        shape=shape,
        code=code,
        message=message,
        headers=getattr(exc, "headers", None),
    )


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("request %s: unexpected error", request_id(request), exc_info=exc)
    # Starlette answers unhandled errors outside our middleware, so the id header is added here.
    return render(
        request,
        status=500,
        shape=Shape.CODED,
        code="0001",
        message="Unexpected generic error",
        headers={"X-Request-ID": request_id(request)},
    )


def install_handlers(app: FastAPI) -> None:
    app.add_exception_handler(VarcoError, _varco_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
