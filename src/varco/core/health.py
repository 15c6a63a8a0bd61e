"""GET /health: liveness (the process answers, the database is reachable); GET /health/ready:
readiness for a load balancer or orchestrator (the database and, in production mode, Redis,
which every upload and job needs)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from varco import __version__
from varco.core.db import get_database, reading
from varco.settings import get_settings

_REDIS_TIMEOUT_SECONDS = 2  # a black-holed Redis must not hold the probe

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
    database = _database()
    status = 200 if database == "ok" else 503
    body = {"status": "ok" if status == 200 else "unavailable", "database": database, "version": __version__}
    return JSONResponse(body, status_code=status)


@router.get(
    "/health/ready",
    summary="Readiness: the database and, with VARCO_REDIS_URL, Redis",
    responses={
        200: {
            "content": {"application/json": {"example": {"status": "ok", "database": "ok", "redis": "ok"}}}
        },
        503: {"description": "A service varco needs is unreachable (named in the body)"},
    },
)
def ready() -> JSONResponse:
    checks = {"database": _database(), "redis": _redis()}
    status = 200 if all(value in ("ok", "not used") for value in checks.values()) else 503
    body = {"status": "ok" if status == 200 else "unavailable", **checks, "version": __version__}
    return JSONResponse(body, status_code=status)


def _database() -> str:
    try:
        # A read: on SQLite it must not queue for the write lock behind busy writers.
        with get_database().sessions() as session, reading(session):
            session.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return type(exc).__name__
    return "ok"


def _redis() -> str:
    url = get_settings().redis_url
    if not url:
        return "not used"  # embedded mode
    import redis

    client = redis.Redis.from_url(
        url, socket_connect_timeout=_REDIS_TIMEOUT_SECONDS, socket_timeout=_REDIS_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        return type(exc).__name__
    finally:
        client.close()
    return "ok"
