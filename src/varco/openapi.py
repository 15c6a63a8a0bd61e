"""The OpenAPI document says what each operation really answers, when it refuses and when not.

FastAPI documents a 422 that varco never sends (validation errors are 400 in the contract's
shape). This replaces it, per operation, with the refusals the route can give, each in the body
shape of its router (core/errors.py): 400 for bad input, 401/403/429 on the bearer-protected
routes (every authenticated call counts in the §8.3 bucket), 404 for lookups, 413 for a body over
the limit (core/bodies.py), 429 where a §8.1 per-IP limit applies, 503 when the limiter (Redis)
cannot decide. Each parameter gets the type, format, required flag, description and example of
openapi_params.py; each operation the examples of a real exchange (openapi_examples.py,
docs/openapi.md). The schemathesis gate (tests/test_fuzz.py) holds the server to this document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field

from varco.auth.dependencies import get_caller
from varco.auth.schemas import OAuthErrorBody
from varco.core.errors import Shape, all_routes
from varco.invoices.schemas import UploadResult
from varco.limits import ip
from varco.openapi_examples import document_examples
from varco.openapi_params import document_parameters
from varco.settings import get_settings


class ErrorBody(BaseModel):
    """A refusal of every route but sign-in and upload."""

    errorCode: str = Field(description="Contract code (§7.2, §7.4), e.g. 0002")
    errorDescription: str = Field(description="What is wrong and how to fix it, with the request id")


_BODY_OF = {Shape.CODED: ErrorBody, Shape.OAUTH: OAuthErrorBody, Shape.UPLOAD: UploadResult}
_RID = "[request 3f9a1c0d2b7e4a51]"
_EXAMPLE = {
    Shape.CODED: lambda code, text: {"errorCode": code, "errorDescription": f"{text} {_RID}"},
    Shape.OAUTH: lambda code, text: {"error": code, "error_description": text},
    Shape.UPLOAD: lambda code, text: {
        "uploadFileName": None,
        "errorCode": code,
        "errorDescription": f"{text} {_RID}",
    },
}
# status -> (contract code, OAuth code, description)
_REFUSALS: dict[int, tuple[str, str, str]] = {
    400: ("0002", "invalid_request", "Input parameter error: the description names the parameter"),
    401: ("unauthorized", "unauthorized", "Full authentication is required to access this resource"),
    403: ("0012", "0012", "Valid request declined: the user lacks authorization"),
    404: ("0002", "0002", "Resource not found among the caller's"),
    413: ("0033", "invalid_request", "The request body exceeds the limit (the contract's 5 MB file)"),
    429: ("0429", "too_many_requests", "Rate limit reached (§8.1 per IP, §8.3 per account); see Retry-After"),
    503: ("0095", "temporarily_unavailable", "The rate limiter cannot be reached; retry later"),
}
BEARER = "bearer"


def install(app: FastAPI) -> None:
    """Document every operation's refusals, parameters and examples when the document is first built."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = build()  # cached by FastAPI as app.openapi_schema
            document_refusals(app, document)
            document_parameters(document, get_settings())
            document_examples(document)
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]


def document_refusals(app: FastAPI, document: dict[str, Any]) -> None:
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for model in _BODY_OF.values():
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.setdefault(model.__name__, schema)
    document["components"].setdefault("securitySchemes", {})[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The access_token of POST /auth/signin (§5)",
    }
    for route in all_routes(app):
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods:
            operation = document["paths"].get(route.path_format, {}).get(method.lower())
            if operation is not None:
                _document(route, method, operation)


def _document(route: APIRoute, method: str, operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    responses.pop("422", None)
    shape: Shape = getattr(route, "error_shape", Shape.CODED)
    body, bearer = bool(operation.get("requestBody")), _needs_bearer(route)
    statuses = set()
    if operation.get("parameters") or body:
        statuses.add(400)
    if operation.get("parameters") or (body and bearer):  # a lookup by id, name or a list of ids
        statuses.add(404)
    if body:
        statuses.add(413)
    if bearer:
        operation.setdefault("security", [{BEARER: []}])
        statuses |= {401, 403, 429, 503}
    if ip.match(method, route.path_format) is not None:
        statuses |= {429, 503}
    fields = _body_fields(route)
    if {"userName", "password"} <= fields:  # §9 version 1: checked as sign-in's, in the §8.3 bucket
        statuses |= {429, 503}
        if "requestID" in fields:  # a lookup by the body's requestID
            statuses.add(404)
    for status in sorted(statuses):
        code, oauth_code, text = _REFUSALS[status]
        if status == 401:
            body, example = OAuthErrorBody, _EXAMPLE[Shape.OAUTH](code, text)
        else:
            body = _BODY_OF[shape]
            if status == 413:
                code = getattr(route, "too_large_code", code)
            example = _EXAMPLE[shape](oauth_code if shape is Shape.OAUTH else code, text)
        responses.setdefault(
            str(status),
            {
                "description": text,
                "content": {
                    "application/json": {
                        "schema": {"$ref": f"#/components/schemas/{body.__name__}"},
                        "example": example,
                    }
                },
            },
        )


def _needs_bearer(route: APIRoute) -> bool:
    """The route reads the bearer token: through `Caller` (get_caller), or as the upload does it,
    by itself, which its operation declares (`security`)."""
    if (route.openapi_extra or {}).get("security"):
        return True
    pending = list(route.dependant.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.call is get_caller:
            return True
        pending.extend(dependency.dependencies)
    return False


def _body_fields(route: APIRoute) -> set[str]:
    """The field names of the route's JSON body model(s)."""
    found: set[str] = set()
    for param in route.dependant.body_params:
        model = param.field_info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            found |= set(model.model_fields)
    return found
