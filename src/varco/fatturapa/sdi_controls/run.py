"""`check_sdi`: the Exchange System's controls over a file the contract's checks have read."""

from __future__ import annotations

from datetime import date

from varco.fatturapa.check import Report
from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import LOOKUPS
from varco.fatturapa.sdi_controls.files import file_findings
from varco.fatturapa.sdi_controls.registry import SdiContext, SdiFacts, controls_for

_NO_FACTS = SdiFacts()


def check_sdi(
    report: Report, facts: SdiFacts = _NO_FACTS, received_date: date | None = None
) -> list[Finding]:
    """What the Exchange System would refuse in the file of `report` (from `check` or
    `check_sync`), beyond the contract's codes: the file controls, then, on an XSD-valid
    document, every document control of its format."""
    findings = file_findings(report, facts)
    if findings or report.root is None or report.format is None:
        return findings
    ctx = SdiContext(
        root=report.root,
        format=report.format,
        received_date=received_date or date.min,
        memo=report.lookups,
        facts=facts,
    )
    token = LOOKUPS.set(report.lookups)  # the line look-ups the contract's rules made, and shared
    try:
        for spec in controls_for(report.format):
            findings.extend(spec.run(ctx))
    finally:
        LOOKUPS.reset(token)
    return findings
