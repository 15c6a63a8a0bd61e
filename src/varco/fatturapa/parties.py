"""Where supplier (1.2) and client (1.4; 1.3 in FSM10) live in each format, and who they are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lxml import etree

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
    """The party of `role` in an XSD-valid header (every step of these paths occurs at most once)."""
    identifiers = element_at(header, (_SIMPLIFIED if simplified else _ORDINARY)[role][0])
    values = first_children(identifiers)  # one walk reads IdFiscaleIVA, CodiceFiscale and the name
    vat = first_children(values.get("IdFiscaleIVA"))
    return party_of(
        header, role, simplified, values, vat.get("IdPaese"), vat.get("IdCodice"), values.get("CodiceFiscale")
    )


def party_of(
    header: etree._Element,
    role: Role,
    simplified: bool,
    identifiers: dict[object, etree._Element],
    country: etree._Element | None,
    code: etree._Element | None,
    fiscal_code: etree._Element | None,
) -> Party:
    """The party of `role` from the children of its identifiers block (`first_children`) and its
    IdPaese, IdCodice and CodiceFiscale elements, as found already (by `party`, or by the rules)."""
    name = _name_values(header, role, simplified, identifiers)
    # The fields in order, positionally: keyword arguments cost a dict at every call of a class.
    return Party(
        string_value(name.get("Denominazione")) or _person(name) or None,  # description
        string_value(country) or string_value(element_at(header, _SEAT[role, simplified])),
        string_value(code),  # vat_code
        string_value(fiscal_code),
    )


def _person(name: dict[object, etree._Element]) -> str:
    """`Nome Cognome`, from what the name block gives of them (only read without a Denominazione)."""
    return " ".join(n for n in (string_value(name.get("Nome")), string_value(name.get("Cognome"))) if n)


def _name_route(ids: str, names: str) -> tuple[str | None, str | None]:
    """Where the name block is, from the identifiers block: itself (None, None), one of its
    children (its tag, None) or a block of its own (None, its path from the header)."""
    if names == ids:
        return None, None
    if names.startswith(f"{ids}/") and "/" not in names[len(ids) + 1 :]:
        return names[len(ids) + 1 :], None
    return None, names


# Worked out once: the summary reads both parties of every file.
_NAME_ROUTES = {
    (role, simplified): _name_route(*(_SIMPLIFIED if simplified else _ORDINARY)[role])
    for role in ("supplier", "customer")
    for simplified in (False, True)
}


def _name_values(
    header: etree._Element, role: Role, simplified: bool, identifiers: dict[object, etree._Element]
) -> dict[object, etree._Element]:
    """The children of the name block, which is the identifiers block itself, one of its children
    (ordinary Anagrafica) or a block of its own (FSM10 client)."""
    step, path = _NAME_ROUTES[role, simplified]
    if step is not None:
        return first_children(identifiers.get(step))
    if path is not None:
        return first_children(element_at(header, path))
    return identifiers


def string_value(element: etree._Element | None) -> str | None:
    """The element's text as XPath `string()` reads it (comments left out); None when empty."""
    if element is None:
        return None
    if len(element) == 0:  # a leaf, as every invoice value is
        return element.text or None
    return "".join(element.itertext()) or None


def first_children(element: etree._Element | None) -> dict[object, etree._Element]:
    """The first child of each tag: one walk instead of one search per value read."""
    found: dict[object, etree._Element] = {}
    if element is not None:
        for item in element:
            found.setdefault(item.tag, item)
    return found


def element_at(element: etree._Element | None, path: str) -> etree._Element | None:
    """The element at a child path whose steps occur at most once (so the first of each step is
    the first match in document order, as XPath would pick)."""
    for step in path.split("/"):
        if element is None:
            return None
        element = _first_child(element, step)
    return element


def _first_child(element: etree._Element, tag: str) -> etree._Element | None:
    # A plain walk over a block's few children costs less than setting up a tag-filtered iterator.
    for item in element:
        if item.tag == tag:
            return item
    return None
