"""SDICoop protocol tests: pure, no database (the parent conftest's simulator cleanup is not needed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from varco.sdi.sdicoop.pki import TestPki, make_test_pki

SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


@pytest.fixture(autouse=True)
def _clean_simulator() -> Iterator[None]:
    """Overrides tests/sdi/conftest.py's: these tests touch no database."""
    yield


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    return make_test_pki(tmp_path_factory.mktemp("pki"), intermediaries=("varco", "acme"))


@pytest.fixture
def hostile_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables these machines set, which would make requests trust the system CAs instead."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", SYSTEM_BUNDLE)
    monkeypatch.setenv("CURL_CA_BUNDLE", SYSTEM_BUNDLE)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # nothing listens: used would fail
    monkeypatch.setenv("NO_PROXY", "")
