"""Fixtures for search tests: a supplier (Premium) able to upload, and a signed invoice."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pyhanko.sign import signers

from tests.invoices.support import invoice_xml
from tests.search.factories import User, premium
from varco.core.coroutines import run_sync
from varco.invoices.demo_signer import make_demo_pkcs12


@pytest.fixture
def supplier(client) -> User:
    return premium(client)


@pytest.fixture(scope="session")
def cades_signer() -> signers.SimpleSigner:
    pkcs12 = make_demo_pkcs12("Test Signer", datetime.now(UTC), password="p12-pw")  # noqa: TID251 - cert validity
    return signers.SimpleSigner.load_pkcs12_data(pkcs12, other_certs=[], passphrase=b"p12-pw")


@pytest.fixture
def sign(cades_signer):
    """CAdES-BES (attached, DER) of some bytes."""

    def signed(xml: bytes) -> bytes:
        return run_sync(
            cades_signer.async_sign_general_data(xml, "sha256", detached=False, use_cades=True)
        ).dump()

    return signed


__all__ = ["invoice_xml"]
