"""Communication jobs: send to the SDI, seal the package; a reconciler for AR06/AR07 and unsealed ones."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from varco.comfin import service
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work

log = logging.getLogger("varco.comfin")


@jobs.job(service.TRANSMIT_JOB)
def transmit(session: Session, args: dict[str, Any], clock: Clock) -> None:
    """Send one accepted communication through the SDI channel."""
    service.transmit(session, int(args["request_pk"]), clock)


@jobs.job(service.SEAL_JOB)
def seal(session: Session, args: dict[str, Any], clock: Clock) -> None:
    """Seal the preservation package of one answered communication."""
    service.seal(session, int(args["request_pk"]), clock)


@jobs.reconciler
def resolve_stuck(clock: Clock | None = None) -> dict[str, list[int]]:
    """AR06: not transmitted in time; AR07: no esito in time; seal answered ones left unsealed."""
    from varco.settings import get_settings

    clock, settings = clock or current_clock(), get_settings()
    now = clock.now()
    done: dict[str, list[int]] = {"AR06": [], "AR07": [], "sealed": []}
    with unit_of_work() as session:
        unsent = service.stuck(session, sent=False, before=now - settings.comfin_send_deadline)
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
        except Exception:  # noqa: BLE001 - one broken request must not stop the others; retried next minute
            log.exception("sealing communication %s failed", pk)
    return done
