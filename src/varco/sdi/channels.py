"""The configured channels to the Exchange System (docs/sdi.md): the in-process simulator."""

from __future__ import annotations

from varco.sdi.channel import CommunicationChannel, SdiChannel
from varco.sdi.simulator.channel import SimulatorChannel


def get_channel() -> SdiChannel:
    """The channel for invoices and customer outcomes."""
    return SimulatorChannel()


def get_communication_channel() -> CommunicationChannel:
    """The channel for financial communications (docs/comfin.md)."""
    return SimulatorChannel()
