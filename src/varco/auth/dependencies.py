"""The `Caller` dependency: the account behind `Authorization: Bearer <token>`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from varco.accounts.models import Account
from varco.auth import service
from varco.core.clock import Clock
from varco.core.db import reading
from varco.core.deps import ClockDep, SessionDep
from varco.core.errors import Unauthorized
from varco.core.uow import UnitOfWork
from varco.limits import service as limits


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticated(request: Request, session: UnitOfWork, clock: Clock) -> Account:
    """The account behind the request's bearer token (401 otherwise), with the §8 guard run: what
    `Caller` gives an endpoint. Called directly by an endpoint that does all its work in one
    threadpool hop (the upload), before anything else."""
    token = bearer_token(request)
    if token is None:
        raise Unauthorized()
    with reading(session):  # on SQLite the write lock is taken only by the endpoint's own work
        account = service.authenticate(session, token, clock)
        request.state.account_id = account.id
        limits.guard(request, session, account, clock)  # §8.3/§8.4: every authenticated call counts
    return account


def get_caller(request: Request, session: SessionDep, clock: ClockDep) -> Account:
    return authenticated(request, session, clock)


Caller = Annotated[Account, Depends(get_caller)]
