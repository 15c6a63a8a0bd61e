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


SessionDep = Annotated[Session, Depends(_session, scope="function")]
ClockDep = Annotated[Clock, Depends(current_clock)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
