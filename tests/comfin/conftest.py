"""Fixtures for communication tests: a test CA's signing identity (pyHanko signs CAdES-BES)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from varco.invoices.demo_signer import make_demo_pkcs12


@pytest.fixture(scope="session")
def pkcs12() -> bytes:
    return make_demo_pkcs12("Test Declarant", datetime.now(UTC), password="p12-pw")  # noqa: TID251 - cert validity
