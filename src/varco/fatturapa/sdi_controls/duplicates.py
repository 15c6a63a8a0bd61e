"""00404 duplicate invoice (against the sender's history) and 00409 duplicate within the batch.

An invoice is the same as another when supplier, document type, number and date are: the SDI's
wording is "fattura duplicata" on CedentePrestatore, TipoDocumento, Numero, Data (and so year).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from varco.fatturapa.check import Report
from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._parties import supplier
from varco.fatturapa.rules.async_rules._xml import bodies, body_prefix, doc_date, doc_type, text
from varco.fatturapa.sdi_controls.registry import ControlSpec, InvoiceKey, SdiContext, control


def invoice_keys(ctx: SdiContext) -> Iterator[tuple[int, InvoiceKey | None, object]]:
    """(body index, its key or None when an element is missing, the Numero element)."""
    party = supplier(ctx)
    supplier_id = party.vat_id if party is not None else None
    for index, body in bodies(ctx):
        number_element = body.find("DatiGenerali/DatiGeneraliDocumento/Numero")
        number, kind = text(number_element), doc_type(body)
        _, day = doc_date(body)
        if supplier_id and number and kind and day:
            yield index, InvoiceKey(supplier_id, kind, number, day), number_element
        else:
            yield index, None, number_element


def keys_of(report: Report) -> list[InvoiceKey]:
    """The invoices of a checked file, for a caller's register of what the SDI took (00404)."""
    if report.root is None or report.format is None:
        return []
    ctx = SdiContext(root=report.root, format=report.format, received_date=date.min)
    return [key for _, key, _ in invoice_keys(ctx) if key is not None]


def _describe(key: InvoiceKey) -> str:
    return f"{key.document_type} number {key.number} of {key.date.isoformat()} from {key.supplier}"


@control(
    "00404",
    "Fattura duplicata",
    "Give the invoice a new number, or do not send again an invoice the SDI has already delivered.",
)
def duplicate_invoice(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    seen = ctx.facts.invoice_seen
    if seen is None:
        return
    for index, key, element in invoice_keys(ctx):
        if key is not None and seen(key):
            message = f"{body_prefix(ctx, index)}{_describe(key)} was transmitted before and not refused"
            yield spec.finding(ctx, message, element, index if len(ctx.bodies) > 1 else None)


@control(
    "00409",
    "Fattura duplicata nel lotto",
    "Each invoice of a batch needs its own number (or its own type or date).",
)
def duplicate_in_batch(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    if len(ctx.bodies) < 2:
        return
    first: dict[InvoiceKey, int] = {}
    for index, key, element in invoice_keys(ctx):
        if key is None:
            continue
        if key in first:
            message = f"body {index}: {_describe(key)} is the same invoice as body {first[key]}"
            yield spec.finding(ctx, message, element, index)
        else:
            first[key] = index
