"""GET /docs (Swagger UI) and GET /redoc (ReDoc) with their scripts, styles, favicon and logo served
by varco itself from the `fastapi-standalone-docs` package: the pages load nothing from outside the
server, so they work on a self-hosted box with no internet (FastAPI's own load them from CDNs)."""

from __future__ import annotations

from pathlib import Path

import fastapi_standalone_docs
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request

ASSETS = Path(fastapi_standalone_docs.__file__).parent / "static"  # swagger/, redoc/, fastapi/favicon.png
DOCS_URL = "/docs"
REDOC_URL = "/redoc"
ASSETS_URL = "/docs/assets"
# The package's ReDoc asks for its logo at the page's path + "/logo-mini.svg" (upstream: a CDN).
REDOC_LOGO_URL = f"{REDOC_URL}/logo-mini.svg"
# Swagger UI's default validatorUrl is validator.swagger.io, whose badge (in StandaloneLayout, not
# FastAPI's BaseLayout) it fetches for a document not on localhost: no URL outside the server.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}


def install(app: FastAPI) -> None:
    """Add the pages to an app built with `docs_url=None, redoc_url=None`; none is in the schema."""
    assert app.docs_url is None and app.redoc_url is None, "FastAPI's CDN pages would shadow these"
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_redirect_url = app.swagger_ui_oauth2_redirect_url or f"{DOCS_URL}/oauth2-redirect"

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = _root_path(request)
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/fastapi/favicon.png",
            oauth2_redirect_url=root + oauth2_redirect_url,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters={**SWAGGER_UI_PARAMETERS, **(app.swagger_ui_parameters or {})},
        )

    async def swagger_ui_oauth2_redirect(request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc(request: Request) -> HTMLResponse:
        root = _root_path(request)
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/fastapi/favicon.png",
            with_google_fonts=False,
        )

    async def redoc_logo(request: Request) -> FileResponse:
        return FileResponse(ASSETS / "redoc" / "logo-mini.svg", media_type="image/svg+xml")

    app.add_route(DOCS_URL, swagger_ui, include_in_schema=False)
    app.add_route(oauth2_redirect_url, swagger_ui_oauth2_redirect, include_in_schema=False)
    app.add_route(REDOC_URL, redoc, include_in_schema=False)
    app.add_route(REDOC_LOGO_URL, redoc_logo, include_in_schema=False)
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS), name="docs-assets")


def _root_path(request: Request) -> str:
    """The prefix a proxy serves varco under, as FastAPI's own pages use it."""
    return request.scope.get("root_path", "").rstrip("/")
