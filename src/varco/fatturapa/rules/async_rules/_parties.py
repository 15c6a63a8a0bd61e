"""Supplier and client identifiers, read the same way from the ordinary and the simplified format.

Ordinary (FPA12/FPR12): 1.2.1 / 1.4.1 `DatiAnagrafici` hold `IdFiscaleIVA` and `CodiceFiscale`.
Simplified (FSM10): 1.2 `CedentePrestatore` holds them directly and the client keeps them in
1.3.1 `IdentificativiFiscali`; so the element numbers differ and travel with the party.
"""

from __future__ import annotations

from dataclasses import dataclass

from varco.fatturapa.rules.async_rules._xml import Element, text
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


@dataclass(frozen=True)
class Party:
    """One party's fiscal identifiers, with their elements (for xpaths) and element numbers."""

    block: Element  # DatiAnagrafici / CedentePrestatore / IdentificativiFiscali
    numbers: Numbers
    vat: Element | None  # IdFiscaleIVA
    tax_code_element: Element | None  # CodiceFiscale

    @property
    def country(self) -> str | None:
        return _compact(text(self.vat, "IdPaese"))

    @property
    def country_element(self) -> Element | None:
        return self.vat.find("IdPaese") if self.vat is not None else None

    @property
    def code(self) -> str | None:
        """IdCodice as written (stripped): validation must see what the file says."""
        return text(self.vat, "IdCodice")

    @property
    def code_element(self) -> Element | None:
        return self.vat.find("IdCodice") if self.vat is not None else None

    @property
    def tax_code(self) -> str | None:
        return _compact(text(self.tax_code_element))

    @property
    def vat_id(self) -> str | None:
        """`IT01234560017`: country and code of IdFiscaleIVA, None without one."""
        code = _compact(self.code)
        if self.country and code:
            return self.country + code
        return None

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
    return Party(block, numbers, block.find("IdFiscaleIVA"), block.find("CodiceFiscale"))


def supplier(ctx: RuleContext) -> Party | None:
    """1.2 CedentePrestatore."""
    if ctx.is_simplified:
        return _party(ctx.header.find("CedentePrestatore"), SUPPLIER_SIMPLIFIED)
    return _party(ctx.header.find("CedentePrestatore/DatiAnagrafici"), SUPPLIER_ORDINARY)


def client(ctx: RuleContext) -> Party | None:
    """1.4 (ordinary) / 1.3 (simplified) CessionarioCommittente."""
    if ctx.is_simplified:
        return _party(ctx.header.find("CessionarioCommittente/IdentificativiFiscali"), CLIENT_SIMPLIFIED)
    return _party(ctx.header.find("CessionarioCommittente/DatiAnagrafici"), CLIENT_ORDINARY)


def same_subject(a: Party, b: Party) -> bool | None:
    """Whether two parties are the same subject: by IdFiscaleIVA when both have one, else by
    CodiceFiscale when both have one; None when the identifiers do not allow a comparison."""
    if a.vat_id and b.vat_id:
        return a.vat_id == b.vat_id
    if a.tax_code and b.tax_code:
        return a.tax_code == b.tax_code
    return None
