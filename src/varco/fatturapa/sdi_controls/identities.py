"""SDI controls on identities: the transmitter (00300), the supplier (00301, 00302), the fiscal
representatives (00303, 00304) and the recipient's PEC address (00330). See docs/sdi-controls.md.

The SDI looks the identifiers up in the Anagrafe Tributaria; offline they are checked as the
contract's 00305/00306 check the client's (`vat_code_problem`, `tax_code_problem`): syntax and
check digit, hence `approximated=True`.

Element numbers differ between the formats. Ordinary (FPA12/FPR12): transmitter 1.1.1, supplier
1.2.1, supplier's fiscal representative 1.3.1 (with a CodiceFiscale, 1.3.1.2), client's fiscal
representative 1.4.4 (IdFiscaleIVA only), PECDestinatario 1.1.6. Simplified (FSM10), numbered in
its XSD's order: supplier 1.2 (IdFiscaleIVA 1.2.1, CodiceFiscale 1.2.2), supplier's representative
1.2.8, client's representative 1.3.2.6 (IdFiscaleIVA only: so 00304 is ordinary only),
PECDestinatario 1.1.5.

00311 (1.1.4 CodiceDestinatario non valido) has no function here: what can be refused without the
SDI's register of recipient codes already is. The XSD allows only capitals and digits
([A-Z0-9]{6,7}; FSM10 exactly 7), the contract's 00427 refuses a length that contradicts 1.1.3
(so 0000000 and XXXXXXX with FPA12, 999999 with FPR12), 00313 refuses XXXXXXX for an Italian
client; 999999 with FPA12 is allowed; any other code may be in the register.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._parties import supplier
from varco.fatturapa.rules.async_rules._xml import Element, text, where
from varco.fatturapa.rules.async_rules.tax_ids import tax_code_problem, vat_code_problem
from varco.fatturapa.rules.registry import ORDINARY
from varco.fatturapa.sdi_controls.registry import ControlSpec, SdiContext, control

# A foreign transmitter's IdCodice: shape only, as the contract's foreign VAT numbers outside the EU.
_ONE_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")
_PERSONAL_TAX_CODE = re.compile(r"[A-Z0-9]{16}")

# The Exchange System's own PEC mailboxes are sdi01@pec.fatturapa.it, sdi02@..., and the domain is
# its own: no recipient can read mail there.
SDI_PEC_DOMAIN = "pec.fatturapa.it"
_SDI_MAILBOX = re.compile(r"sdi[0-9]+@pec\.fatturapa\.it", re.IGNORECASE)


def _shown(value: str) -> str:
    """A value for a message: as written, quoted only when it holds spaces."""
    return repr(value) if any(ch.isspace() for ch in value) else value


def transmitter_code_problem(country: str, code: str) -> str | None:
    """Why the transmitter's IdCodice is not an identifier of `country`, None when acceptable.

    An Italian transmitter is a company (VAT number) or a person (16-character tax code), written
    bare and in capitals as VAT numbers must be; a foreign one is checked for its shape only."""
    if country != "IT":
        return None if _ONE_WORD.fullmatch(code) else "must be one word containing letters or digits"
    if vat_code_problem("IT", code) is None:
        return None
    if _PERSONAL_TAX_CODE.fullmatch(code):
        return tax_code_problem(code)  # None for a valid personal tax code
    if len(code) == 16:
        return "is not a personal tax code: it must be 16 capital letters and digits"
    return (
        "is neither an Italian VAT number (11 digits with a valid check digit) nor a personal "
        "tax code (16 characters with a valid check character)"
    )


@control(
    "00300",
    "1.1.1.2 <IdCodice> non valido",
    "Write the transmitter's IdCodice as issued: for IT an 11-digit VAT number or a 16-character tax code.",
    approximated=True,
)
def transmitter_code(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00300: 1.1.1.2, the transmitter's IdCodice (same number in both formats)."""
    identity = ctx.header.find("DatiTrasmissione/IdTrasmittente")
    element = identity.find("IdCodice") if identity is not None else None
    country, code = text(identity, "IdPaese"), text(element)
    if country is None or code is None:
        return
    problem = transmitter_code_problem(country, code)
    if problem:
        message = f"1.1.1.2 IdCodice {_shown(code)} of the transmitter (IdPaese {country}, {where(element)}) "
        yield spec.finding(ctx, message + problem, element)


