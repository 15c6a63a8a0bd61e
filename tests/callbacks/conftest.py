"""Callback fixtures: a live receiver, a registered endpoint, settings per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from tests.callbacks.receiver import Receiver
from varco.settings import get_settings


@pytest.fixture
def receiver(clock) -> Iterator[Receiver]:  # noqa: ANN001
    live = Receiver(clock)
    yield live
    live.close()


@pytest.fixture
def configure() -> Iterator[Callable[..., None]]:
    """Set VARCO_* variables for this test (settings re-read); restored afterwards."""
    saved: dict[str, str | None] = {}

    def set_env(**values: object) -> None:
        for name, value in values.items():
            key = f"VARCO_{name.upper()}"
            saved.setdefault(key, os.environ.get(key))
            os.environ[key] = str(value)
        get_settings.cache_clear()

    yield set_env
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    get_settings.cache_clear()
