"""Callback fixtures: a live receiver, a registered endpoint, settings per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.callbacks.receiver import Receiver


@pytest.fixture
def receiver(clock) -> Iterator[Receiver]:
    live = Receiver(clock)
    yield live
    live.close()
