"""The configured channels to the Exchange System (docs/sdi.md, docs/sdicoop.md): the in-process
simulator, or SDICoop (`VARCO_SDI_CHANNEL`)."""

from __future__ import annotations

from varco.sdi.channel import CommunicationChannel, SdiChannel
from varco.sdi.sdicoop_channel import SdicoopChannel
from varco.sdi.simulator.channel import SimulatorChannel
from varco.settings import get_settings


def get_channel() -> SdiChannel:
    """The channel for invoices and customer outcomes."""
    return SdicoopChannel() if get_settings().channel == "sdicoop" else SimulatorChannel()


def get_communication_channel() -> CommunicationChannel:
    """The channel for financial communications (docs/comfin.md)."""
    return SdicoopChannel() if get_settings().channel == "sdicoop" else SimulatorChannel()
