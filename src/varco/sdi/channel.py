"""The channel to the Exchange System (SDI): what varco sends. What comes back is `inbound`.

Both calls run inside the caller's transaction and must not do network I/O there that cannot be
undone: an implementation records what to send and sends it from a job after the commit (the
simulator enqueues its own job; a SDICoop channel would enqueue the SOAP call). docs/sdi.md maps
SDICoop onto this interface. `sdi/channels.py` gives the configured one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from varco.core.clock import Clock
from varco.core.uow import UnitOfWork

if TYPE_CHECKING:
    from varco.invoices.models import Invoice
    from varco.sdi.models import EsitoCommittente


@dataclass(frozen=True)
class OutcomeReceipt:
    """The SDI's immediate answer to a customer outcome (SdIRiceviNotifica: ES01, or ES00 + SE)."""

    accepted: bool
    scarto_filename: str | None = None  # the ScartoEsitoCommittente file, when not accepted
    scarto_xml: bytes | None = None


class SdiChannel(Protocol):
    def send_invoice(self, session: UnitOfWork, invoice: Invoice, content: bytes, clock: Clock) -> str | None:
        """Hand an invoice file to the SDI; returns its IdentificativoSdI, or None when the channel
        records it later (SDICoop: from the SDI's answer, which also moves the invoice to 3).

        Idempotent: an invoice that already has an `sdi_id` is not submitted again.
        """
        ...

    def send_outcome(
        self, session: UnitOfWork, esito: EsitoCommittente, content: bytes, clock: Clock
    ) -> OutcomeReceipt | None:
        """Send a customer outcome (EsitoCommittente XML) on a received invoice; None when the
        channel records the SDI's answer later."""
        ...


@dataclass(frozen=True)
class CommunicationReceipt:
    """The SDI's answer on taking a financial communication (SdITrasmissioneFile): its IDFile and time."""

    file_id: str
    received_at: datetime


class CommunicationChannel(Protocol):
    def send_communication(
        self, session: UnitOfWork, request_pk: int, filename: str, kind: str, content: bytes, clock: Clock
    ) -> CommunicationReceipt | None:
        """Hand a financial communication (LI/DF, .p7m or ZIP) to the SDI; the esito comes back
        later. None when the channel records the IDFile later too."""
        ...
