"""The `Caller` dependency: the account behind `Authorization: Bearer <token>`; `Admin`, an operator;
`Acting`, the caller as the actor of audited events."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from varco.accounts.models import Account
from varco.audit import service as audit
from varco.auth import service
from varco.core.clock import Clock
from varco.core.db import reading
from varco.core.deps import ClockDep, SessionDep
from varco.core.errors import Forbidden, Unauthorized
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


class AdminOnly(Forbidden):
    """Only operators (admin accounts) may use the admin endpoints."""


# async: no I/O of their own (a plain function dependency would take a threadpool hop).
async def admin_caller(caller: Caller) -> Account:
    if not caller.is_admin:
        raise AdminOnly()
    return caller


Admin = Annotated[Account, Depends(admin_caller)]


async def acting(request: Request, caller: Caller) -> audit.Actor:
    """The caller, with the request's client address and id, as the actor of audited events."""
    return audit.actor_of(request, caller)


Acting = Annotated[audit.Actor, Depends(acting)]
