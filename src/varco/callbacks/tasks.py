"""The delivery job and the reconciler.

The job claims an attempt in its transaction and sends the POST only after that transaction
commits: no database lock (SQLite's is the whole database) is held while a receiver answers.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from varco.callbacks import delivery, sender
from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.settings import get_settings

log = logging.getLogger("varco.callbacks")
_POSTS_KEY = "varco_callback_posts"


@jobs.job(delivery.JOB)
def deliver(session: Session, args: dict[str, Any], clock: Clock) -> None:
    """Claim one delivery attempt; the POST goes out once this transaction has committed."""
    attempt = delivery.claim(session, int(args["delivery_id"]), clock, get_settings())
    if attempt is not None:
        session.info.setdefault(_POSTS_KEY, []).append(attempt)


@event.listens_for(Session, "after_commit")
def _post_after_commit(session: Session) -> None:
    # Nothing may escape an after_commit hook: the exception would leave commit() with the session
    # in 'committed' state, whose rollback raises "no further SQL can be emitted"; the job's own
    # error handling would then fail too, and the claimed delivery would keep no outcome.
    for attempt in session.info.pop(_POSTS_KEY, []):
        try:
            run_attempt(attempt)
        except Exception:  # noqa: BLE001 - the lease expires and the reconciler sends it again
            log.exception("callback delivery %s: attempt not run", attempt.delivery_id)


@event.listens_for(Session, "after_rollback")
def _drop_after_rollback(session: Session) -> None:
    session.info.pop(_POSTS_KEY, None)  # the claim did not happen


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
        except Exception:  # noqa: BLE001 - see the docstring
            log.exception("callback delivery %s: outcome not recorded", sent.delivery_id)
            return


@jobs.reconciler
def resume_deliveries(clock: Clock | None = None) -> list[int]:
    """Wake deliveries whose wake-up was lost or whose attempt never reported back."""
    with unit_of_work() as session:
        return delivery.resume_stalled(session, clock or current_clock(), get_settings())
