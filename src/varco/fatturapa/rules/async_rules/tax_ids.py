"""The client's fiscal identifiers (§7.3: 00305, 00306, 00417), ordinary and simplified.

No tax register is reachable offline, so "valid" means well formed with a right check digit
(python-stdnum); existence in the Anagrafe Tributaria is not verified.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from stdnum.eu import vat as eu_vat
from stdnum.it import codicefiscale, iva

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import where
from varco.fatturapa.rules.facts import document_facts
from varco.fatturapa.rules.registry import RuleContext, RuleSpec, rule

# IdPaese is ISO 3166 (GR), the EU VAT prefix of Greece is EL; XI is Northern Ireland.
_EU_VAT_PREFIX = {country.upper(): country.upper() for country in eu_vat.MEMBER_STATES} | {"GR": "EL"}
_ITALIAN_VAT = re.compile(r"[0-9]{11}")
_FOREIGN_SHAPE = re.compile(r"\S*[A-Za-z0-9]\S*")


# An intermediary checks the same clients' identifiers over and over: python-stdnum's answer for a
# value is kept (it depends on the value alone).
_KNOWN_IDENTIFIERS = 4096


@lru_cache(maxsize=_KNOWN_IDENTIFIERS)
def vat_code_problem(country: str, code: str) -> str | None:
    """Why IdCodice `code` is not a VAT number of `country`, None when it is acceptable."""
    if country == "IT":
        # stdnum would forgive spaces and an IT prefix; IdCodice must be the bare 11 digits.
        if not (_ITALIAN_VAT.fullmatch(code) and iva.is_valid(code)):
            return "is not an Italian VAT number (11 digits with a valid check digit)"
        return None
    prefix = _EU_VAT_PREFIX.get(country)
    if prefix is not None:
        # Writers put the number with or without its country prefix: accept both.
        if eu_vat.is_valid(prefix + code) or (code.startswith(prefix) and eu_vat.is_valid(code)):
            return None
        return f"is not a valid {country} VAT number (format or check digit)"
    # Outside the EU stdnum has no reliable per-country VAT rule here: check the shape only.
    if not _FOREIGN_SHAPE.fullmatch(code):
        return "must be one word containing letters or digits"
    return None


@lru_cache(maxsize=_KNOWN_IDENTIFIERS)
def tax_code_problem(code: str) -> str | None:
    """Why CodiceFiscale `code` is invalid: 11 digits (companies) or 16 characters (persons)."""
    if len(code) == 11:
        return None if iva.is_valid(code) else "is not an 11-digit tax code with a valid check digit"
    if len(code) == 16:
        if codicefiscale.is_valid(code):
            return None
        return "is not a 16-character personal tax code with a valid structure and check character"
    return f"has {len(code)} characters; a tax code has 11 (companies) or 16 (persons)"


@rule(
    "00305",
    "1.4.1.1.2 <IdCodice> invalid",
    "Write the client's VAT number as issued (11 digits for IT, with its right check digit).",
)
def client_vat_code(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00305: the client's IdCodice must be a well-formed VAT number of its IdPaese."""
    party = document_facts(ctx).client
    if party is None or party.country is None or party.code is None:
        return
    problem = vat_code_problem(party.country, party.code)
    if problem:
        element = party.code_element
        yield ctx.finding(
            spec,
            f"{party.numbers.code} <IdCodice> '{party.code}' of the client (IdPaese {party.country}) "
            f"{problem} ({where(element)})",
            element,
        )


@rule(
    "00306",
    "1.4.1.2 <CodiceFiscale> invalid",
    "Write the client's tax code as issued: 11 digits for companies, 16 characters for persons.",
)
def client_tax_code(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00306: the client's CodiceFiscale must be a well-formed Italian tax code."""
    party = document_facts(ctx).client
    if party is None or party.tax_code is None:
        return
    problem = tax_code_problem(party.tax_code)
    if problem:
        element = party.tax_code_element
        yield ctx.finding(
            spec,
            f"{party.numbers.tax_code} <CodiceFiscale> '{party.tax_code}' of the client {problem} "
            f"({where(element)})",
            element,
        )


@rule(
    "00417",
    "At least one of 1.4.1.1 <IdFiscaleIVA> and 1.4.1.2 <CodiceFiscale> must be filled; "
    "a filled value must exist in the tax register",
    "Identify the client with its VAT number (IdFiscaleIVA) or its tax code (CodiceFiscale).",
)
def client_identified(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00417: the client needs IdFiscaleIVA or CodiceFiscale (register lookup: not offline)."""
    party = document_facts(ctx).client
    if party is None or party.vat is not None or party.tax_code_element is not None:
        return
    n = party.numbers
    yield ctx.finding(
        spec,
        f"the client has neither {n.vat} <IdFiscaleIVA> nor {n.tax_code} <CodiceFiscale> "
        f"in {n.block} ({where(party.block)})",
        party.block,
    )
