"""The jobs of the simulated SDI: the steps of a file, the tick that queues due steps, the NE
forwarded to a sender, the esito of a financial communication."""

from __future__ import annotations

from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi.simulator import comfin, engine, outcomes


def register(registry: jobs.Registry) -> None:
    registry.add(engine.PROCESS, process_file)
    registry.add(engine.TICK, tick)
    registry.add(outcomes.FORWARD, outcomes.forward)
    registry.add(comfin.PROCESS, process_communication)
    registry.reconciler(engine.tick)


def process_file(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Run the due steps of one simulated file."""
    engine.process(uow, int(args["file_id"]), clock)


def tick(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    engine.schedule_due(uow, clock)


def process_communication(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Check one communication and send its esito to varco."""
    comfin.process(uow, int(args["file_id"]), clock)
