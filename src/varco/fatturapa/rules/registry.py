"""The table of extra-schema rules: one small function per rule, registered with its metadata.

Adding a rule is adding one decorated function (and one test). The runner in
`varco.fatturapa.rules.runner` calls every rule whose `formats` include the file's format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import cache, lru_cache
from typing import Literal

from lxml import etree

from varco.fatturapa.findings import Finding, Stage

Format = Literal["FPA12", "FPR12", "FSM10"]
ALL_FORMATS: frozenset[str] = frozenset({"FPA12", "FPR12", "FSM10"})
ORDINARY: frozenset[str] = frozenset({"FPA12", "FPR12"})
SIMPLIFIED: frozenset[str] = frozenset({"FSM10"})


@dataclass(frozen=True)
class RuleContext:
    """What a rule sees: the parsed, XSD-valid document and the facts around it."""

    root: etree._Element  # the FatturaElettronica / FatturaElettronicaSemplificata root
    format: str  # "FPA12" | "FPR12" | "FSM10" (from the root's `versione`)
    received_date: date  # the day the Exchange System received the file (check 00403)
    # Facts of this document that several rules derive (the parties, each body's facts...), computed
    # once: see `async_rules._parties` and `async_rules._xml`. `check` hands the same memo to every
    # stage of one document, so the sync stage's look-ups serve the async rules and the SDI controls.
    memo: dict[tuple[object, ...], object] = field(default_factory=dict, compare=False, repr=False)
    # Every rule reads these: found once per document, not once per rule.
    header: etree._Element = field(init=False, compare=False, repr=False)
    bodies: list[etree._Element] = field(init=False, compare=False, repr=False)
    is_simplified: bool = field(init=False, compare=False, repr=False)
    # The document's facts (`rules.facts.document_facts`), kept here once read: every rule asks.
    document: object = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: the derived fields are set once, here
        header, bodies = _top_level(self.root, self.memo)
        set_(self, "header", header)
        set_(self, "bodies", bodies)
        set_(self, "is_simplified", self.format == "FSM10")

    def xpath_of(self, element: etree._Element) -> str:
        """Namespace-free absolute path of an element, with 1-based positions: for messages."""
        return element.getroottree().getpath(element)

    def finding(
        self, spec: RuleSpec, message: str, element: etree._Element | None = None, body: int | None = None
    ) -> Finding:
        return Finding(
            code=spec.code,
            message=message,
            stage=spec.stage,
            xpath=self.xpath_of(element) if element is not None else None,
            body=body,
            hint=spec.hint,
        )


def _top_level(
    root: etree._Element, memo: dict[tuple[object, ...], object]
) -> tuple[etree._Element | None, list[etree._Element]]:
    """The header and the bodies of `root`, found once per memo (keyed by the root: a memo never
    answers for another document)."""
    key = ("top", root)
    found = memo.get(key)
    if found is None:
        # One plain walk over the root's few children: cheaper than two tag-filtered iterators.
        header, bodies = None, []
        for item in root:
            tag = item.tag
            if tag == "FatturaElettronicaBody":
                bodies.append(item)
            elif tag == "FatturaElettronicaHeader" and header is None:
                header = item
        found = memo[key] = (header, bodies)
    return found  # type: ignore[return-value]


Check = Callable[[RuleContext, "RuleSpec"], Iterable[Finding]]


@dataclass(frozen=True)
class RuleSpec:
    code: str  # "00400"
    text: str  # the contract's rule text (§7.3)
    hint: str  # one-line fix hint
    stage: Stage
    formats: frozenset[str]
    check: Check = field(compare=False)
    # Features of the document (listed in `rules.facts`; each TipoDocumento is one too) without
    # which the rule has nothing to say: the runner calls it only on a document with one of them.
    # None: called on every document.
    needs: frozenset[str] | None = None

    def run(self, ctx: RuleContext) -> list[Finding]:
        return list(self.check(ctx, self))


RULES: list[RuleSpec] = []


def rule(
    code: str,
    text: str,
    hint: str,
    *,
    stage: Stage = "async",
    formats: frozenset[str] = ALL_FORMATS,
    needs: str | Iterable[str] | None = None,
) -> Callable[[Check], Check]:
    """Register `check` as the rule `code` (several functions may share a code, e.g. per format).
    `needs`: the document feature (or features) the rule reads, when a document with none of
    them cannot break it."""
    wanted = None if needs is None else frozenset((needs,) if isinstance(needs, str) else needs)

    def register(check: Check) -> Check:
        RULES.append(RuleSpec(code, text, hint, stage, frozenset(formats), check, wanted))
        return check

    return register


def rules_for(fmt: str, stage: Stage | None = None) -> tuple[RuleSpec, ...]:
    return _selected(fmt, stage, len(RULES))


@cache
def _selected(fmt: str, stage: Stage | None, registered: int) -> tuple[RuleSpec, ...]:
    """The rules of (`fmt`, `stage`), in table order; `registered` renews the answer when a rule
    is added after a first call."""
    return tuple(r for r in RULES if fmt in r.formats and (stage is None or r.stage == stage))


def rules_with(fmt: str, stage: Stage | None, features: frozenset[str]) -> tuple[RuleSpec, ...]:
    """The rules of (`fmt`, `stage`) that may speak on a document with `features`, in table order."""
    return _applicable(fmt, stage, features, len(RULES))


# Documents share a handful of feature sets: the selection is worked out once for each (bounded:
# a batch file's mix of document types makes a set of its own).
@lru_cache(maxsize=512)
def _applicable(
    fmt: str, stage: Stage | None, features: frozenset[str], registered: int
) -> tuple[RuleSpec, ...]:
    rules = _selected(fmt, stage, registered)
    return tuple(r for r in rules if r.needs is None or not r.needs.isdisjoint(features))
