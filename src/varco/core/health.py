"""GET /health: is the database reachable?"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from varco import __version__
from varco.core.db import get_database, reading

router = APIRouter(tags=["operations"])


@router.get(
    "/health",
    summary="Liveness and database reachability",
    responses={
        200: {"content": {"application/json": {"example": {"status": "ok", "database": "ok"}}}},
        503: {"description": "Database unreachable"},
    },
)
def health() -> JSONResponse:
    try:
        # A read: on SQLite it must not queue for the write lock behind busy writers.
        with get_database().sessions() as session, reading(session):
            session.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return JSONResponse(
            {"status": "unavailable", "database": type(exc).__name__, "version": __version__}, status_code=503
        )
    return JSONResponse({"status": "ok", "database": "ok", "version": __version__})
