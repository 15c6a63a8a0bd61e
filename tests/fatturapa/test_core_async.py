"""check_async / check: the signature, then the asynchronous extra-schema rules."""

from __future__ import annotations

from datetime import date

import pytest

from varco.fatturapa import CheckOptions, check, check_async, check_sync
from varco.fatturapa.rules.registry import rules_for

RECEIVED = date(2026, 11, 23)
OFFICIAL = [
    "IT01234567890_FPA01.xml",
    "IT01234567890_FPA02.xml",
    "IT01234567890_FPA03.xml",
    "IT01234567890_FPR01.xml",
    "IT01234567890_FPR03.xml",
]


def _async_codes() -> set[str]:
    return {spec.code for spec in rules_for("FPR12", "async")}


@pytest.mark.parametrize("name", OFFICIAL)
def test_official_samples_fail_the_client_check_digit_rules(samples_dir, name):
    if not {"00305", "00306"} <= _async_codes():
        pytest.skip("rules 00305/00306 are not registered yet (rules/async_rules)")
    report = check((samples_dir / name).read_bytes(), CheckOptions(received_date=RECEIVED))
    assert not report.accepted
    codes = {f.code for f in report.errors}
    assert codes & {"00305", "00306"}, codes
    assert all(f.stage == "async" for f in report.errors)


def test_the_fixtures_pass_every_check(invoice):
    for fmt in ("FPA12", "FPR12", "FSM10"):
        report = check(invoice(fmt), CheckOptions(received_date=RECEIVED))
        assert report.accepted, (fmt, report.errors)


def test_skip_extra_schema_skips_the_asynchronous_rules(samples_dir):
    data = (samples_dir / "IT01234567890_FPR01.xml").read_bytes()
    assert check(data, CheckOptions(skip_extra_schema=True)).accepted


def test_asynchronous_rules_need_the_receipt_day(invoice):
    report = check_sync(invoice("FPR12"))
    with pytest.raises(ValueError, match="received_date"):
        check_async(report, CheckOptions())


def test_nothing_runs_asynchronously_after_a_synchronous_refusal(samples_dir):
    report = check_sync(
        (samples_dir / "IT01234567890_FPR01.xml").read_bytes(), CheckOptions(transmitter_id="IT1")
    )
    assert [f.code for f in report.errors] == ["0094"]
    assert check_async(report, CheckOptions(received_date=RECEIVED)) == []
    full = check((samples_dir / "IT01234567890_FPR01.xml").read_bytes(), CheckOptions(transmitter_id="IT1"))
    assert [f.code for f in full.errors] == ["0094"]
