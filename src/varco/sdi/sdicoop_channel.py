"""The SDICoop channel: what varco owes the Exchange System becomes a transmission row, committed
with the change that causes it, and the SOAP call is made after the commit (sdi/transmissions.py):
by the worker whose job owed it (an invoice leaving the asynchronous checks), or by a job of its own.

Nothing is known at once: the IdentificativoSdI of an invoice, the IDFile of a communication and
the answer to a customer outcome come back from the job, which records them (the invoice moves to
3 Inviata then). A call the SDI may have received without our knowing (the answer lost, the worker
killed) is not made again until the SDI's own notifications settle it (docs/sdicoop.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.db import detached_row
from varco.core.dialects import per_dialect
from varco.core.models import JobRow
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.sdi.channel import CommunicationReceipt, OutcomeReceipt
from varco.sdi.models import EsitoCommittente, SdiTransmission

CALL = jobs.Task("sdicoop.call", ("transmission_id",))  # run by sdi.tasks.call_sdi

PENDING, IN_FLIGHT, UNKNOWN, DONE, FAILED = "PENDING", "IN_FLIGHT", "UNKNOWN", "DONE", "FAILED"


# The row, unless the same transmission is owed already: the unique (kind, ref_id) decides, in the
# INSERT itself (no look-up first; on PostgreSQL a transaction owing it at the same time waits,
# then inserts nothing). Core: no ORM flush of the whole session for one row.
_OWE = per_dialect(
    lambda insert: (
        insert(SdiTransmission.__table__)
        .on_conflict_do_nothing(index_elements=["kind", "ref_id"])
        .returning(SdiTransmission.__table__.c.id)
    )
)


def owe(
    session: UnitOfWork,
    kind: str,
    ref_id: int,
    filename: str,
    clock: Clock,
    *,
    at: datetime | None = None,
    follow_on: bool = False,
) -> None:
    """The transmission of `kind` for `ref_id` (once: owed again, it is the one there is), and its
    call. `follow_on`: the call's job continues the running job (`jobs.follow_on`): on its first
    attempt the row is claimed in this very transaction and the call made once it commits, with no
    job row and one transaction fewer; anywhere else it is a job of its own."""
    now = clock.now()
    values = {
        "kind": kind,
        "ref_id": ref_id,
        "filename": filename,
        "status": PENDING,
        "attempts": 0,
        "resent": False,
        "next_attempt_at": at or now,
        "created_at": now,
        "updated_at": now,
    }
    row_id = session.connection().execute(_OWE(session), values).scalar()
    if row_id is None:
        return  # owed before: its call is on its way, or made
    row = detached_row(SdiTransmission, values, row_id)
    if follow_on:
        jobs.follow_on(session, CALL, key=_key(row), clock=clock, transmission_id=row_id)
    else:
        wake(session, row, clock)


def settle(session: UnitOfWork, kind: str, ref_id: int, answer_id: str, clock: Clock) -> None:
    """The SDI's notifications answered for a call whose answer was lost: no call any more."""
    row = session.scalar(
        select(SdiTransmission).where(SdiTransmission.kind == kind, SdiTransmission.ref_id == ref_id)
    )
    if row is not None and row.status != DONE:
        row.status, row.answer_id, row.updated_at = DONE, answer_id, clock.now()


def was_resent(session: UnitOfWork, kind: str, ref_id: int) -> bool:
    """Whether the call was made again after an unknown outcome (the SDI may hold two copies)."""
    row = SdiTransmission
    return bool(session.scalar(select(row.resent).where(row.kind == kind, row.ref_id == ref_id)))


def may_have_reached(session: UnitOfWork, kind: str, ref_ids: list[int]) -> set[int]:
    """Of `ref_ids`, those whose call the SDI may have received without our knowing (in flight,
    or UNKNOWN): giving them up as "never transmitted" could be false."""
    if not ref_ids:
        return set()
    row = SdiTransmission
    undecided = row.status.in_((IN_FLIGHT, UNKNOWN))
    query = select(row.ref_id).where(row.kind == kind, row.ref_id.in_(ref_ids), undecided)
    return set(session.scalars(query))


def wake(session: UnitOfWork, row: SdiTransmission, clock: Clock, *, again: bool = False) -> None:
    """A job for the row's next attempt, at `next_attempt_at` (clock time). `again`: the attempt's
    job is gone (failed, or ran before the row was due), so this one needs a key of its own."""
    delay = row.next_attempt_at - clock.now()
    key = _key(row) + (f":{clock.now().timestamp():.0f}" if again else "")
    jobs.enqueue(
        session,
        CALL,
        key=key,
        delay=delay if delay > timedelta() else None,
        clock=clock,
        transmission_id=row.id,
    )


def job_waiting(session: UnitOfWork, row: SdiTransmission) -> bool:
    """Whether the job of the row's next attempt is still to run (its lost wake-up is re-sent by
    the jobs' reconciler)."""
    key = _key(row)
    mine = or_(JobRow.key == key, JobRow.key.startswith(f"{key}:", autoescape=True))
    return session.scalar(select(JobRow.id).where(mine, JobRow.status == "pending").limit(1)) is not None


def _key(row: SdiTransmission) -> str:
    return f"sdicoop:{row.id}:{row.attempts}"


class SdicoopChannel:
    """`SdiChannel` and `CommunicationChannel` over SOAP: every answer comes later, from a job."""

    def send_invoice(self, session: UnitOfWork, invoice: Invoice, content: bytes, clock: Clock) -> str | None:
        """SdIRiceviFile.RiceviFile, owed: the file as stored, under its name."""
        if invoice.sdi_id:
            return invoice.sdi_id
        owe(session, "invoice", invoice.id, invoice.filename, clock, follow_on=True)
        return None

    def send_outcome(
        self, session: UnitOfWork, esito: EsitoCommittente, content: bytes, clock: Clock
    ) -> OutcomeReceipt | None:
        """SdIRiceviNotifica.NotificaEsito, owed: ES01/ES00 are recorded when the SDI answers."""
        owe(session, "esito", esito.id, esito.esito_filename, clock)
        return None

    def send_communication(
        self, session: UnitOfWork, request_pk: int, filename: str, kind: str, content: bytes, clock: Clock
    ) -> CommunicationReceipt | None:
        """SdITrasmissioneFile.Trasmetti, owed: the IDFile is recorded when the SDI answers."""
        owe(session, "communication", request_pk, filename, clock)
        return None
