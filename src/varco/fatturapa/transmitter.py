"""0094: 1.1.1 <IdTrasmittente> and 1.1.5 <ContattiTrasmittente> must be the intermediary's (§1)."""

from __future__ import annotations

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.parsing import xpath_of


def check_transmitter(
    root: etree._Element, transmitter_id: str | None, contacts: tuple[str | None, str | None] | None
) -> list[Finding]:
    """0094 findings; `transmitter_id` None skips the check, `contacts` None skips the contacts."""
    if transmitter_id is None:
        return []
    expected = transmitter_id.replace(" ", "").upper()
    transmission = root.find("FatturaElettronicaHeader/DatiTrasmissione")
    id_element = transmission.find("IdTrasmittente")
    actual = f"{id_element.findtext('IdPaese', '')}{id_element.findtext('IdCodice', '')}".strip().upper()
    findings = []
    if actual != expected:
        findings.append(
            _finding(
                f"1.1.1 <IdTrasmittente> is {actual}; it must be the intermediary's {expected}",
                id_element,
                f"Set IdPaese {expected[:2]} and IdCodice {expected[2:]} in 1.1.1 <IdTrasmittente>.",
            )
        )
    # The simplified format (FSM10) has no 1.1.5 block, so only the id applies to it.
    if contacts is not None and root.tag.endswith("}FatturaElettronica"):
        findings.extend(_check_contacts(transmission, contacts))
    return findings


def _check_contacts(transmission: etree._Element, contacts: tuple[str | None, str | None]) -> list[Finding]:
    block = transmission.find("ContattiTrasmittente")
    findings = []
    for name, expected in zip(("Telefono", "Email"), contacts, strict=True):
        if expected is None:
            continue
        element = block.find(name) if block is not None else None
        actual = (element.text or "").strip() if element is not None else None
        matches = actual is not None and (
            actual.lower() == expected.lower() if name == "Email" else actual == expected
        )
        if matches:
            continue
        found = "absent" if actual is None else f"{actual!r}"
        findings.append(
            _finding(
                f"1.1.5 <ContattiTrasmittente>/<{name}> is {found}; "
                f"it must be the intermediary's {expected!r}",
                element if element is not None else (block if block is not None else transmission),
                f"Set 1.1.5 <ContattiTrasmittente>/<{name}> to {expected}.",
            )
        )
    return findings


def _finding(message: str, element: etree._Element, hint: str) -> Finding:
    return Finding(code="0094", message=message, stage="sync", xpath=xpath_of(element), hint=hint)
