"""§4.1 multiseller endpoints: GET /auth/multicedenti, GET /auth/multicedenti/{id}, POST report."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from varco.accounts.multisellers import paging, service
from varco.accounts.multisellers.schemas import Multiseller, MultisellerPage, MultisellerReportBody
from varco.auth.dependencies import Caller
from varco.core.deps import ClockDep, SessionDep, SettingsDep

router = APIRouter(tags=["multisellers"])

_FORBIDDEN = {403: {"description": "The caller is a basic user (Premium only)"}}
# Query values arrive as text so that a wrong one gets our own clear 400 (never a 422).
Text = Annotated[str | None, Query()]


@router.get(
    "/auth/multicedenti",
    response_model=MultisellerPage,
    responses={400: {"description": "Invalid filter or page out of range"}, **_FORBIDDEN},
    summary="Multiseller (assignor) listing, one page",
)
def list_multisellers(
    caller: Caller,
    session: SessionDep,
    settings: SettingsDep,
    countryCode: Text = None,  # contract names
    vatCode: Text = None,
    status: Text = None,
    size: Text = None,
    page: Text = None,
) -> MultisellerPage:
    wanted = service.filters(countryCode, vatCode, status)
    request = paging.page_request(page, size, settings.page_size_default, settings.page_size_max)
    return service.list_page(session, caller, wanted, request)


@router.get(
    "/auth/multicedenti/{id}",
    response_model=Multiseller,
    responses={404: {"description": "Not one of the caller's assignors"}, **_FORBIDDEN},
    summary="Multiseller (assignor) detail",
)
def get_multiseller(id: str, caller: Caller, session: SessionDep) -> Multiseller:
    return service.detail(session, caller, id)


_REPORT_RESPONSES: dict[int | str, dict] = {
    200: {"model": MultisellerReportBody, "description": "The report (§2.6)"},
    202: {
        "content": {"text/plain": {"example": "The report is being prepared: retry in 60 seconds."}},
        "description": "Being prepared: retry after the Retry-After seconds",
    },
    **_FORBIDDEN,
}


def _report(caller, session, settings, clock) -> Response:
    answer = service.request_report(session, caller, settings, clock)
    if answer.content is None:
        wait = settings.report_retry_seconds
        return PlainTextResponse(
            f"The report is being prepared: please wait {wait} seconds before retrying.",
            status_code=202,
            headers={"Retry-After": str(wait)},
        )
    return JSONResponse(answer.content)


@router.post(
    "/api/v2/report",
    responses=_REPORT_RESPONSES,
    summary="Multiseller report: every assignor of the Premium user",
)
def report(caller: Caller, session: SessionDep, settings: SettingsDep, clock: ClockDep) -> Response:
    return _report(caller, session, settings, clock)


@router.post(
    "/api/v2/multicedenti/report",
    responses=_REPORT_RESPONSES,
    summary="Multiseller report (the path of the contract's request example)",
)
def report_alias(caller: Caller, session: SessionDep, settings: SettingsDep, clock: ClockDep) -> Response:
    return _report(caller, session, settings, clock)