@control(
    "00301",
    "1.2.1.1.2 <IdCodice> non valido",
    "Write the supplier's VAT number as issued (11 digits for IT, with its right check digit).",
    approximated=True,
)
def supplier_vat_code(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00301: the supplier's IdFiscaleIVA/IdCodice (ordinary 1.2.1.1.2, simplified 1.2.1.2)."""
    party = supplier(ctx)
    if party is None or party.country is None or party.code is None:
        return
    problem = vat_code_problem(party.country, party.code)
    if problem:
        element = party.code_element
        yield spec.finding(
            ctx,
            f"{party.numbers.code} IdCodice {_shown(party.code)} of the supplier "
            f"(IdPaese {party.country}, {where(element)}) {problem}",
            element,
        )


@control(
    "00302",
    "1.2.1.2 <CodiceFiscale> non valido",
    "Write the supplier's tax code as issued: 11 digits for companies, 16 characters for persons.",
    approximated=True,
)
def supplier_tax_code(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00302: the supplier's CodiceFiscale (ordinary 1.2.1.2, simplified 1.2.2)."""
    party = supplier(ctx)
    if party is None or party.tax_code is None:
        return
    problem = tax_code_problem(party.tax_code)
    if problem:
        element = party.tax_code_element
        yield spec.finding(
            ctx,
            f"{party.numbers.tax_code} CodiceFiscale {party.tax_code} of the supplier ({where(element)}) "
            f"{problem}",
            element,
        )


def representatives(ctx: SdiContext) -> Iterator[tuple[str, str, Element]]:
    """(whose representative, IdCodice's element number, its IdFiscaleIVA) of each fiscal
    representative present: the supplier's first, then the client's."""
    header = ctx.header
    if ctx.is_simplified:
        places = (
            ("supplier", "1.2.8.1.2", "CedentePrestatore/RappresentanteFiscale/IdFiscaleIVA"),
            (
                "client",
                "1.3.2.6.1.2",
                "CessionarioCommittente/AltriDatiIdentificativi/RappresentanteFiscale/IdFiscaleIVA",
            ),
        )
    else:
        places = (
            ("supplier", "1.3.1.1.2", "RappresentanteFiscale/DatiAnagrafici/IdFiscaleIVA"),
            ("client", "1.4.4.1.2", "CessionarioCommittente/RappresentanteFiscale/IdFiscaleIVA"),
        )
    for whose, number, path in places:
        vat = header.find(path)
        if vat is not None:
            yield whose, number, vat


@control(
    "00303",
    "1.3.1.1.2 <IdCodice> o 1.4.4.1.2 <IdCodice> non valido",
    "Write the fiscal representative's VAT number as issued (11 digits for IT, with its right check digit).",
    approximated=True,
)
def representative_vat_code(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00303: the IdCodice of the supplier's and of the client's fiscal representative."""
    for whose, number, vat in representatives(ctx):
        element = vat.find("IdCodice")
        country, code = text(vat, "IdPaese"), text(element)
        if country is None or code is None:
            continue
        problem = vat_code_problem(country, code)
        if problem:
            yield spec.finding(
                ctx,
                f"{number} IdCodice {_shown(code)} of the {whose}'s fiscal representative "
                f"(IdPaese {country}, {where(element)}) {problem}",
                element,
            )


@control(
    "00304",
    "1.3.1.2 <CodiceFiscale> non valido",
    "Write the fiscal representative's tax code as issued: 11 digits or 16 characters.",
    formats=ORDINARY,
    approximated=True,
)
def representative_tax_code(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00304: 1.3.1.2, the supplier's fiscal representative's CodiceFiscale (FSM10 has none)."""
    element = ctx.header.find("RappresentanteFiscale/DatiAnagrafici/CodiceFiscale")
    code = text(element)
    if code is None:
        return
    problem = tax_code_problem(code)
    if problem:
        yield spec.finding(
            ctx,
            f"1.3.1.2 CodiceFiscale {_shown(code)} of the supplier's fiscal representative "
            f"({where(element)}) {problem}",
            element,
        )


def sdi_address_problem(address: str) -> str | None:
    """Why `address` belongs to the Exchange System itself, None when it does not."""
    if _SDI_MAILBOX.fullmatch(address):
        return f"is one of the Exchange System's own PEC mailboxes (sdiNN@{SDI_PEC_DOMAIN})"
    domain = address.rpartition("@")[2].lower()
    if domain == SDI_PEC_DOMAIN or domain.endswith("." + SDI_PEC_DOMAIN):
        return f"is an address of the Exchange System's own domain {SDI_PEC_DOMAIN}"
    return None


@control(
    "00330",
    "1.1.6 <PECDestinatario> non valido: è un indirizzo del Sistema di Interscambio",
    "Put the recipient's own PEC address in PECDestinatario, never one of the SDI (pec.fatturapa.it).",
)
def recipient_pec(ctx: SdiContext, spec: ControlSpec) -> Iterator[Finding]:
    """00330: PECDestinatario (ordinary 1.1.6, simplified 1.1.5) must not be the SDI's."""
    element = ctx.header.find("DatiTrasmissione/PECDestinatario")
    address = text(element)
    if address is None:
        return
    problem = sdi_address_problem(address)
    if problem:
        number = "1.1.5" if ctx.is_simplified else "1.1.6"
        yield spec.finding(
            ctx,
            f"{number} PECDestinatario {_shown(address)} ({where(element)}) {problem}: "
            "the SDI would send the invoice to itself",
            element,
        )
