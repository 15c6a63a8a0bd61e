"""Where supplier (1.2) and client (1.4; 1.3 in FSM10) live in each format, and who they are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lxml import etree

from varco.fatturapa.parsing import text_at

Role = Literal["supplier", "customer"]

# Paths from FatturaElettronicaHeader: (identifiers block, name block) per role and layout.
_ORDINARY = {
    "supplier": ("CedentePrestatore/DatiAnagrafici", "CedentePrestatore/DatiAnagrafici/Anagrafica"),
    "customer": ("CessionarioCommittente/DatiAnagrafici", "CessionarioCommittente/DatiAnagrafici/Anagrafica"),
}
_SIMPLIFIED = {
    "supplier": ("CedentePrestatore", "CedentePrestatore"),
    "customer": (
        "CessionarioCommittente/IdentificativiFiscali",
        "CessionarioCommittente/AltriDatiIdentificativi",
    ),
}
_SEAT = {
    ("supplier", False): "CedentePrestatore/Sede/Nazione",
    ("customer", False): "CessionarioCommittente/Sede/Nazione",
    ("supplier", True): "CedentePrestatore/Sede/Nazione",
    ("customer", True): "CessionarioCommittente/AltriDatiIdentificativi/Sede/Nazione",
}


@dataclass(frozen=True)
class Party:
    description: str | None  # Denominazione, or Nome Cognome
    country: str | None  # IdFiscaleIVA/IdPaese, else the seat's Nazione
    vat_code: str | None  # IdFiscaleIVA/IdCodice (without the country)
    fiscal_code: str | None  # CodiceFiscale


def is_simplified(root: etree._Element) -> bool:
    return root.tag.endswith("}FatturaElettronicaSemplificata")


def vat_element(header: etree._Element, role: Role, simplified: bool) -> etree._Element | None:
    """The party's IdFiscaleIVA element (1.2.1.1 / 1.4.1.1; 1.2.1 / 1.3.1.1 in FSM10)."""
    ids = (_SIMPLIFIED if simplified else _ORDINARY)[role][0]
    return header.find(f"{ids}/IdFiscaleIVA")


def vat_number(id_fiscale: etree._Element | None) -> str | None:
    """IdPaese + IdCodice, e.g. IT01234560017."""
    if id_fiscale is None:
        return None
    return f"{id_fiscale.findtext('IdPaese', '')}{id_fiscale.findtext('IdCodice', '')}".strip().upper()


def party(header: etree._Element, role: Role, simplified: bool) -> Party:
    ids, names = (_SIMPLIFIED if simplified else _ORDINARY)[role]
    person = " ".join(n for n in (text_at(header, f"{names}/Nome"), text_at(header, f"{names}/Cognome")) if n)
    return Party(
        description=text_at(header, f"{names}/Denominazione") or person or None,
        country=text_at(header, f"{ids}/IdFiscaleIVA/IdPaese") or text_at(header, _SEAT[role, simplified]),
        vat_code=text_at(header, f"{ids}/IdFiscaleIVA/IdCodice"),
        fiscal_code=text_at(header, f"{ids}/CodiceFiscale"),
    )
