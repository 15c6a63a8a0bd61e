"""varco.fatturapa: pure validation of FatturaPA invoice files (no web, no DB, no settings).

`check_sync` runs the upload-time checks (§7.2 and 00313), `check_async` the later ones
(signature, §7.3 asynchronous rules), `check` both. `read_zip` reads an untrusted ZIP within
`ArchiveLimits`. See docs/fatturapa.md.
"""

from varco.fatturapa.archives import ArchiveLimits, read_zip
from varco.fatturapa.check import CheckCache, CheckOptions, Report, check, check_async, check_sync
from varco.fatturapa.decoding import decode_base64
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.findings import Finding
from varco.fatturapa.parties import Party
from varco.fatturapa.signatures import SignatureReport
from varco.fatturapa.summary import BodySummary, InvoiceSummary, extract_summary

__all__ = [
    "ArchiveLimits",
    "BodySummary",
    "CheckCache",
    "CheckOptions",
    "FatturaPAError",
    "Finding",
    "InvoiceSummary",
    "Party",
    "Report",
    "SignatureReport",
    "check",
    "check_async",
    "check_sync",
    "decode_base64",
    "extract_summary",
    "read_zip",
]
