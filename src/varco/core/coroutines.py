"""Run a coroutine to completion from synchronous code, whether or not this thread has a running
event loop (pyHanko's signing API is async; some callers, e.g. browser-test sessions, keep a loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:  # a loop is running here: use a fresh thread
        return pool.submit(asyncio.run, coroutine).result()
