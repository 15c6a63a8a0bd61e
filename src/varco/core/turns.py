"""Request work that writes: in the threadpool, or on the event loop when it is brief and the
SQLite write lock is free; on SQLite one request at a time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from starlette.concurrency import run_in_threadpool

from varco.core.db import BEGUN, HELD_ELSEWHERE, begin_writing, begin_writing_now
from varco.core.dialects import dialect_of
from varco.core.jobs import committing_on_event_loop
from varco.core.uow import UnitOfWork

T = TypeVar("T")
R = TypeVar("R")

# One lock per event loop (a lock is bound to the loop it first waits in; tests run several).
_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = WeakKeyDictionary()


def _turn() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    return lock


async def run_writing(
    session: UnitOfWork,
    read: Callable[[], R | T],
    write: Callable[[R], T],
    *,
    done: type[T],
    brief: bool = False,
) -> T:
    """`read()`, whose reads take no write lock (`reading(session, then_write=True, begin=False)`),
    then `write(read())` in the write transaction, unless `read()` returned a `done` answer (a
    replayed idempotent request). In the threadpool; on SQLite the requests of this process that
    call this take turns, waiting in the event loop rather than in threads:
    SQLite admits one writer at a time anyway, and threads interleaving under the GIL only add
    switches (docs/performance.md). On PostgreSQL they run side by side: rows lock, not the
    database, and network waits overlap.

    `brief`: the work takes a few milliseconds of CPU at most and waits on nothing but the local
    database (a small upload in embedded mode). On SQLite it then runs on the event loop itself, no
    threadpool hop, no GIL handover (docs/performance.md, Upload): the reads and checks before the
    write lock, then the write part once the lock is free. The loop never waits for a lock that a
    thread of this process holds (it could hold it until the loop schedules its commit): the write
    part goes to the threadpool instead. A lock held by another process (a `varco worker` on the
    same file) it awaits, polling, letting other requests run meanwhile. Its job wake-ups are sent
    from a thread (core/jobs.py).

    Either way a failure rolls back at once, which frees SQLite's write lock before the loop gets
    to the request's cleanup."""
    both = (_undone_on_error, session, _read_then_write, session, read, write, done)
    if not dialect_of(session).one_writer:
        return await run_in_threadpool(*both)
    if not brief:
        async with _turn():
            return await run_in_threadpool(*both)
    async with _turn():
        first = _undone_on_error(session, read)
        if isinstance(first, done):
            return first
        deadline = time.monotonic() + _WAIT_ELSEWHERE
        while (held := begin_writing_now(session)) == HELD_ELSEWHERE and time.monotonic() < deadline:
            await asyncio.sleep(_POLL)
        if held == BEGUN:
            with committing_on_event_loop(session):
                return _undone_on_error(session, write, first)
        return await run_in_threadpool(_undone_on_error, session, _begin_then_write, session, write, first)


_POLL = 0.0005  # s: how often the loop asks for a lock another process holds
_WAIT_ELSEWHERE = 1.0  # s: then a thread waits for it, as long as busy_timeout allows


def _read_then_write(
    session: UnitOfWork, read: Callable[[], R | T], write: Callable[[R], T], done: type[T]
) -> T:
    first = read()
    return first if isinstance(first, done) else _begin_then_write(session, write, first)  # type: ignore[arg-type]


def _begin_then_write(session: UnitOfWork, write: Callable[[R], T], first: R) -> T:
    begin_writing(session)
    return write(first)


def _undone_on_error(session: UnitOfWork, work: Callable[..., T], *args: Any) -> T:
    try:
        return work(*args)
    except BaseException:
        session.rollback()
        raise
