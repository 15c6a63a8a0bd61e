"""Small helpers shared by the asynchronous rules: text getters, decimals, body iteration, messages.

Every rule assumes an XSD-valid document, so mandatory elements exist and numbers parse; the
helpers still tolerate absence (returning None) so that one odd file never crashes the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from datetime import date
from decimal import Decimal, InvalidOperation
from itertools import chain

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.registry import RuleContext, RuleSpec

Element = etree._Element

ZERO = Decimal("0")

# With thousands of detail lines one broken rule could yield thousands of findings: report the
# first few offenders of a rule per body and count the rest in the last message.
MAX_PER_BODY = 10


# Several rules read the same values of every detail line. While `run_rules` runs, lookups are
# memoised here, keyed by the element itself: the key keeps the lxml proxy alive, so the same
# node always comes back as the same object and identity-based keys stay valid.
LOOKUPS: ContextVar[dict[tuple[object, ...], object] | None] = ContextVar("fatturapa_lookups", default=None)
_MISSING = object()


def child(element: Element, tag: str) -> Element | None:
    """First child named `tag`: three times faster than `find` (ElementPath), which matters when
    every rule walks thousands of detail lines."""
    cache = LOOKUPS.get()
    if cache is None:
        return next(element.iterchildren(tag), None)
    key = ("child", element, tag)
    found = cache.get(key, _MISSING)
    if found is _MISSING:
        found = cache[key] = next(element.iterchildren(tag), None)
    return found  # type: ignore[return-value]


def text(element: Element | None, path: str | None = None) -> str | None:
    """Stripped text of `element` (or of its descendant at `path`), None when absent or empty."""
    if element is None:
        return None
    cache = LOOKUPS.get()
    if cache is not None:
        key = ("text", element, path)
        found = cache.get(key, _MISSING)
        if found is _MISSING:
            found = cache[key] = _text(element, path)
        return found  # type: ignore[return-value]
    return _text(element, path)


def _text(element: Element, path: str | None) -> str | None:
    if path is None:
        target = element
    else:
        target = element.find(path) if "/" in path else child(element, path)
    if target is None or target.text is None:
        return None
    value = target.text.strip()
    return value or None


def decimal(value: str | None) -> Decimal | None:
    """The XSD decimal `value` as a Decimal (None when absent or, defensively, unparsable)."""
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def decimal_at(element: Element | None, path: str) -> Decimal | None:
    cache = LOOKUPS.get()
    if cache is None or element is None:
        return decimal(text(element, path))
    key = ("decimal", element, path)
    found = cache.get(key, _MISSING)
    if found is _MISSING:
        found = cache[key] = decimal(text(element, path))
    return found  # type: ignore[return-value]


def iso_date(value: str | None) -> date | None:
    """An xs:date (`2026-10-15`, possibly with a zone suffix, which is ignored) as a date."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def rate_text(value: Decimal) -> str:
    """A rate as the XSD writes it (two decimals): 22 -> `22.00`."""
    return f"{value:.2f}"


def where(element: Element | None) -> str:
    """`XML line 57`, the source line of an element, for messages."""
    line = element.sourceline if element is not None else None
    return f"XML line {line}" if line else "XML line ?"


def bodies(ctx: RuleContext) -> Iterator[tuple[int, Element]]:
    """Every FatturaElettronicaBody with its 1-based index (a batch file holds several)."""
    return enumerate(ctx.bodies, start=1)


def body_prefix(ctx: RuleContext, index: int) -> str:
    """`body 2: ` in a batch file, empty for a single invoice."""
    return f"body {index}: " if len(ctx.bodies) > 1 else ""


def doc_type(body: Element) -> str | None:
    """2.1.1.1 TipoDocumento of a body."""
    return text(body, "DatiGenerali/DatiGeneraliDocumento/TipoDocumento")


def doc_date(body: Element) -> tuple[Element | None, date | None]:
    """2.1.1.3 Data of a body, as element (for the xpath) and value."""
    element = body.find("DatiGenerali/DatiGeneraliDocumento/Data")
    return element, iso_date(text(element))


def detail_lines(body: Element) -> Iterator[Element]:
    """2.2.1 DettaglioLinee of an ordinary body, in document order."""
    cache = LOOKUPS.get()
    if cache is None:
        return body.iterfind("DatiBeniServizi/DettaglioLinee")
    key = ("lines", body)
    lines = cache.get(key)
    if lines is None:
        lines = cache[key] = list(body.iterfind("DatiBeniServizi/DettaglioLinee"))
    return iter(lines)  # type: ignore[arg-type]


def summaries(body: Element) -> Iterator[Element]:
    """2.2.2 DatiRiepilogo of an ordinary body."""
    return body.iterfind("DatiBeniServizi/DatiRiepilogo")


def pension_funds(body: Element) -> Iterator[Element]:
    """2.1.1.7 DatiCassaPrevidenziale of an ordinary body."""
    return body.iterfind("DatiGenerali/DatiGeneraliDocumento/DatiCassaPrevidenziale")


def vat_holders(body: Element) -> Iterator[Element]:
    """Everything with an AliquotaIVA and a Natura: lines, pension-fund blocks, summary blocks."""
    return chain(detail_lines(body), pension_funds(body), summaries(body))


# Element numbers of AliquotaIVA and Natura in a line, a pension-fund block and a summary block.
RATE_AT = ("2.2.1.12", "2.1.1.7.5", "2.2.2.1")
NATURA_AT = ("2.2.1.14", "2.1.1.7.7", "2.2.2.2")


def holder_label(element: Element, numbers: tuple[str, str, str]) -> str:
    """`detail line 3: 2.2.1.12`, `pension-fund block 2.1.1.7 (TC22): 2.1.1.7.5` or
    `summary block 2.2.2: 2.2.2.1`: where a rate or Natura sits, with its element number."""
    line_number, fund_number, summary_number = numbers
    if element.tag == "DettaglioLinee":
        return f"{line_label(element)}: {line_number}"
    if element.tag == "DatiCassaPrevidenziale":
        return f"pension-fund block 2.1.1.7 ({text(element, 'TipoCassa')}): {fund_number}"
    return f"summary block 2.2.2: {summary_number}"


def line_label(line: Element) -> str:
    """`detail line 3`, from 2.2.1.1 NumeroLinea."""
    return f"detail line {text(line, 'NumeroLinea') or '?'}"


def body_findings(
    ctx: RuleContext,
    spec: RuleSpec,
    index: int,
    offenders: list[tuple[Element, str]],
) -> Iterator[Finding]:
    """Findings for one body's offending elements, prefixed with the body, capped at MAX_PER_BODY."""
    prefix = body_prefix(ctx, index)
    shown = offenders[:MAX_PER_BODY]
    hidden = len(offenders) - len(shown)
    for position, (element, message) in enumerate(shown, start=1):
        if hidden and position == len(shown):
            message += f" (and {hidden} more like this in the same body)"
        yield ctx.finding(spec, prefix + message, element, body=index)
