"""`Idempotency-Key` (varco's addition to the contract, docs/upload.md): a client that sent a
request and got no answer (a timeout, a dropped connection, a restarted server) sends it again
with the same key, and gets the first answer: nothing is done twice.

Per caller and route, within `VARCO_IDEMPOTENCY_RETENTION` (24 hours):
- same key, same body: the first answer, as it was;
- same key, another body: 409 with code 0409, nothing done;
- no header: the contract's behaviour, unchanged.

Only answered requests are remembered: one refused (a 4xx) changed nothing and is checked
afresh when sent again. The key is claimed in the request's own transaction before the work, so
two copies sent at once do the work once: on PostgreSQL the second waits on the first's
uncommitted row and then replays its answer; on SQLite writers take turns.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from fastapi import Request
from sqlalchemy import ColumnElement, delete, select, update

from varco.core.clock import Clock
from varco.core.dialects import per_dialect
from varco.core.errors import VarcoError
from varco.core.models import IdempotencyKey
from varco.core.uow import UnitOfWork
from varco.settings import get_settings

HEADER = "Idempotency-Key"
_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # printable ASCII, no spaces (a UUID fits)
_CLAIM = per_dialect(
    lambda insert: (
        insert(IdempotencyKey)
        .on_conflict_do_nothing(index_elements=["account_id", "route", "key"])
        .returning(IdempotencyKey.id)
    )
)


# For the routes' OpenAPI `parameters` (read from the request, not a FastAPI dependency).
OPENAPI_PARAMETER = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    "description": "varco's addition: the same key and body within 24 hours get the first answer and "
    "change nothing; the same key with another body is 409 (0409). Use a new UUID per request.",
}


class KeyReused(VarcoError):
    """The Idempotency-Key was used for another request."""

    status, code = 409, "0409"


class BadKey(VarcoError):
    """The Idempotency-Key header is not 1-255 printable ASCII characters."""

    status, code = 400, "0002"


def key_of(request: Request) -> str | None:
    value = request.headers.get(HEADER)
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        raise BadKey(f"{HEADER} must be 1-255 printable ASCII characters without spaces")
    return value


def digest(body: str | bytes) -> str:
    return hashlib.sha256(body.encode() if isinstance(body, str) else body).hexdigest()


def _this(account_id: int, route: str, key: str) -> tuple[ColumnElement[bool], ...]:
    return (IdempotencyKey.account_id == account_id, IdempotencyKey.route == route, IdempotencyKey.key == key)


def _row(session: UnitOfWork, account_id: int, route: str, key: str) -> IdempotencyKey | None:
    query = select(IdempotencyKey).where(*_this(account_id, route, key))
    return session.scalar(query.execution_options(populate_existing=True))


def _cutoff(clock: Clock) -> datetime:
    return clock.now() - get_settings().idempotency_retention


def replay(
    session: UnitOfWork, account_id: int, route: str, key: str, body_sha256: str, clock: Clock
) -> dict[str, Any] | None:
    """The first answer to this key, or None when it is new (or expired); KeyReused for a
    different body."""
    row = _row(session, account_id, route, key)
    if row is None or row.created_at <= _cutoff(clock) or row.response is None:
        return None
    if row.body_sha256 != body_sha256:
        raise KeyReused(
            f"{HEADER} {key!r} was used for a different request in the last "
            f"{get_settings().idempotency_retention}: send a new key for a new request"
        )
    return row.response


def claim(
    session: UnitOfWork, account_id: int, route: str, key: str, body_sha256: str, clock: Clock
) -> dict[str, Any] | None:
    """Take the key for this request (call before doing the work). None: go on, then `answered`;
    else the answer of a twin that committed first (KeyReused if its body differs)."""
    session.execute(
        delete(IdempotencyKey).where(
            *_this(account_id, route, key), IdempotencyKey.created_at <= _cutoff(clock)
        )
    )
    values = {
        "account_id": account_id,
        "route": route,
        "key": key,
        "body_sha256": body_sha256,
        "response": None,
        "created_at": clock.now(),
    }
    if session.execute(_CLAIM(session), values).scalar() is not None:
        return None
    answer = replay(session, account_id, route, key, body_sha256, clock)
    if answer is None:  # a twin holds it and has no answer: it is still running in this process
        raise KeyReused(f"a request with {HEADER} {key!r} is still being processed: wait for its answer")
    return answer


def answered(session: UnitOfWork, account_id: int, route: str, key: str, response: dict[str, Any]) -> None:
    """Record the answer with the claim, in the same transaction as the work."""
    session.execute(update(IdempotencyKey).where(*_this(account_id, route, key)).values(response=response))


def purge_expired(session: UnitOfWork, clock: Clock) -> int:
    """Forget keys past the retention (a reconciler)."""
    return session.execute(delete(IdempotencyKey).where(IdempotencyKey.created_at <= _cutoff(clock))).rowcount
