"""The jobs of the SDI side: customer outcomes handed to the channel, received invoices kept aside."""

from __future__ import annotations

from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi import esito, received, sdicoop_channel, transmissions


def register(registry: jobs.Registry) -> None:
    registry.add(esito.TRANSMIT, transmit_esito)
    registry.add(sdicoop_channel.CALL, call_sdi)
    registry.reconciler(received.redeliver_unroutable)
    registry.reconciler(transmissions.settle_stalled)


def transmit_esito(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    esito.transmit(uow, int(args["esito_id"]), clock)


def call_sdi(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """One SOAP call owed to the SDI (SDICoop channel): claimed here, made after the commit."""
    transmissions.call(uow, int(args["transmission_id"]), clock)
