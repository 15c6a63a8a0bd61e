"""Transmission format against recipient code and root version (§7.3: 00427, 00428).

The contract's two texts read alike; decisions.md splits them as the Exchange System does:
a recipient code whose length contradicts 1.1.3 is 00427, a 1.1.3 that contradicts the root's
`versione` attribute is 00428. The simplified format has one value and a 7-character code
fixed by its XSD, so both rules are ordinary only.
"""

from __future__ import annotations

from collections.abc import Iterator

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import text, transmission_values, where
from varco.fatturapa.rules.registry import ORDINARY, RuleContext, RuleSpec, rule

CODE_LENGTH = {"FPA12": 6, "FPR12": 7}  # public administration offices: 6; private recipients: 7


@rule(
    "00427",
    "1.1.4 <CodiceDestinatario> has 7 characters with format FPA12, or 6 characters with format FPR12",
    "Use a 6-character office code with FPA12, a 7-character recipient code with FPR12.",
    formats=ORDINARY,
)
def recipient_code_length(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00427: the recipient code's length must match 1.1.3 FormatoTrasmissione."""
    transmission = transmission_values(ctx)
    fmt = text(transmission.get("FormatoTrasmissione"))
    element = transmission.get("CodiceDestinatario")
    code = text(element)
    expected = CODE_LENGTH.get(fmt or "")
    if code is None or expected is None or len(code) == expected:
        return
    yield ctx.finding(
        spec,
        f"1.1.4 <CodiceDestinatario> '{code}' has {len(code)} characters, but 1.1.3 "
        f"<FormatoTrasmissione> {fmt} needs {expected} ({where(element)})",
        element,
    )


@rule(
    "00428",
    "1.1.3 <FormatoTrasmissione> must be FPA12 (recipient code 6 characters) or FPR12 (7 characters)",
    "Make 1.1.3 FormatoTrasmissione equal to the root element's versione attribute.",
    formats=ORDINARY,
)
def format_matches_version(ctx: RuleContext, spec: RuleSpec) -> Iterator[Finding]:
    """00428: 1.1.3 must agree with the `versione` the document declares."""
    element = transmission_values(ctx).get("FormatoTrasmissione")
    fmt = text(element)
    version = ctx.root.get("versione")
    if fmt is None or version is None or fmt == version:
        return
    yield ctx.finding(
        spec,
        f'1.1.3 <FormatoTrasmissione> {fmt} contradicts the root element\'s versione="{version}" '
        f"({where(element)})",
        element,
    )
