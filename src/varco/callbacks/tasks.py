"""The jobs of callbacks: the delivery job and the reconciler.

The job claims an attempt in its transaction and sends the POST only after that transaction
commits (`uow.on_commit`): no database lock (SQLite's is the whole database) is held while a
receiver answers.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from varco.callbacks import delivery, fanout, sender
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.settings import get_settings

log = logging.getLogger("varco.callbacks")


def register(registry: jobs.Registry) -> None:
    registry.add(fanout.DELIVER, deliver)
    registry.reconciler(resume_deliveries)


def deliver(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Claim one delivery attempt; the POST goes out once this transaction has committed."""
    attempt = delivery.claim(uow, int(args["delivery_id"]), clock, get_settings())
    if attempt is not None:
        uow.on_commit(partial(run_attempt, attempt))  # a rollback drops it: the claim did not happen


def run_attempt(attempt: sender.Attempt | None, clock: Clock | None = None) -> None:
    """POST, then record the outcome in a new transaction, which may claim the lane's next delivery:
    then POST that one too. Never raises: a lost outcome leaves the lease to expire, and the
    reconciler sends the delivery again (at-least-once)."""
    clock = clock or current_clock()
    settings = get_settings()
    while attempt is not None:
        sent = attempt
        outcome = sender.post(sent, settings, clock)
        try:
            with unit_of_work() as session:
                attempt = delivery.record_result(session, sent, outcome, clock, settings)
        except Exception:  # see the docstring
            log.exception("callback delivery %s: outcome not recorded", sent.delivery_id)
            return


def resume_deliveries(clock: Clock | None = None) -> list[int]:
    """Wake deliveries whose wake-up was lost or whose attempt never reported back."""
    with unit_of_work() as session:
        return delivery.resume_stalled(session, clock or current_clock(), get_settings())
