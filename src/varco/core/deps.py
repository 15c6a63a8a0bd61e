"""FastAPI dependencies shared by every domain: the per-request unit of work and the clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends
from starlette.concurrency import run_in_threadpool

from varco.core.clock import Clock, current_clock
from varco.core.db import get_database
from varco.core.uow import UnitOfWork
from varco.settings import Settings, get_settings


async def _session() -> AsyncIterator[UnitOfWork]:
    # scope="function": the commit happens before the response is sent, so a failing
    # commit is an error answer, never a success that was not stored.
    # async: opening a session does no I/O, nor does closing one without a transaction (an
    # endpoint that committed itself): only a commit or rollback takes a threadpool hop.
    session = get_database().sessions()
    try:
        yield session
    except BaseException:
        await run_in_threadpool(_end, session, commit=False)
        raise
    if session.in_transaction():
        await run_in_threadpool(_end, session, commit=True)
    else:
        session.close()


def _end(session: UnitOfWork, *, commit: bool) -> None:
    """What `unit_of_work` does on leaving: commit (rolled back if that fails) or roll back."""
    try:
        if commit:
            session.commit()
        else:
            session.rollback()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


# async: FastAPI runs a plain function dependency in the threadpool, a hop per request for a global read.
async def _clock() -> Clock:
    return current_clock()


async def _settings() -> Settings:
    return get_settings()


SessionDep = Annotated[UnitOfWork, Depends(_session, scope="function")]
ClockDep = Annotated[Clock, Depends(_clock)]
SettingsDep = Annotated[Settings, Depends(_settings)]
