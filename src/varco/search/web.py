"""Small helpers shared by the version-1 and version-2 read endpoints."""

from __future__ import annotations

from fastapi import Response
from pydantic import BaseModel

from varco.core.disposition import attachment
from varco.core.numbers import MAX_BIGINT, optional_whole_number
from varco.search.service import Paging
from varco.settings import Settings


def paging(page: str | None, size: str | None, settings: Settings) -> Paging:
    """`page` 1-based (default 1), `size` 1..page_size_max (default page_size_default)."""
    return Paging(
        page=optional_whole_number(page, "page", 1, low=1, high=MAX_BIGINT // settings.page_size_max),
        size=optional_whole_number(
            size, "size", settings.page_size_default, low=1, high=settings.page_size_max
        ),
    )


def json_response(model: BaseModel) -> Response:
    """A page already shaped by the service: serialised once by pydantic, without FastAPI validating
    and encoding it again (the route's response_model still documents it)."""
    return Response(model.model_dump_json(), media_type="application/json")


def zip_response(name: str, content: bytes) -> Response:
    """Binary ZIP with the headers of §4.2 (pdd)."""
    return Response(
        content,
        media_type="application/zip",
        headers={"Content-Disposition": attachment(name), "Accept-Ranges": "bytes"},
    )


ZIP_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {"application/zip": {}}, "description": "ZIP file"},
    404: {"description": "No such invoice among yours (or, for pdd, the package is not available yet)"},
}
