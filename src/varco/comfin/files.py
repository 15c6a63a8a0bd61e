"""What a communication's `dataFile` holds: one CAdES-signed XML, or a ZIP of several (§2.7).

Each file is unwrapped and its signature verified with `varco.fatturapa` (CAdES), parsed with the
hardened parser, and validated against the XSD of the declared type. A ZIP is read within the
`archive_*` settings by `varco.fatturapa.archives` (headers never trusted). Refusals carry §7.4 codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from varco.comfin import xsd
from varco.comfin.errors import ComfinRefused
from varco.fatturapa.archives import ArchiveLimits, is_zip, read_zip
from varco.fatturapa.cades import verify_cades
from varco.fatturapa.decoding import decode_base64
from varco.fatturapa.envelope import open_envelope
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import parse_xml, text_at
from varco.settings import Settings

TYPES = ("LI", "DF")


@dataclass(frozen=True)
class Communication:
    name: str  # the entry name in a ZIP, or "dataFile"
    kind: str  # LI | DF
    xml: bytes  # the unwrapped XML
    tax_code: str  # the declarant's tax code (LI Frontespizio/CodiceFiscale, DF the subject's)
    signer: str | None


@dataclass(frozen=True)
class DataFile:
    content: bytes  # what was sent, decoded (a .p7m or a ZIP)
    is_zip: bool
    communications: list[Communication]


def archive_limits(settings: Settings) -> ArchiveLimits:
    """The `archive_*` settings: entries, and bytes counted while inflating (docs/security.md)."""
    return ArchiveLimits(
        settings.archive_max_entries, settings.archive_max_entry_bytes, settings.archive_max_total_bytes
    )


def read(data_file: str | None, kind: str, max_bytes: int, limits: ArchiveLimits) -> DataFile:
    """Decode, unwrap, verify and validate; raises `ComfinRefused` with the first §7.4 code that applies."""
    if kind not in TYPES:
        raise ComfinRefused("AR20", f"comunicationType {kind!r} is not LI or DF")
    if data_file is None or not data_file.strip():
        raise ComfinRefused("AR01", "dataFile is empty or missing")
    try:
        content = decode_base64(data_file)
    except FatturaPAError as exc:
        raise ComfinRefused("AR03", f"dataFile is not valid base64 ({exc.finding.message})") from None
    if not content:
        raise ComfinRefused("AR01", "dataFile decodes to an empty file")
    if len(content) > max_bytes:
        # §8.1: a sent file over the limit is HTTP 413
        raise ComfinRefused(
            "AR03", f"the file is {len(content)} bytes; at most {max_bytes} are accepted", status=413
        )
    if not is_zip(content):
        return DataFile(content, False, [_one("dataFile", content, kind)])
    try:  # entries counted and inflated within the archive_* limits, headers never trusted
        entries = read_zip(content, limits)
    except FatturaPAError as exc:
        raise ComfinRefused("AR03", exc.finding.message) from None
    if not entries:
        raise ComfinRefused("AR01", "the ZIP holds no file")
    return DataFile(content, True, [_one(name, data, kind) for name, data in entries])


def _one(name: str, data: bytes, kind: str) -> Communication:
    where = "" if name == "dataFile" else f"{name}: "
    if not data.strip():
        raise ComfinRefused("AR01", f"{where}the file is empty")
    try:
        envelope = open_envelope(data)
    except FatturaPAError as exc:
        raise ComfinRefused("AR03", f"{where}{exc.finding.message}") from None
    if envelope.cades is None:
        raise ComfinRefused("AR21", f"{where}the XML carries no CAdES signature; send the signed .p7m")
    try:
        report = verify_cades(envelope.cades, envelope.encoding, ())
    # As in fatturapa.check: hostile bytes deep in asn1crypto or pyHanko raise many exception
    # types; whatever fails, the signature is broken, never the request.
    except Exception as exc:
        raise ComfinRefused("AR08", f"{where}unreadable signature: {exc}") from None
    if not report.is_intact:
        raise ComfinRefused("AR08", f"{where}{report.error}")
    try:
        root = parse_xml(envelope.content)
    except FatturaPAError as exc:
        raise ComfinRefused("AR03", f"{where}{exc.finding.message}") from None
    found = xsd.kind_of(root)
    if found is None:
        raise ComfinRefused("AR03", f"{where}root element {root.tag} is neither an LI nor a DF communication")
    if found != kind:
        raise ComfinRefused("AR20", f"{where}the file is a {found} communication, not {kind}")
    problems = xsd.errors(root, kind)
    if problems:
        raise ComfinRefused("AR03", f"{where}{kind} XSD: " + "; ".join(problems))
    return Communication(name, kind, envelope.content, tax_code_of(root, kind), report.signer)


def tax_code_of(root: etree._Element, kind: str) -> str:
    """The declarant: LI `Frontespizio/CodiceFiscale`; DF the issuer (DTE) or the buyer (DTR) of the data."""
    if kind == "LI":
        code = text_at(
            root,
            "*[local-name()='Comunicazione']/*[local-name()='Frontespizio']/*[local-name()='CodiceFiscale']",
        )
        return (code or "").strip().upper()
    subject = "DTE/CedentePrestatoreDTE" if root.find("DTE") is not None else "DTR/CessionarioCommittenteDTR"
    ids = root.find(f"{subject}/IdentificativiFiscali")
    if ids is None:  # ANN (cancellation) names no subject: the declarant block, if any
        return (text_at(root, "DatiFatturaHeader/Dichiarante/CodiceFiscale") or "").upper()
    return (text_at(ids, "CodiceFiscale") or text_at(ids, "IdFiscaleIVA/IdCodice") or "").upper()
