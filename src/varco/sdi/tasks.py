"""The jobs of the SDI side: customer outcomes handed to the channel, received invoices kept aside."""

from __future__ import annotations

from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi import esito, received


def register(registry: jobs.Registry) -> None:
    registry.add(esito.TRANSMIT, transmit_esito)
    registry.reconciler(received.redeliver_unroutable)


def transmit_esito(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    esito.transmit(uow, int(args["esito_id"]), clock)
