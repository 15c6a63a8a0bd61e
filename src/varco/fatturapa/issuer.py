"""§1 issuer rules: may this account issue this invoice? Failures are 0093; senderPIVA misuse 0002.

0093 is the only synchronous code about the account's right to issue for a VAT number, so every
issuer failure uses it (docs/fatturapa.md).
"""

from __future__ import annotations

import re

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.parsing import xpath_of
from varco.fatturapa.parties import element_at, is_simplified, vat_element, vat_number

# §1: "Allowed document types for self-billed invoices".
SELF_BILLING_TYPES = frozenset(
    {"TD01", "TD16", "TD17", "TD18", "TD19", "TD20", "TD21", "TD22", "TD23", "TD26", "TD27"}
)
_SENDER_PIVA = re.compile(r"[A-Z]{2}[0-9]+")  # §4.3: "two letters followed by digits"
_ALLOWED = ", ".join(sorted(SELF_BILLING_TYPES))
_TIPO_DOCUMENTO = "DatiGenerali/DatiGeneraliDocumento/TipoDocumento"


def check_issuer(
    root: etree._Element,
    account_vat: str | None,
    sender_piva: str | None,
    header: etree._Element | None = None,
) -> list[Finding]:
    """0002 for a misused senderPIVA, then 0093 for each issuer rule the invoice breaks. `header`:
    the root's FatturaElettronicaHeader, when the caller has found it already (`check` has)."""
    if header is None:
        header = next(root.iterchildren("FatturaElettronicaHeader"))
    simplified = is_simplified(root)
    n_emitter, n_client = ("1.4", "1.3") if simplified else ("1.6", "1.4")
    emitter = element_at(header, "SoggettoEmittente")
    if sender_piva is None and account_vat is None:  # `varco validate`: only the emitter matters
        return _check_emitter(root, emitter, n_emitter)
    supplier = vat_element(header, "supplier", simplified)
    client = vat_element(header, "customer", simplified)
    findings = _check_sender_piva(root, sender_piva, vat_number(supplier), vat_number(client))
    sender_ok = sender_piva is not None and not findings
    findings += _check_emitter(root, emitter, n_emitter)
    if account_vat is None or (emitter is not None and emitter.text == "TZ"):
        return findings  # TZ is refused whoever sends it

    if sender_ok:
        issuer, label, element = sender_piva, "senderPIVA", header
    elif emitter is not None and emitter.text == "CC":
        issuer, label, element = vat_number(client), f"the client's {n_client}.1.1 <IdFiscaleIVA>", client
    else:
        issuer, label, element = vat_number(supplier), "the supplier's 1.2.1.1 <IdFiscaleIVA>", supplier
    account = _normalise(account_vat)
    if issuer == account:
        return findings
    role = "the supplier" if emitter is None else "the self-billing client (SoggettoEmittente CC)"
    findings.append(
        _refused(
            f"The account's VAT number {account} is not the issuer's: {label} is {issuer or 'absent'} "
            f"(the account must be {role})",
            element if element is not None else header,
            f"Send the invoice from the account of {issuer or 'the issuer'}, or fix {label}.",
        )
    )
    return findings


def _check_emitter(root: etree._Element, emitter: etree._Element | None, number: str) -> list[Finding]:
    """TZ is refused; CC (self-billing) allows only the §1 document types, body by body."""
    if emitter is None:
        return []
    if emitter.text == "TZ":
        message = (
            f"{number} <SoggettoEmittente> is TZ (issued by a third party): the service issues only "
            "as the supplier or, for self-billing (CC), as the client"
        )
        hint = "Issue the invoice as the supplier (omit SoggettoEmittente) or as the client (CC)."
        return [_refused(message, emitter, hint)]
    findings = []
    for index, body in enumerate(root.iterfind("FatturaElettronicaBody"), start=1):
        kind = body.find(_TIPO_DOCUMENTO)
        if kind.text not in SELF_BILLING_TYPES:
            message = (
                f"2.1.1.1 <TipoDocumento> is {kind.text} in a self-billed invoice "
                f"({number} <SoggettoEmittente> CC); allowed: {_ALLOWED}"
            )
            hint = "Use a self-billing document type, or remove SoggettoEmittente CC."
            findings.append(_refused(message, kind, hint, body=index))
    return findings


def _check_sender_piva(
    root: etree._Element, sender_piva: str | None, supplier: str | None, client: str | None
) -> list[Finding]:
    if sender_piva is None:
        return []
    hint = "Use senderPIVA only for TD26, as country code plus VAT number of the supplier or the client."
    if not _SENDER_PIVA.fullmatch(sender_piva):
        return [_bad_input(f"senderPIVA {sender_piva!r} must be two letters followed by digits", hint)]
    findings = []
    for index, body in enumerate(root.iterfind("FatturaElettronicaBody"), start=1):
        kind = body.find(_TIPO_DOCUMENTO)
        if kind.text != "TD26":
            findings.append(
                _bad_input(
                    f"senderPIVA is only for TD26 documents; 2.1.1.1 <TipoDocumento> is {kind.text}",
                    hint,
                    xpath_of(kind),
                    index,
                )
            )
    if not findings and sender_piva not in (supplier, client):
        findings.append(
            _bad_input(
                f"senderPIVA {sender_piva} is neither the supplier's VAT number ({supplier or 'absent'}) "
                f"nor the client's ({client or 'absent'})",
                hint,
            )
        )
    return findings


def _normalise(vat: str) -> str:
    compact = vat.replace(" ", "").upper()
    return f"IT{compact}" if compact.isdigit() else compact  # a bare number is Italian


def _refused(message: str, element: etree._Element, hint: str, body: int | None = None) -> Finding:
    return Finding(code="0093", message=message, stage="sync", xpath=xpath_of(element), body=body, hint=hint)


def _bad_input(message: str, hint: str, xpath: str | None = None, body: int | None = None) -> Finding:
    return Finding(code="0002", message=message, stage="sync", xpath=xpath, body=body, hint=hint)
