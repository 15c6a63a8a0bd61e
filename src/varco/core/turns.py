"""Request work that writes: in the threadpool, or on the event loop when it is brief and the
SQLite write lock is free; on SQLite one request at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from starlette.concurrency import run_in_threadpool

from varco.core.db import begin_writing_now
from varco.core.dialects import dialect_of
from varco.core.jobs import committing_on_event_loop
from varco.core.uow import UnitOfWork

T = TypeVar("T")

# One lock per event loop (a lock is bound to the loop it first waits in; tests run several).
_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = WeakKeyDictionary()


def _turn() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    return lock


async def run_writing(session: UnitOfWork, work: Callable[..., T], *args: Any, brief: bool = False) -> T:
    """`work(*args)` in the threadpool. On SQLite the requests of this process that call this take
    turns, waiting in the event loop rather than in threads: SQLite admits one writer at a time
    anyway, and threads interleaving under the GIL only add switches (docs/performance.md). On
    PostgreSQL they run side by side: rows lock, not the database, and network waits overlap.

    `brief`: the work takes a few milliseconds of CPU at most and waits on nothing but the local
    database (a small upload in embedded mode). On SQLite it then runs on the event loop itself
    when the write lock is free, its transaction begun first: no threadpool hop, no GIL handover
    (docs/performance.md, Upload). It never waits for the lock there, which a thread may hold until
    the loop schedules its commit; it goes to the threadpool instead. Its job wake-ups are sent
    from a thread (core/jobs.py).

    Either way a failure rolls back at once, which frees SQLite's write lock before the loop gets
    to the request's cleanup."""
    if not dialect_of(session).one_writer:
        return await run_in_threadpool(_undone_on_error, session, work, *args)
    async with _turn():
        if brief and begin_writing_now(session):
            with committing_on_event_loop(session):
                return _undone_on_error(session, work, *args)
        return await run_in_threadpool(_undone_on_error, session, work, *args)


def _undone_on_error(session: UnitOfWork, work: Callable[..., T], *args: Any) -> T:
    try:
        return work(*args)
    except BaseException:
        session.rollback()
        raise
