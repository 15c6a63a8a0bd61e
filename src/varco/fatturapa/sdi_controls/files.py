"""Controls on the transmitted file itself, before its content (00001–00003, 00102, 00106,
00200/00201): they read the file's name and size and the report of the contract's checks, which
has already unwrapped, parsed and validated the file (nothing is parsed twice)."""

from __future__ import annotations

import re

from varco.fatturapa.check import Report
from varco.fatturapa.findings import Finding
from varco.fatturapa.sdi_controls.registry import SdiFacts

# 00003: "5 MB". The sources disagree on 10^6 or 2^20 bytes (sdi-controls.md); the contract's
# 0033 limit is 5 MiB, so 5 MiB here too: a file the intermediary takes is not refused for size.
MAX_BYTES = 5 * 1024 * 1024
MAX_FORMAT_ERRORS = 50  # 00201: the SDI lists at most 50 format errors

# IT + 11–16 alphanumerics (IdPaese + IdCodice of the transmitter), "_", a 5-character
# progressive, then .xml / .xml.p7m / .zip (SDI's naming rule; `[a-zA-Z0-9_.]{9,50}` in SDICoop).
_NAME = re.compile(r"[A-Z]{2}[A-Za-z0-9]{2,28}_[A-Za-z0-9]{1,5}\.(xml|xml\.p7m|zip)", re.IGNORECASE)

TEXTS = {
    "00001": (
        "Nome file non valido",
        "Name the file IdPaese+IdCodice_progressivo.xml (or .xml.p7m), e.g. IT01234567890_00001.xml.",
    ),
    "00002": (
        "Nome file duplicato",
        "Give each transmitted file a new progressive: the SDI never takes a name twice.",
    ),
    "00003": (
        "Le dimensioni del file superano quelle ammesse",
        "Keep the file within 5 MB (move attachments out).",
    ),
    "00102": (
        "File non integro (firma non valida)",
        "Sign the final file again; do not change it after signing.",
    ),
    "00106": (
        "File/archivio vuoto o corrotto",
        "Send a readable file: XML, a CAdES .p7m containing it, or a ZIP of them.",
    ),
    "00200": (
        "File non conforme al formato",
        "Make the element match the FatturaPA schema (see the message).",
    ),
    "00201": ("Riscontrati più di 50 errori di formato", "Fix the format errors listed and validate again."),
}


def _finding(code: str, message: str, xpath: str | None = None, body: int | None = None) -> Finding:
    text, hint = TEXTS[code]
    return Finding(code=code, message=f"{text}: {message}", stage="sdi", xpath=xpath, body=body, hint=hint)


def file_findings(report: Report, facts: SdiFacts) -> list[Finding]:
    """The file-level controls; the document controls run only when these find nothing."""
    findings = []
    name = facts.filename
    if name is not None:
        if not _NAME.fullmatch(name):
            findings.append(_finding("00001", f"{name!r} is not IdPaese+IdCodice_progressivo.xml(.p7m)"))
        elif facts.file_name_seen is not None and facts.file_name_seen(name):
            findings.append(_finding("00002", f"a file named {name} was transmitted before"))
    if facts.size is not None and facts.size > MAX_BYTES:
        findings.append(_finding("00003", f"the file is {facts.size} bytes, over {MAX_BYTES}"))
    if report.root is None:  # the contract's checks could not read it
        reason = report.errors[0].message if report.errors else "unreadable"
        unopened = report.content is None or not report.content.strip()
        findings.append(_finding("00106" if unopened else "00200", reason))
        return findings
    signature = report.signature
    if signature is not None and not signature.is_intact:
        findings.append(
            _finding("00102", signature.error or f"the {signature.kind} signature does not verify")
        )
    return findings + _format_findings(report)


def _format_findings(report: Report) -> list[Finding]:
    """00200 for each XSD error (the first 50, with the precise failure), 00201 past 50."""
    xsd = [f for f in report.errors if f.code == "0092"]
    findings = [_finding("00200", f.message, f.xpath, f.body) for f in xsd[:MAX_FORMAT_ERRORS]]
    if len(xsd) > MAX_FORMAT_ERRORS:
        findings.append(_finding("00201", f"{len(xsd)} format errors or more; the first 50 are listed"))
    return findings
