"""The "mail.deliver" job: SMTP when VARCO_SMTP_HOST is set, else a file in `data_dir/mail`.

The job marks the row delivered in the same commit, so a duplicate wake-up sends nothing. Only a
crash between the SMTP server's acceptance and that commit can send a message twice (the
reconciler retries the job): at-least-once, as any outbox without a distributed transaction.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from sqlalchemy import select

from varco.core.blobs import Blob
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.mail.models import MailAttachment, MailMessage
from varco.rendering import service as rendering
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.mail")


def build_email(
    message: MailMessage, settings: Settings, attachments: Sequence[tuple[MailAttachment, bytes | None]] = ()
) -> EmailMessage:
    """The MIME message: the text body, then one part per attachment (multipart/mixed when any)."""
    email = EmailMessage()
    email["From"] = settings.mail_from
    email["To"] = message.to_address or "undisclosed-recipients:;"
    email["Subject"] = message.subject
    email["Date"] = format_datetime(message.created_at)
    email["Message-ID"] = make_msgid(idstring=f"mail{message.id}", domain="varco")
    email["X-Varco-Key"] = message.key
    unrendered = [a.filename for a, content in attachments if content is None]
    email.set_content(message.body + "".join(_UNRENDERED.format(name=name) for name in unrendered))
    for attachment, content in attachments:
        if content is None:
            continue
        maintype, _, subtype = attachment.content_type.partition("/")
        email.add_attachment(content, maintype=maintype, subtype=subtype, filename=attachment.filename)
    return email


_UNRENDERED = (
    "\n{name}: il PDF non e' stato generato (file non leggibile), consultare il pannello di controllo.\n"
    "{name}: the PDF could not be made (unreadable file), see the control panel.\n"
)


def attachments_of(session: UnitOfWork, message_id: int) -> list[tuple[MailAttachment, bytes | None]]:
    """Each attachment with its bytes; a PDF to render is made now, None if its file cannot be read
    (the message then goes without it and says so: a rendering failure never stops a message)."""
    query = (
        select(MailAttachment, Blob.content)
        .join(Blob, Blob.id == MailAttachment.blob_id)
        .where(MailAttachment.message_id == message_id)
        .order_by(MailAttachment.position)
    )
    found: list[tuple[MailAttachment, bytes | None]] = []
    for attachment, content in session.execute(query):
        if attachment.rendered_from is not None:
            try:
                content = rendering.pdf_of(attachment.rendered_from, content)
            except Exception:  # pure computation: an unrenderable file must not stop the mail
                log.exception("mail %s: %s not rendered, sent without it", message_id, attachment.filename)
                content = None
        found.append((attachment, content))
    return found


def send_smtp(email: EmailMessage, settings: Settings) -> None:
    assert settings.smtp_host is not None
    timeout = settings.smtp_timeout_seconds
    if settings.smtp_security == "tls":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(
            settings.smtp_host, settings.smtp_port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=timeout)
    with smtp:
        if settings.smtp_security == "starttls":
            smtp.starttls(context=ssl.create_default_context())
        if settings.smtp_username:
            password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
            smtp.login(settings.smtp_username, password)
        smtp.send_message(email)


def write_file(email: EmailMessage, message: MailMessage, settings: Settings) -> Path:
    """Embedded default: one .eml file per message in data_dir/mail, readable by any mail client."""
    folder = settings.data_dir / "mail"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = message.created_at.strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{stamp}-{message.id:06d}.eml"
    partial = path.with_suffix(".part")
    partial.write_bytes(email.as_bytes())
    os.replace(partial, path)  # a reader never sees half a message
    return path


def deliver(session: UnitOfWork, message_id: int, clock: Clock) -> None:
    """Deliver one outbox message once."""
    message = session.get(MailMessage, message_id, with_for_update=True)
    if message is None or message.delivered_at is not None:
        return
    settings = get_settings()
    email = build_email(message, settings, attachments_of(session, message.id))
    if settings.smtp_host and message.to_address:
        send_smtp(email, settings)
        message.transport, message.location = "smtp", f"{settings.smtp_host}:{settings.smtp_port}"
    else:
        if settings.smtp_host:
            log.warning("mail %s has no recipient address: written to the outbox folder", message.key)
        message.transport, message.location = "file", str(write_file(email, message, settings))
    message.delivered_at = clock.now()
    log.info("mail %s delivered by %s to %s", message.key, message.transport, message.to_address)
