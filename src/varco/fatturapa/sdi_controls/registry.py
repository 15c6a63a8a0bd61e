"""The table of SDI controls: one small function per control, registered with its metadata, as the
contract's rules are (`varco.fatturapa.rules.registry`), in a family of their own.

A control sees the parsed, XSD-valid document (`SdiContext`, a `RuleContext`) and the facts around
the file that the Exchange System knows and a pure library does not: the file's name, and the
sender's history (file names and invoices it sent before), handed in as look-ups by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.registry import ALL_FORMATS, RuleContext


@dataclass(frozen=True)
class InvoiceKey:
    """What makes two invoices the same for 00404 / 00409: supplier, type, number, date (its year)."""

    supplier: str  # country + IdCodice of the CedentePrestatore, e.g. IT01234560017
    document_type: str  # TD01, ...
    number: str
    date: date


@dataclass(frozen=True)
class SdiFacts:
    """What the Exchange System knows beyond the file. Every look-up is optional: a control whose
    fact is missing does not run (`varco validate` has no history; the simulator has)."""

    filename: str | None = None  # as transmitted: IT01234567890_00001.xml(.p7m)
    file_name_seen: Callable[[str], bool] | None = None  # 00002: sent before by this transmitter
    invoice_seen: Callable[[InvoiceKey], bool] | None = None  # 00404: sent before, not refused
    size: int | None = None  # bytes transmitted (00003)


@dataclass(frozen=True)
class SdiContext(RuleContext):
    facts: SdiFacts = field(default_factory=SdiFacts)


Control = Callable[[SdiContext, "ControlSpec"], Iterable[Finding]]


@dataclass(frozen=True)
class ControlSpec:
    code: str  # "00423"
    text: str  # the official description (Italian where the sources give it)
    hint: str  # one-line fix hint
    formats: frozenset[str]
    approximated: bool  # True: the SDI checks a register varco cannot reach; syntax and check digit here
    check: Control = field(compare=False)

    @property
    def stage(self) -> str:
        """As a contract rule's spec has one: `RuleContext.finding` and the shared helpers accept this."""
        return "sdi"

    def run(self, ctx: SdiContext) -> list[Finding]:
        return list(self.check(ctx, self))

    def finding(
        self, ctx: SdiContext, message: str, element: etree._Element | None = None, body: int | None = None
    ) -> Finding:
        approximated = " (approximated offline: the SDI checks its registers)" if self.approximated else ""
        return Finding(
            code=self.code,
            message=f"{message}{approximated}",
            stage="sdi",
            xpath=ctx.xpath_of(element) if element is not None else None,
            body=body,
            hint=self.hint,
        )


CONTROLS: list[ControlSpec] = []


def control(
    code: str, text: str, hint: str, *, formats: frozenset[str] = ALL_FORMATS, approximated: bool = False
) -> Callable[[Control], Control]:
    """Register `check` as the SDI control `code` (several functions may share a code)."""

    def register(check: Control) -> Control:
        CONTROLS.append(ControlSpec(code, text, hint, frozenset(formats), approximated, check))
        return check

    return register


def controls_for(fmt: str) -> list[ControlSpec]:
    return [c for c in CONTROLS if fmt in c.formats]
