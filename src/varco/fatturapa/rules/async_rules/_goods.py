"""What the simplified-format rules and the invoice summary read of each FSM10 2.2 DatiBeniServizi
block, in one walk over its children."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from varco.fatturapa.rules.async_rules._xml import Element, decimal, text


@dataclass(slots=True)
class GoodsFacts:
    """What the rules read of one 2.2 DatiBeniServizi block, in one walk over its children (the
    first of each, as `find` reads them; Imposta and Aliquota from the first 2.2.3 DatiIVA that
    has one)."""

    element: Element
    amount_element: Element | None = None  # 2.2.2 Importo
    amount: Decimal | None = None
    tax_element: Element | None = None  # 2.2.3.1 Imposta
    tax: Decimal | None = None
    rate_element: Element | None = None  # 2.2.3.2 Aliquota
    rate: Decimal | None = None
    natura_element: Element | None = None  # 2.2.4 Natura

    def vat_values(self) -> list[Decimal]:
        """The values given in 2.2.3.1 Imposta and 2.2.3.2 Aliquota."""
        return [value for value in (self.tax, self.rate) if value is not None]

    def vat_text(self) -> str:
        parts = []
        if (tax := text(self.tax_element)) is not None:
            parts.append(f"2.2.3.1 <Imposta> {tax}")
        if (rate := text(self.rate_element)) is not None:
            parts.append(f"2.2.3.2 <Aliquota> {rate}")
        return " and ".join(parts)


def _goods_facts(goods: Element) -> GoodsFacts:
    facts = GoodsFacts(goods)
    # Plain walks over the block's few children: lxml's tag-filtered iterators cost more to set up.
    # Each value is read where its element is found (`text`, inline: read for every block).
    for item in goods:
        tag = item.tag
        if tag == "Importo":
            if facts.amount_element is None:
                facts.amount_element = item
                facts.amount = decimal((item.text or "").strip() or None)
        elif tag == "Natura":
            if facts.natura_element is None:
                facts.natura_element = item
        elif tag == "DatiIVA":
            tax, rate = facts.tax_element, facts.rate_element
            for value in item:  # the first Imposta and the first Aliquota of this DatiIVA
                name = value.tag
                if name == "Imposta":
                    if tax is None:
                        facts.tax_element = tax = value
                        facts.tax = decimal((value.text or "").strip() or None)
                elif name == "Aliquota" and rate is None:
                    facts.rate_element = rate = value
                    facts.rate = decimal((value.text or "").strip() or None)
    return facts
