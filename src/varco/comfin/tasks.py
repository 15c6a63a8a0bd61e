"""Communication jobs: send to the SDI, seal the package; a reconciler for AR06/AR07 and unsealed ones."""

from __future__ import annotations

import logging
from typing import Any

from varco.comfin import inbound, service
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.sdi import sdicoop_channel
from varco.settings import get_settings

log = logging.getLogger("varco.comfin")


def register(registry: jobs.Registry) -> None:
    registry.add(service.TRANSMIT, transmit)
    registry.add(inbound.SEAL, seal)
    registry.reconciler(resolve_stuck)


def transmit(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Send one accepted communication through the SDI channel."""
    service.transmit(session, int(args["request_pk"]), clock)


def seal(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Seal the preservation package of one answered communication."""
    service.seal(session, int(args["request_pk"]), clock)


def resolve_stuck(clock: Clock | None = None) -> dict[str, list[int]]:
    """AR06: not transmitted in time; AR07: no esito in time; seal answered ones left unsealed."""
    clock, settings = clock or current_clock(), get_settings()
    now = clock.now()
    done: dict[str, list[int]] = {"AR06": [], "AR07": [], "sealed": []}
    with unit_of_work() as session:
        unsent = service.stuck(session, sent=False, before=now - settings.comfin_send_deadline)
        # Over SDICoop a Trasmetti whose answer was lost may have arrived: not "not transmitted".
        maybe_sent = sdicoop_channel.may_have_reached(session, "communication", unsent)
        unsent = [pk for pk in unsent if pk not in maybe_sent]
        unanswered = service.stuck(session, sent=True, before=now - settings.comfin_outcome_deadline)
        unsealed = service.unsealed(session, settings.preservation_batch)
    for result, ids, reason in (
        ("AR06", unsent, "not transmitted to the Exchange System within the deadline"),
        ("AR07", unanswered, "no answer from the Exchange System within the deadline"),
    ):
        for pk in ids:
            with unit_of_work() as session:
                service.give_up(session, pk, result, reason, clock)
            done[result].append(pk)
    for pk in unsealed:
        try:
            with unit_of_work() as session:
                service.seal(session, pk, clock)
            done["sealed"].append(pk)
        except Exception:  # one broken request must not stop the others; retried next minute
            log.exception("sealing communication %s failed", pk)
    return done
