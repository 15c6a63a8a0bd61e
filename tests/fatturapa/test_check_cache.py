"""CheckCache: one file checked once per set of options, its shared reports never changed."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from lxml import etree

from tests.invoices.support import invoice_xml
from varco.fatturapa import CheckCache, CheckOptions, check, check_sync

VARIANTS = Path(__file__).resolve().parent / "cases" / "variants"
OPTIONS = CheckOptions(received_date=date(2026, 11, 23))


def _codes(report) -> list[str]:
    return sorted(f.code for f in report.errors)


def test_the_same_bytes_and_options_are_checked_once(samples_dir):
    data = (samples_dir / "IT01234567890_FPR02.xml").read_bytes()
    cache = CheckCache()
    first = cache.sync(data, OPTIONS)
    # max_bytes only matters when the file is over it: a check with another limit reads the same report
    assert cache.sync(data, replace(OPTIONS, max_bytes=len(data) + 1)) is first
    assert cache.sync(data, replace(OPTIONS, skip_extra_schema=True)) is not first
    assert cache.async_(first, OPTIONS) == cache.async_(first, OPTIONS)


def test_cached_checks_find_what_uncached_ones_find_and_change_no_shared_report():
    data = (VARIANTS / "00400_line_without_natura.xml").read_bytes()
    cache = CheckCache()
    expected = _codes(check(data, OPTIONS))
    assert expected == ["00400"]
    for _ in range(2):
        report = check(data, OPTIONS, cache=cache)
        assert _codes(report) == expected and not report.accepted
    shared = cache.sync(data, OPTIONS)
    assert shared.accepted and shared.errors == []  # the synchronous stage alone passed it


def test_a_file_over_the_limit_is_refused_not_cached():
    data = invoice_xml()
    cache = CheckCache()
    small = replace(OPTIONS, max_bytes=100)
    assert [f.code for f in cache.sync(data, small).errors] == ["0033"]
    assert cache.sync(data, OPTIONS).accepted


def test_an_accepted_report_of_stricter_options_is_adopted_for_looser_ones():
    # An upload's check (transmitter, issuer, endpoint) serves its asynchronous stage's options.
    data = invoice_xml()
    upload = replace(OPTIONS, transmitter_id="IT05555550028", require_signed=False, received_date=None)
    report = CheckCache().sync(data, upload)
    assert report.accepted
    cache = CheckCache()
    assert cache.adopt(data, report, upload, OPTIONS)
    assert cache.sync(data, replace(OPTIONS, max_bytes=len(data) + 1)) is report
    assert _codes(check(data, OPTIONS, cache=cache)) == _codes(check(data, OPTIONS))


def test_a_report_is_not_adopted_where_it_may_not_hold():
    data = invoice_xml()
    accepted = CheckCache().sync(data, OPTIONS)
    refused = CheckCache().sync(data, replace(OPTIONS, transmitter_id="IT99999999999"))
    assert accepted.accepted and not refused.accepted
    cases = [
        (refused, replace(OPTIONS, transmitter_id="IT99999999999"), OPTIONS),  # refused: never
        (accepted, OPTIONS, replace(OPTIONS, skip_extra_schema=True)),  # other rules
        (accepted, replace(OPTIONS, skip_extra_schema=True), OPTIONS),
        (accepted, OPTIONS, replace(OPTIONS, transmitter_id="IT05555550028")),  # not checked then
        (accepted, OPTIONS, replace(OPTIONS, require_signed=True)),
        (accepted, OPTIONS, replace(OPTIONS, require_trusted=True)),
        (accepted, OPTIONS, replace(OPTIONS, max_bytes=len(data) - 1)),  # the file is over it
    ]
    for report, made_with, options in cases:
        cache = CheckCache()
        assert not cache.adopt(data, report, made_with, options), (made_with, options)
        assert cache.sync(data, options) is not report  # checked afresh


def test_an_upload_hands_its_stage_the_check_of_a_typical_file_only(clock):
    # The parsed tree waits in memory until the stage runs (invoices/check_cache.py): small files only.
    from varco.invoices.check_cache import checked_at_upload

    upload = CheckOptions(transmitter_id="IT05555550028", require_signed=False)
    small = invoice_xml()
    assert checked_at_upload(small, check_sync(small, upload), upload, clock)

    def pad(root):  # a 40 KB comment: still a valid invoice
        root.append(etree.Comment("x" * 40_000))

    large = invoice_xml(edit=pad)
    report = check_sync(large, upload)
    assert report.accepted and len(large) > 32 * 1024
    assert checked_at_upload(large, report, upload, clock) == {}
