"""Fixtures for the core fatturapa tests (helpers live in core_support.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fatturapa.core_support import SAMPLES, Signer, make_signer, valid_invoice


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """The official samples in ../shared/fatturapa/samples."""
    if not SAMPLES.is_dir():
        pytest.skip(f"official samples not found at {SAMPLES}")
    return SAMPLES


@pytest.fixture
def invoice() -> Callable[..., bytes]:
    """`invoice(fmt="FPR12", edits={path: text})`: a valid invoice, edited."""
    return valid_invoice


@pytest.fixture(scope="session")
def signer() -> Signer:
    """Valid from 2000 to 2100: valid at any signing time the tests (or signxml's clock) use."""
    return make_signer(datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC))


@pytest.fixture(scope="session")
def expired_signer() -> Signer:
    """Valid only during 2020."""
    return make_signer(datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC), "Expired Signer")
