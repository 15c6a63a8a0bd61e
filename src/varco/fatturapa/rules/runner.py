"""Runs the registered rules over a parsed document."""

from __future__ import annotations

from datetime import date

from lxml import etree

from varco.fatturapa.findings import Finding, Stage

# Importing the rule modules registers their rules in RULES.
from varco.fatturapa.rules import async_rules, sync_rules  # noqa: F401
from varco.fatturapa.rules.async_rules._xml import LOOKUPS
from varco.fatturapa.rules.facts import document_facts
from varco.fatturapa.rules.registry import RuleContext, rules_with


def run_rules(
    root: etree._Element,
    fmt: str,
    received_date: date,
    *,
    stage: Stage | None = None,
    lookups: dict[tuple[object, ...], object] | None = None,
) -> list[Finding]:
    """Every finding of every rule registered for `fmt` (and `stage`, when given), in table order.
    `lookups`: the document's memo of look-ups, shared with the other stages (`RuleContext.memo`)."""
    memo = {} if lookups is None else lookups
    ctx = RuleContext(root=root, format=fmt, received_date=received_date, memo=memo)
    token = LOOKUPS.set(memo)  # for rules that read through `body_facts` and the like
    try:
        return run_stage(ctx, stage)
    finally:
        LOOKUPS.reset(token)


def run_stage(ctx: RuleContext, stage: Stage | None = None) -> list[Finding]:
    """`run_rules` over a context the caller already has (`check` builds one per document)."""
    findings: list[Finding] = []
    # A rule that needs a feature the document lacks has nothing to say: it is not called.
    for spec in rules_with(ctx.format, stage, document_facts(ctx).features):
        findings.extend(spec.check(ctx, spec))  # what spec.run does, without a list per rule
    return findings
