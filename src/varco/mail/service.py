"""Queue official e-mail: an outbox row in the caller's transaction, delivered by a job after commit."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from varco.core import jobs
from varco.core.clock import Clock
from varco.mail import delivery  # noqa: F401 - registers the "mail.deliver" job
from varco.mail.models import MailMessage


def queue_message(
    session: Session,
    *,
    key: str,
    account_id: int | None,
    to_address: str | None,
    subject: str,
    body: str,
    clock: Clock,
) -> MailMessage:
    """Add a message to the outbox unless one with this key exists; it exists iff the caller commits."""
    existing = session.scalar(select(MailMessage).where(MailMessage.key == key))
    if existing is not None:
        return existing
    message = MailMessage(
        key=key,
        account_id=account_id,
        to_address=to_address,
        subject=subject,
        body=body,
        created_at=clock.now(),
    )
    session.add(message)
    session.flush()
    jobs.enqueue(session, "mail.deliver", key=f"mail:{message.id}", clock=clock, message_id=message.id)
    return message


def messages_for(session: Session, account_id: int) -> list[MailMessage]:
    """The outbox of one account, oldest first (what an operator or the account was sent)."""
    query = select(MailMessage).where(MailMessage.account_id == account_id).order_by(MailMessage.id)
    return list(session.scalars(query))
