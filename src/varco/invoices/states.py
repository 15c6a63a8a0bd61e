"""The invoice lifecycle (decisions.md: states 1-10 and `Ricevuta`). The whole table is here, only here."""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Final

from varco.core.errors import VarcoError


class InvoiceState(IntEnum):
    PRESA_IN_CARICO = 1  # accepted, awaiting processing (§3.1)
    ERRORE_ELABORAZIONE = 2  # asynchronous checks failed (§3.1, §7.3a)
    INVIATA = 3  # sent to the Exchange System
    SCARTATA = 4  # NS
    NON_CONSEGNATA = 5  # MC
    RECAPITO_IMPOSSIBILE = 6  # AT
    CONSEGNATA = 7  # RC
    ACCETTATA = 8  # NE with EC01
    RIFIUTATA = 9  # NE with EC02
    DECORRENZA_TERMINI = 10  # DT
    RICEVUTA = 11  # a received invoice (direction "in")

    @property
    def label(self) -> str:
        return LABELS[self]

    @classmethod
    def parse(cls, value: str | int) -> InvoiceState:
        """A status filter accepts the label or the number (decisions.md); a label in any case and
        spacing (`Presa in carico`, `PRESA IN CARICO`, `presa  in carico`), as clients send it."""
        text = str(value).strip()
        if text in _BY_NUMBER:
            return _BY_NUMBER[text]
        found = _BY_LABEL.get(_label_key(text))
        if found is None:
            raise ValueError(f"unknown invoice state {value!r}")
        return found


def _label_key(text: str) -> str:
    return " ".join(text.split()).casefold()


LABELS: Final[dict[InvoiceState, str]] = {
    InvoiceState.PRESA_IN_CARICO: "Presa in carico",
    InvoiceState.ERRORE_ELABORAZIONE: "Errore elaborazione",
    InvoiceState.INVIATA: "Inviata",
    InvoiceState.SCARTATA: "Scartata",
    InvoiceState.NON_CONSEGNATA: "Non consegnata",
    InvoiceState.RECAPITO_IMPOSSIBILE: "Recapito impossibile",
    InvoiceState.CONSEGNATA: "Consegnata",
    InvoiceState.ACCETTATA: "Accettata",
    InvoiceState.RIFIUTATA: "Rifiutata",
    InvoiceState.DECORRENZA_TERMINI: "Decorrenza termini",
    InvoiceState.RICEVUTA: "Ricevuta",
}
_BY_NUMBER: Final[dict[str, InvoiceState]] = {str(state.value): state for state in InvoiceState}
_BY_LABEL: Final[dict[str, InvoiceState]] = {_label_key(label): state for state, label in LABELS.items()}


class InvoiceEvent(StrEnum):
    CHECKS_FAILED = "checks_failed"  # asynchronous stage refused the file
    SENT = "sent"  # handed to the SDI channel
    NS = "NS"  # notifica di scarto
    MC = "MC"  # mancata consegna
    AT = "AT"  # attestazione di trasmissione con impossibilità di recapito (PA)
    RC = "RC"  # ricevuta di consegna
    NE_EC01 = "NE-EC01"  # notifica esito: accepted by the PA
    NE_EC02 = "NE-EC02"  # notifica esito: refused by the PA
    DT = "DT"  # decorrenza termini (no answer from the PA in 15 days)


S, E = InvoiceState, InvoiceEvent
TRANSITIONS: Final[dict[tuple[InvoiceState, InvoiceEvent], InvoiceState]] = {
    (S.PRESA_IN_CARICO, E.CHECKS_FAILED): S.ERRORE_ELABORAZIONE,
    (S.PRESA_IN_CARICO, E.SENT): S.INVIATA,
    (S.INVIATA, E.NS): S.SCARTATA,
    (S.INVIATA, E.MC): S.NON_CONSEGNATA,
    (S.INVIATA, E.AT): S.RECAPITO_IMPOSSIBILE,
    (S.INVIATA, E.RC): S.CONSEGNATA,
    (S.CONSEGNATA, E.NE_EC01): S.ACCETTATA,
    (S.CONSEGNATA, E.NE_EC02): S.RIFIUTATA,
    (S.CONSEGNATA, E.DT): S.DECORRENZA_TERMINI,
}
FINAL_STATES: Final[frozenset[InvoiceState]] = frozenset(
    {
        S.ERRORE_ELABORAZIONE,
        S.SCARTATA,
        S.NON_CONSEGNATA,
        S.RECAPITO_IMPOSSIBILE,
        S.ACCETTATA,
        S.RIFIUTATA,
        S.DECORRENZA_TERMINI,
        S.RICEVUTA,
    }
)


class IllegalTransition(VarcoError):
    """State change not allowed."""

    status, code = 409, "0001"


def next_state(current: InvoiceState, event: InvoiceEvent) -> InvoiceState:
    try:
        return TRANSITIONS[current, event]
    except KeyError:
        raise IllegalTransition(
            f"{event.value} not allowed from state {current.value} {current.label}"
        ) from None
