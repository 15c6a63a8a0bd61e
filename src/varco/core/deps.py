"""FastAPI dependencies shared by every domain: the per-request unit of work and the clock."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends
from sqlalchemy.orm import Session

from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.settings import Settings, get_settings


def _session() -> Iterator[Session]:
    # scope="function": the commit happens before the response is sent, so a failing
    # commit is an error answer, never a success that was not stored.
    with unit_of_work() as session:
        yield session


# async: FastAPI runs a plain function dependency in the threadpool, a hop per request for a global read.
async def _clock() -> Clock:
    return current_clock()


async def _settings() -> Settings:
    return get_settings()


SessionDep = Annotated[Session, Depends(_session, scope="function")]
ClockDep = Annotated[Clock, Depends(_clock)]
SettingsDep = Annotated[Settings, Depends(_settings)]
