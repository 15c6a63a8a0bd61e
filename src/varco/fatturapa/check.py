"""The two stages of the service's checks (§7.2, §7.3, §7.3a) over one invoice file.

Synchronous, in the service's order, stopping at the first stage that fails (all findings of
that stage are kept): size → unwrap/parse → signed-or-not → XSD → 0094 → issuer → 00313.
Asynchronous: the signature (FATRSM302), then the extra-schema rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal

from lxml import etree

from varco.fatturapa.cades import verify_cades
from varco.fatturapa.envelope import Envelope, open_envelope
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.findings import Finding
from varco.fatturapa.issuer import check_issuer
from varco.fatturapa.parsing import parse_xml, xpath_of
from varco.fatturapa.rules.registry import RuleContext
from varco.fatturapa.rules.runner import run_stage
from varco.fatturapa.schema import declared_format, validate_schema
from varco.fatturapa.signatures import SignatureReport, broken_report
from varco.fatturapa.summary import InvoiceSummary, summarise
from varco.fatturapa.transmitter import check_transmitter
from varco.fatturapa.xades import enveloped_signature, verify_xades


@dataclass(frozen=True)
class CheckOptions:
    """What the checks need to know beyond the file; defaults check the file alone."""

    transmitter_id: str | None = None  # "IT05555550028"; None skips 0094
    transmitter_contacts: tuple[str | None, str | None] | None = None  # (Telefono, Email)
    account_vat: str | None = None  # None: the account is whoever 1.6 implies
    sender_piva: str | None = None  # §4.3 senderPIVA, TD26 only
    skip_extra_schema: bool = False  # §4.3 skipExtraSchema: no 00313, no asynchronous rules
    received_date: date | None = None  # SDI receipt day (00403); required by the async rules
    max_bytes: int = 5 * 1024 * 1024  # §8.1
    require_signed: bool | None = None  # True: uploadSigned; False: upload; None: either
    trust_roots: tuple[bytes, ...] = ()  # PEM/DER CA certificates the signer may chain to
    require_trusted: bool = False  # refuse (FATRSM302) signers not chaining to trust_roots


@dataclass
class Report:
    """The outcome of a check: accepted when there is no finding."""

    accepted: bool
    format: str | None = None  # FPA12 / FPR12 / FSM10
    signature: SignatureReport | None = None
    content: bytes | None = None  # the unwrapped invoice XML
    root: etree._Element | None = None
    errors: list[Finding] = field(default_factory=list)
    summary: InvoiceSummary | None = None
    # What the rules looked up in the tree (header, bodies, parties, detail lines' facts), shared by
    # the synchronous rules, the asynchronous ones and the SDI's controls (sdi_controls.check_sdi).
    lookups: dict[tuple[object, ...], object] = field(default_factory=dict, repr=False, compare=False)
    # The rules' context over `lookups`, built once the XSD accepts the file: the summary and both
    # stages of rules share it (the asynchronous one when its receipt day is the same).
    context: RuleContext | None = field(default=None, repr=False, compare=False)


_DEFAULT = CheckOptions()


def check_sync(data: bytes, options: CheckOptions = _DEFAULT) -> Report:
    """The synchronous checks of an upload (§7.2 codes, 00313 under 0096)."""
    report = Report(accepted=False)
    if len(data) > options.max_bytes:
        return _refuse(report, _size_finding(len(data), options.max_bytes))
    if _is_blank(data):
        return _refuse(report, _empty_finding())
    try:
        envelope = open_envelope(data)
        report.content = envelope.content
        if _is_blank(envelope.content):
            return _refuse(report, _empty_finding())
        report.root = root = parse_xml(envelope.content)
    except FatturaPAError as exc:
        return _refuse(report, exc.finding)
    report.format = declared_format(root)
    report.signature = _verify_signature(envelope, root, options.trust_roots)

    for stage in (_signed_as_required, _schema, _transmitter, _issuer, _extra_schema):
        findings = stage(report, options)
        if findings:
            return _refuse(report, *findings)
    report.accepted = True
    return report


def check_async(report: Report, options: CheckOptions = _DEFAULT) -> list[Finding]:
    """The asynchronous checks of a file that passed the synchronous ones (§7.3, §7.3a)."""
    if report.root is None or report.format is None or not report.accepted:
        return []  # nothing to check: the synchronous stage refused the file
    signature = report.signature
    if signature is not None and (
        not signature.is_intact or (options.require_trusted and not signature.trusted)
    ):
        return [_signature_finding(signature, report.root)]
    if options.skip_extra_schema:
        return []
    if options.received_date is None:
        raise ValueError(
            "CheckOptions.received_date (the SDI receipt day) is required for the asynchronous rules"
        )
    ctx = report.context
    if ctx is None or ctx.received_date != options.received_date:
        ctx = RuleContext(report.root, report.format, options.received_date, memo=report.lookups)
    return run_stage(ctx, "async")


def check(data: bytes, options: CheckOptions = _DEFAULT, cache: CheckCache | None = None) -> Report:
    """Both stages; the asynchronous one runs only when the synchronous one accepts."""
    if cache is not None:
        report = cache.sync(data, options)
        findings = cache.async_(report, options) if report.accepted else []
        return replace(report, errors=[*report.errors, *findings], accepted=report.accepted and not findings)
    report = check_sync(data, options)
    if report.accepted:
        findings = check_async(report, options)
        report.errors.extend(findings)
        report.accepted = not findings
    return report


class CheckCache:
    """Checks of the same bytes with the same options, run once: for callers that check one file
    twice (the service's asynchronous stage, then the SDI simulator in the same transaction). The
    reports it returns are shared: read them, never change them. Keep one only as long as the
    files it holds may stay in memory."""

    def __init__(self) -> None:
        self._sync: dict[tuple[bytes, CheckOptions], Report] = {}
        self._async: dict[tuple[int, CheckOptions], list[Finding]] = {}

    def sync(self, data: bytes, options: CheckOptions = _DEFAULT) -> Report:
        if len(data) > options.max_bytes:  # the one stage where max_bytes matters
            return check_sync(data, options)
        key = (data, replace(options, max_bytes=_DEFAULT.max_bytes))
        if key not in self._sync:
            self._sync[key] = check_sync(data, options)
        return self._sync[key]

    def adopt(self, data: bytes, report: Report, made_with: CheckOptions, options: CheckOptions) -> bool:
        """Take `report`, which `check_sync(data, made_with)` returned, as this cache's synchronous
        report of `data` under `options`, if it holds there: an accepted report whose options
        checked all that `options` check (the same signature roots and extra-schema choice; what
        `options` leave open, such as the transmitter or the issuer, may have been checked).
        Whether it was taken; the caller hands the report over and no longer uses it."""
        same = ("skip_extra_schema", "trust_roots", "require_trusted")
        open_in_options = ("transmitter_id", "transmitter_contacts", "account_vat", "sender_piva")
        holds = (
            report.accepted
            and len(data) <= options.max_bytes
            and all(getattr(made_with, name) == getattr(options, name) for name in same)
            and all(getattr(options, name) in (None, getattr(made_with, name)) for name in open_in_options)
            and options.require_signed in (None, made_with.require_signed)
        )
        if holds:
            self._sync[(data, replace(options, max_bytes=_DEFAULT.max_bytes))] = report
        return holds

    def async_(self, report: Report, options: CheckOptions = _DEFAULT) -> list[Finding]:
        # By the report's identity: this cache holds every report it made, so ids stay unique.
        key = (id(report), replace(options, max_bytes=_DEFAULT.max_bytes))
        if key not in self._async:
            self._async[key] = check_async(report, options)
        return list(self._async[key])


def _verify_signature(
    envelope: Envelope, root: etree._Element, trust_roots: tuple[bytes, ...]
) -> SignatureReport | None:
    """The signature's report (None when unsigned); verified now, judged by check_async."""
    kind: Literal["CAdES", "XAdES"] = "CAdES" if envelope.cades is not None else "XAdES"
    try:
        if envelope.cades is not None:
            return verify_cades(envelope.cades, envelope.encoding, trust_roots)
        if enveloped_signature(root) is not None:
            return verify_xades(envelope.content, root, envelope.encoding, trust_roots)
        return None
    # Hostile bytes reach deep into asn1crypto, pyHanko, signxml and cryptography, which raise
    # many exception types (InvalidVersion, UnsupportedAlgorithm, DocumentInvalid, lazy-parse
    # ValueErrors...): whatever fails, the signature is broken, never the check.
    except Exception as exc:
        return broken_report(kind, envelope.encoding, f"unreadable signature: {exc}")


def _signed_as_required(report: Report, options: CheckOptions) -> list[Finding]:
    signed = report.signature is not None
    if options.require_signed is None or options.require_signed == signed:
        return []
    if signed:
        message = (
            f"upload takes an unsigned invoice, but this one carries a {report.signature.kind} signature"
        )
        hint = "Send signed invoices with uploadSigned."
    else:
        message = "uploadSigned takes a signed invoice (CAdES .p7m or XAdES), but this one is not signed"
        hint = "Send unsigned invoices with upload, or sign the file first."
    return [Finding(code="0002", message=message, stage="sync", hint=hint)]


def _schema(report: Report, options: CheckOptions) -> list[Finding]:
    findings = validate_schema(report.root)
    if not findings:
        # Synchronous rules and the summary do not read the receipt day; date.min only fills it.
        received = options.received_date or date.min
        report.context = RuleContext(report.root, report.format, received, report.lookups)
        report.summary = summarise(report.context)  # the facts it reads serve the rules too
    return findings


def _transmitter(report: Report, options: CheckOptions) -> list[Finding]:
    return check_transmitter(report.root, options.transmitter_id, options.transmitter_contacts)


def _issuer(report: Report, options: CheckOptions) -> list[Finding]:
    return check_issuer(report.root, options.account_vat, options.sender_piva, report.context.header)


def _extra_schema(report: Report, options: CheckOptions) -> list[Finding]:
    if options.skip_extra_schema:
        return []
    return run_stage(report.context, "sync")


def _is_blank(data: bytes) -> bool:
    return not data or data.isspace()  # isspace stops at the first other byte: no copy of a 5 MB file


def _refuse(report: Report, *findings: Finding) -> Report:
    report.errors.extend(findings)
    report.accepted = False
    return report


def _size_finding(size: int, limit: int) -> Finding:
    return Finding(
        code="0033",
        message=f"The file is {size} bytes; the maximum is {limit} bytes",
        stage="sync",
        hint="Reduce the file (e.g. move attachments out of the invoice) below the limit.",
    )


def _empty_finding() -> Finding:
    return Finding(
        code="FATRSM401", message="The XML file is empty", stage="sync", hint="Send the invoice content."
    )


def _signature_finding(signature: SignatureReport, root: etree._Element) -> Finding:
    reason = (
        signature.error
        or f"the signer {signature.signer} does not chain to a trusted certification authority"
    )
    return Finding(
        code="FATRSM302",
        message=f"{signature.kind} signature check failed: {reason}",
        stage="async",
        xpath=xpath_of(element) if (element := enveloped_signature(root)) is not None else None,
        hint="Sign the final file again with a valid certificate, and do not modify it after signing.",
    )
