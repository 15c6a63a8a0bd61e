"""Synchronous extra-schema rules of §7.3 (reported under 0096): 00313."""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._parties import client
from varco.fatturapa.rules.async_rules._xml import transmission_values
from varco.fatturapa.rules.registry import RuleContext, RuleSpec, rule


@rule(
    "00313",
    "1.1.4 <CodiceDestinatario> con valore 'XXXXXXX' ammesso solo per fatture emesse nei confronti di "
    "soggetti non residenti: 1.4.1.1.1 <IdPaese> del cessionario/committente diverso da IT",
    "Use CodiceDestinatario XXXXXXX only for a foreign client, and give the client's IdFiscaleIVA.",
    stage="sync",
)
def recipient_xxxxxxx_only_abroad(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """XXXXXXX routes the invoice abroad: the client must have a non-Italian IdFiscaleIVA."""
    code = transmission_values(ctx).get("CodiceDestinatario")
    if code.text != "XXXXXXX":
        return
    number = "1.3.1.1" if ctx.is_simplified else "1.4.1.1"
    party = client(ctx)  # found once per document: the asynchronous rules read it again
    vat = party.vat if party is not None else None
    if vat is None:
        yield ctx.finding(
            spec,
            f"1.1.4 <CodiceDestinatario> is XXXXXXX (line {code.sourceline}) but the client has no "
            f"{number} <IdFiscaleIVA>: XXXXXXX is only for non-resident clients with a foreign VAT id",
            code,
        )
        return
    country = party.country_element
    if country.text == "IT":
        yield ctx.finding(
            spec,
            f"1.1.4 <CodiceDestinatario> is XXXXXXX but the client's {number}.1 <IdPaese> is IT "
            f"(line {country.sourceline}): XXXXXXX is only for non-resident clients",
            country,
        )
