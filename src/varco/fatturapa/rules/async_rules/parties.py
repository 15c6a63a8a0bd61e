"""Who may be supplier and client for a document type (§7.3: 00471-00473, 00475, 00476)."""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._parties import same_subject
from varco.fatturapa.rules.async_rules._xml import body_prefix, where
from varco.fatturapa.rules.facts import document_facts
from varco.fatturapa.rules.registry import ALL_FORMATS, ORDINARY, RuleContext, RuleSpec, rule

# 00471: types where one subject cannot be both supplier and client (TD07 in the simplified format).
DISTINCT_PARTIES = frozenset(
    {"TD01", "TD02", "TD03", "TD06", "TD16", "TD17", "TD18", "TD19", "TD20", "TD24", "TD25", "TD28", "TD07"}
)
SAME_PARTY = frozenset({"TD21", "TD27"})  # 00472: self-invoices (ceiling overrun, self-consumption)
FOREIGN_SUPPLIER = frozenset({"TD17", "TD18", "TD19", "TD28"})  # 00473: integration/self-invoices
LIVIGNO_CAMPIONE = frozenset({"TD17", "TD19"})  # 00473: IdPaese OO allowed
CLIENT_VAT_REQUIRED = frozenset({"TD16", "TD17", "TD18", "TD19", "TD20", "TD22", "TD23", "TD28"})


@rule(
    "00471",
    "For TD01, TD02, TD03, TD06, TD16, TD17, TD18, TD19, TD20, TD24, TD25, TD28 (and TD07 simplified), "
    "supplier and client must differ",
    "Put the real counterparty in CessionarioCommittente, or use TD21/TD27 for a self-invoice.",
    formats=ALL_FORMATS,
)
def parties_differ(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00471: for these types the supplier cannot invoice itself."""
    facts = document_facts(ctx)
    seller, buyer = facts.supplier, facts.client
    if seller is None or buyer is None or not same_subject(seller, buyer):
        return
    for body in facts.bodies:
        kind, index = body.facts.type, body.index
        if kind in DISTINCT_PARTIES:
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}2.1.1.1 <TipoDocumento> {kind} needs a client different from "
                f"the supplier, but both are {seller.describe()} ({where(buyer.block)})",
                buyer.block,
                body=index,
            )


@rule(
    "00472",
    "For TD21 and TD27, supplier and client must be the same",
    "In a TD21/TD27 self-invoice write the issuer's own identifiers as both supplier and client.",
    formats=ORDINARY,
    needs=SAME_PARTY,
)
def parties_same(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00472: a self-invoice (TD21, TD27) names the same subject on both sides."""
    facts = document_facts(ctx)
    seller, buyer = facts.supplier, facts.client
    if seller is None or buyer is None or same_subject(seller, buyer):
        return
    for body in facts.bodies:
        kind, index = body.facts.type, body.index
        if kind in SAME_PARTY:
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}2.1.1.1 <TipoDocumento> {kind} is a self-invoice: the client "
                f"({buyer.describe()}) must be the supplier ({seller.describe()}) ({where(buyer.block)})",
                buyer.block,
                body=index,
            )


@rule(
    "00473",
    "For TD17, TD18, TD19, TD28 the supplier country 1.2.1.1.1 must not be IT (OO allowed for TD17 and "
    "TD19 for residents of two special localities; for TD28 it must be SM); ordinary invoices only",
    "Integration documents name the foreign supplier: put its country in 1.2.1.1.1 (SM for TD28).",
    formats=ORDINARY,
    needs=FOREIGN_SUPPLIER,
)
def foreign_supplier(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00473: reverse-charge integration documents are for purchases from abroad."""
    facts = document_facts(ctx)
    seller = facts.supplier
    if seller is None or seller.country is None:
        return
    country = seller.country
    for body in facts.bodies:
        kind, index = body.facts.type, body.index
        if kind not in FOREIGN_SUPPLIER:
            continue
        if kind == "TD28":
            allowed = country == "SM"
            rule_text = "must be SM"
        elif country == "OO":
            allowed = kind in LIVIGNO_CAMPIONE
            rule_text = "may be OO only for TD17 and TD19"
        else:
            allowed = country != "IT"
            rule_text = "must not be IT"
        if not allowed:
            element = seller.country_element
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}1.2.1.1.1 <IdPaese> of the supplier is {country}, but for "
                f"2.1.1.1 <TipoDocumento> {kind} it {rule_text} ({where(element)})",
                element,
                body=index,
            )


@rule(
    "00475",
    "For TD16, TD17, TD18, TD19, TD20, TD22, TD23, TD28, the client's 1.4.1.1 <IdFiscaleIVA> must be present",
    "Add the client's VAT number (1.4.1.1 IdFiscaleIVA): these document types require it.",
    formats=ORDINARY,
    needs=CLIENT_VAT_REQUIRED,
)
def client_vat_present(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00475: integration documents and self-invoices need the client's VAT number."""
    facts = document_facts(ctx)
    buyer = facts.client
    if buyer is None or buyer.vat is not None:
        return
    for body in facts.bodies:
        kind, index = body.facts.type, body.index
        if kind in CLIENT_VAT_REQUIRED:
            yield ctx.finding(
                spec,
                f"{body_prefix(ctx, index)}2.1.1.1 <TipoDocumento> {kind} requires the client's 1.4.1.1 "
                f"<IdFiscaleIVA>, which is missing ({where(buyer.block)})",
                buyer.block,
                body=index,
            )


@rule(
    "00476",
    "Supplier country 1.2.1.1.1 and client country 1.4.1.1.1 must not both differ from IT",
    "At least one party must be Italian: check 1.2.1.1.1 and 1.4.1.1.1 IdPaese.",
    formats=ALL_FORMATS,
)
def one_party_italian(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00476: the Exchange System carries invoices with at least one Italian party."""
    facts = document_facts(ctx)
    seller, buyer = facts.supplier, facts.client
    if seller is None or buyer is None or seller.country is None or buyer.country is None:
        return
    if seller.country != "IT" and buyer.country != "IT":
        element = buyer.country_element
        yield ctx.finding(
            spec,
            f"supplier {seller.numbers.country} <IdPaese> {seller.country} and client "
            f"{buyer.numbers.country} <IdPaese> {buyer.country} are both foreign; one must be IT "
            f"({where(element)})",
            element,
        )
