"""Fixtures for invoice tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pyhanko.sign import signers

from tests.invoices.support import invoice_xml
from varco.core.coroutines import run_sync
from varco.invoices.demo_signer import make_demo_pkcs12


@pytest.fixture(scope="session")
def demo_pkcs12() -> bytes:
    return make_demo_pkcs12("Test Signer", datetime.now(UTC), password="p12-pw")  # noqa: TID251 - cert validity


@pytest.fixture
def signed_invoice(demo_pkcs12: bytes) -> bytes:
    """A valid invoice signed CAdES-BES (attached, DER)."""
    signer = signers.SimpleSigner.load_pkcs12_data(demo_pkcs12, other_certs=[], passphrase=b"p12-pw")
    signed = run_sync(signer.async_sign_general_data(invoice_xml(), "sha256", detached=False, use_cades=True))
    return signed.dump()
