"""Settings: contract numbers as defaults; production refuses unsafe defaults."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from varco.settings import Settings


def test_contract_numbers_are_the_defaults():
    s = Settings()
    assert s.access_token_ttl == timedelta(seconds=1800)
    assert s.refresh_token_ttl == timedelta(seconds=3600)
    assert s.max_upload_bytes == 5 * 1024 * 1024
    assert (s.auth_requests_per_minute, s.upload_requests_per_minute, s.find_requests_per_minute) == (
        1,
        30,
        12,
    )
    assert s.tiers[0] == (60, 10_000) and s.tiers[6] == (30_000, 5_000_000)
    assert (s.page_size_default, s.page_size_max, s.report_retry_seconds) == (10, 100, 60)


def test_production_refuses_the_demo_secret():
    with pytest.raises(ValidationError, match="VARCO_SECRET_KEY"):
        Settings(profile="production", database_url="postgresql+psycopg://x@h/db")


def test_production_refuses_sqlite():
    with pytest.raises(ValidationError, match="PostgreSQL"):
        Settings(profile="production", secret_key="x" * 40)


def test_production_accepts_real_settings():
    s = Settings(
        profile="production",
        secret_key="x" * 40,
        database_url="postgresql+psycopg://x@h/db",
        sdi_channel="sdicoop",
    )
    assert not s.resolved_database_url.startswith("sqlite") and s.channel == "sdicoop"


def test_production_refuses_to_guess_the_sdi_channel():
    real = {"secret_key": "x" * 40, "database_url": "postgresql+psycopg://x@h/db"}
    with pytest.raises(ValidationError, match="VARCO_SDI_CHANNEL"):
        Settings(profile="production", **real)
    assert Settings(profile="production", sdi_channel="simulator", **real).channel == "simulator"
    assert Settings().channel == "simulator"  # the demo default


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv("VARCO_ACCESS_TOKEN_TTL", "60")
    monkeypatch.setenv("VARCO_REDIS_URL", "redis://127.0.0.1:6379/0")
    s = Settings()
    assert s.access_token_ttl == timedelta(seconds=60)
    assert not s.embedded


def test_recipient_code_must_have_seven_characters():
    with pytest.raises(ValidationError, match="seven"):
        Settings(recipient_code="ABC")
