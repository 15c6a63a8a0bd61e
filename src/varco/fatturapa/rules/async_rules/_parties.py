"""Supplier and client identifiers, read the same way from the ordinary and the simplified format.

Ordinary (FPA12/FPR12): 1.2.1 / 1.4.1 `DatiAnagrafici` hold `IdFiscaleIVA` and `CodiceFiscale`.
Simplified (FSM10): 1.2 `CedentePrestatore` holds them directly and the client keeps them in
1.3.1 `IdentificativiFiscali`; so the element numbers differ and travel with the party.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from varco.fatturapa.parties import first_children
from varco.fatturapa.rules.async_rules._xml import Element, child, text
from varco.fatturapa.rules.registry import RuleContext


@dataclass(frozen=True)
class Numbers:
    """The specification's element numbers of one party in one format (for messages)."""

    block: str  # the block holding the identifiers: 1.4.1 / 1.3.1
    vat: str  # IdFiscaleIVA: 1.4.1.1 / 1.3.1.1
    country: str  # IdPaese: 1.4.1.1.1 / 1.3.1.1.1
    code: str  # IdCodice: 1.4.1.1.2 / 1.3.1.1.2
    tax_code: str  # CodiceFiscale: 1.4.1.2 / 1.3.1.2


SUPPLIER_ORDINARY = Numbers("1.2.1", "1.2.1.1", "1.2.1.1.1", "1.2.1.1.2", "1.2.1.2")
CLIENT_ORDINARY = Numbers("1.4.1", "1.4.1.1", "1.4.1.1.1", "1.4.1.1.2", "1.4.1.2")
SUPPLIER_SIMPLIFIED = Numbers("1.2", "1.2.1", "1.2.1.1", "1.2.1.2", "1.2.2")
CLIENT_SIMPLIFIED = Numbers("1.3.1", "1.3.1.1", "1.3.1.1.1", "1.3.1.1.2", "1.3.1.2")


def _compact(value: str | None) -> str | None:
    return value.replace(" ", "").upper() if value else None


@dataclass(slots=True)  # not frozen: built twice for every file, and frozen costs 5x as much to build
class Party:
    """One party's fiscal identifiers, with their elements (for xpaths) and element numbers.
    Several rules read each value: `_party` derives them all once per document (read them only)."""

    block: Element  # DatiAnagrafici / CedentePrestatore / IdentificativiFiscali
    numbers: Numbers
    vat: Element | None  # IdFiscaleIVA
    tax_code_element: Element | None  # CodiceFiscale
    country_element: Element | None  # IdFiscaleIVA/IdPaese
    code_element: Element | None  # IdFiscaleIVA/IdCodice
    country: str | None  # IdPaese, compacted
    code: str | None  # IdCodice as written (stripped): validation must see what the file says
    tax_code: str | None  # CodiceFiscale, compacted
    vat_id: str | None  # `IT01234560017`: country and code of IdFiscaleIVA, None without one
    # The block's first child of each tag (`first_children`): the summary reads the name there.
    children: dict[object, Element] = field(default_factory=dict, compare=False, repr=False)

    def describe(self) -> str:
        """How the party is identified, for messages: `IdFiscaleIVA IT01234560017, CodiceFiscale ...`."""
        parts = []
        if self.vat_id:
            parts.append(f"IdFiscaleIVA {self.vat_id}")
        if self.tax_code:
            parts.append(f"CodiceFiscale {self.tax_code}")
        return ", ".join(parts) or "no fiscal identifier"


def _party(block: Element | None, numbers: Numbers) -> Party | None:
    if block is None:
        return None
    values = first_children(block)  # one walk over the block's children, not one search per value
    vat, tax_code_element = values.get("IdFiscaleIVA"), values.get("CodiceFiscale")
    ids = first_children(vat)
    country_element, code_element = ids.get("IdPaese"), ids.get("IdCodice")
    country, code = _compact(text(country_element)), text(code_element)
    compact_code = _compact(code)
    return Party(
        block,
        numbers,
        vat,
        tax_code_element,
        country_element,
        code_element,
        country,
        code,
        _compact(text(tax_code_element)),
        country + compact_code if country and compact_code else None,
        values,
    )


def supplier(ctx: RuleContext) -> Party | None:
    """1.2 CedentePrestatore (found once per document: several rules ask)."""
    key = ("supplier", ctx.header)  # by the header: the memo may serve several stages of a document
    try:
        return ctx.memo[key]  # type: ignore[return-value]
    except KeyError:
        return read_header(ctx)[2]


def client(ctx: RuleContext) -> Party | None:
    """1.4 (ordinary) / 1.3 (simplified) CessionarioCommittente (found once per document)."""
    key = ("client", ctx.header)
    try:
        return ctx.memo[key]  # type: ignore[return-value]
    except KeyError:
        return read_header(ctx)[3]


def read_header(
    ctx: RuleContext,
) -> tuple[dict[object, Element], Element | None, Party | None, Party | None]:
    """1.1 DatiTrasmissione (its first child of each tag), SoggettoEmittente and both parties, in one
    walk over the header's few children (the summary reads them all, and so do a dozen rules); kept
    in the memo for `transmission_values`, `supplier` and `client`. A party is the identifiers
    block of the first CedentePrestatore / CessionarioCommittente that has one, as `descendant`
    finds it (the simplified supplier is its first CedentePrestatore)."""
    header, simplified = ctx.header, ctx.is_simplified
    client_tag = "IdentificativiFiscali" if simplified else "DatiAnagrafici"
    transmission = emitter = supplier_block = client_block = None
    for item in header:
        tag = item.tag
        if tag == "DatiTrasmissione":
            if transmission is None:
                transmission = item
        elif tag == "CedentePrestatore":
            if supplier_block is None:
                supplier_block = item if simplified else child(item, "DatiAnagrafici")
        elif tag == "CessionarioCommittente":
            if client_block is None:
                client_block = child(item, client_tag)
        elif tag == "SoggettoEmittente" and emitter is None:
            emitter = item
    memo = ctx.memo
    numbers = (SUPPLIER_SIMPLIFIED, CLIENT_SIMPLIFIED) if simplified else (SUPPLIER_ORDINARY, CLIENT_ORDINARY)
    values = memo.setdefault(("transmission", header), first_children(transmission))
    seller = memo.setdefault(("supplier", header), _party(supplier_block, numbers[0]))
    buyer = memo.setdefault(("client", header), _party(client_block, numbers[1]))
    return values, emitter, seller, buyer  # type: ignore[return-value]


def same_subject(a: Party, b: Party) -> bool | None:
    """Whether two parties are the same subject: by IdFiscaleIVA when both have one, else by
    CodiceFiscale when both have one; None when the identifiers do not allow a comparison."""
    if a.vat_id and b.vat_id:
        return a.vat_id == b.vat_id
    if a.tax_code and b.tax_code:
        return a.tax_code == b.tax_code
    return None
