"""The files in examples/ pass every check for the demo accounts: the upload's, the asynchronous
rules and the SDI's own controls (with the demo transmitter and demo-premium as the sender)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from varco.fatturapa import CheckOptions, check
from varco.fatturapa.sdi_controls import check_sdi
from varco.invoices.examples import FORMATS, template

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_example_passes_every_check_and_is_the_packaged_template(fmt):
    content = (EXAMPLES / f"{fmt}.xml").read_bytes()
    assert content == template(fmt)  # `varco demo invoice` starts from the same file
    options = CheckOptions(
        transmitter_id="IT05555550028", account_vat="IT01234560017", received_date=date(2026, 11, 23)
    )
    report = check(content, options)
    assert report.accepted, [f.upload_text for f in report.errors]
    assert check_sdi(report) == []
