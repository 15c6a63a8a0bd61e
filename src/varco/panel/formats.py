"""How the panel shows amounts and invoice states: two decimals in the reader's language, and a
badge whose colour says at a glance whether the invoice got through, failed or is on its way."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from varco.invoices.states import InvoiceState

_OUTCOME: dict[InvoiceState, str] = {
    InvoiceState.PRESA_IN_CARICO: "pending",
    InvoiceState.INVIATA: "pending",
    InvoiceState.ERRORE_ELABORAZIONE: "failed",
    InvoiceState.SCARTATA: "failed",
    InvoiceState.NON_CONSEGNATA: "warning",  # the SDI could not deliver: the file is in the drawer
    InvoiceState.RECAPITO_IMPOSSIBILE: "warning",
    InvoiceState.RIFIUTATA: "failed",
    InvoiceState.CONSEGNATA: "done",
    InvoiceState.ACCETTATA: "done",
    InvoiceState.DECORRENZA_TERMINI: "done",
    InvoiceState.RICEVUTA: "done",
}


def amount(value: float | str | None, lang: str) -> str:
    """`6.1` → `6,10` (Italian) or `6.10` (English), thousands grouped; blank when unknown."""
    if value is None or value == "":
        return ""
    try:
        number = Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)  # as invoices round
    except InvalidOperation:
        return str(value)
    text = f"{number:,.2f}"
    return text.translate(str.maketrans(",.", ".,")) if lang == "it" else text


def outcome(label: str | None) -> str:
    """The badge class of a state label (`Consegnata` → `done`); `unknown` for anything else."""
    if not label:
        return "unknown"
    try:
        return _OUTCOME[InvoiceState.parse(label)]
    except ValueError:
        return "unknown"
