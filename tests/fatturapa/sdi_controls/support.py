"""Helpers for the SDI controls' tests: a valid base invoice to edit, and the controls' findings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from lxml import etree

from tests.fatturapa.cases_support import CASES_DIR, RECEIVED_DATE
from varco.fatturapa import CheckOptions, Finding, check
from varco.fatturapa.sdi_controls import SdiFacts, check_sdi

BASES = {"FPR12": "FPR12.xml", "FPA12": "FPA12.xml", "FSM10": "FSM10.xml", "batch": "FPR12_batch.xml"}


def base(kind: str = "FPR12") -> etree._Element:
    """A fresh tree of a valid base invoice (every contract check and every SDI control passes)."""
    return etree.fromstring((CASES_DIR / "base" / BASES[kind]).read_bytes())


def xml(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def sdi_findings(data: bytes | etree._Element, facts: SdiFacts | None = None) -> list[Finding]:
    """The SDI controls' findings on a file, after the contract's checks read it (as callers do)."""
    content = xml(data) if isinstance(data, etree._Element) else data
    report = check(content, CheckOptions(received_date=RECEIVED_DATE))
    return check_sdi(report, facts or SdiFacts(), RECEIVED_DATE)


def codes(data: bytes | etree._Element, facts: SdiFacts | None = None) -> set[str]:
    return {finding.code for finding in sdi_findings(data, facts)}


def edited(kind: str, edit: Callable[[etree._Element], object]) -> etree._Element:
    root = base(kind)
    edit(root)
    return root


TODAY = date(2026, 11, 23)
