"""Queue official e-mail: an outbox row in the caller's transaction, delivered by a job after commit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import func, select

from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.mail.models import MailAttachment, MailMessage


@dataclass(frozen=True)
class Attachment:
    """A file to send: an existing blob (`blob_id`, no copy) or new `content` stored with the message.
    `rendered_from`: the blob is the invoice file of that name and the attachment its PDF, made
    when the message is sent."""

    filename: str
    content_type: str
    blob_id: int | None = None
    content: bytes | None = None
    rendered_from: str | None = None


DELIVER = jobs.Task("mail.deliver", ("message_id",))  # run by mail.tasks.deliver


def queue_message(
    session: UnitOfWork,
    *,
    key: str,
    account_id: int | None,
    to_address: str | None,
    subject: str,
    body: str,
    clock: Clock,
    attachments: Sequence[Attachment] = (),
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
    for position, attachment in enumerate(attachments, start=1):
        blob_id = attachment.blob_id
        if blob_id is None:
            assert attachment.content is not None, "an attachment needs a blob or content"
            # A copy made for the message (e.g. a PDF rendering) is not the account's stored data.
            blob_id = blobs.store(session, attachment.filename, attachment.content, None, clock.now()).id
        session.add(
            MailAttachment(
                message_id=message.id,
                position=position,
                filename=attachment.filename,
                content_type=attachment.content_type,
                blob_id=blob_id,
                rendered_from=attachment.rendered_from,
            )
        )
    session.flush()
    jobs.enqueue(session, DELIVER, key=f"mail:{message.id}", clock=clock, message_id=message.id)
    return message


def outbox_size(session: UnitOfWork) -> int:
    """Messages not delivered yet (/metrics: a growing outbox is SMTP down or a stuck worker)."""
    query = select(func.count()).select_from(MailMessage).where(MailMessage.delivered_at.is_(None))
    return session.scalar(query) or 0


def messages_for(session: UnitOfWork, account_id: int) -> list[MailMessage]:
    """The outbox of one account, oldest first (what an operator or the account was sent)."""
    query = select(MailMessage).where(MailMessage.account_id == account_id).order_by(MailMessage.id)
    return list(session.scalars(query))


def attachment_names(session: UnitOfWork, message_ids: Iterable[int]) -> dict[int, list[str]]:
    """File names attached to each of these messages, in sending order (the admin outbox lists them)."""
    ids = list(message_ids)
    names: dict[int, list[str]] = {message_id: [] for message_id in ids}
    if not ids:
        return names
    query = (
        select(MailAttachment.message_id, MailAttachment.filename)
        .where(MailAttachment.message_id.in_(ids))
        .order_by(MailAttachment.message_id, MailAttachment.position)
    )
    for message_id, filename in session.execute(query):
        names[message_id].append(filename)
    return names
