"""§8.4 official e-mail through SMTP: a real local SMTP server (aiosmtpd) receives it exactly once."""

from __future__ import annotations

import json
import socket
from datetime import timedelta
from email import message_from_bytes, policy

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from tests.limits.test_annual import TIERS
from varco.core import jobs
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.models import JobRow
from varco.mail.models import MailMessage
from varco.mail.service import queue_message


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inbox:
    def __init__(self) -> None:
        self.envelopes: list = []

    def to(self, username: str) -> list:
        """Messages about one account (the shared test database may hold other tests' pending mail)."""
        return [e for e in self.envelopes if username.encode() in e.content]

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd hook
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp(configure):
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    configure(smtp_host="127.0.0.1", smtp_port=port, mail_from="varco <limits@varco.test>")
    yield inbox
    controller.stop()


def lock_an_account(client, configure) -> object:
    configure(tiers=json.dumps(TIERS))
    account = make_account(vat_code=SUPPLIER_VAT, tier=0, pec="amministrazione@pec.example.it")
    token = sign_in(client, account.username)
    for _ in range(3):
        body = {"dataFile": b64(invoice_xml())}
        assert client.post("/services/invoice/upload", json=body, headers=bearer(token)).status_code == 200
    return account


def test_the_lock_email_reaches_the_pec_once(client, clock, queue, configure, smtp):
    account = lock_an_account(client, configure)
    queue.drain()
    [envelope] = smtp.to(account.username)
    assert envelope.rcpt_tos == ["amministrazione@pec.example.it"]
    assert envelope.mail_from == "limits@varco.test"
    message = message_from_bytes(envelope.content, policy=policy.default)
    assert f"account {account.username} locked" in message["Subject"]
    assert "annual limit of its tier 0: 3 accepted transmissions in 2026" in message.get_content()
    # duplicate wake-ups and the reconciler send nothing more
    queue.drain()
    clock.advance(timedelta(minutes=10))
    jobs.reconcile(clock)
    queue.drain()
    assert len(smtp.to(account.username)) == 1
    with unit_of_work() as session:
        [mail] = session.scalars(select(MailMessage).where(MailMessage.account_id == account.id)).all()
        assert mail.transport == "smtp" and mail.delivered_at is not None


def test_smtp_down_is_retried_until_delivered(client, clock, queue, configure):
    account = lock_an_account(client, configure)
    inbox, port = Inbox(), free_port()
    configure(smtp_host="127.0.0.1", smtp_port=port, smtp_timeout_seconds=2)
    queue.drain()  # nothing listens yet: the job fails and is recorded
    with unit_of_work() as session:
        [mail] = session.scalars(select(MailMessage).where(MailMessage.account_id == account.id)).all()
        row = session.scalar(select(JobRow).where(JobRow.key == f"mail:{mail.id}"))
        assert mail.delivered_at is None and row.status == "pending" and row.attempts == 1
        assert "Connection refused" in row.last_error or "Errno" in row.last_error
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        clock.advance(timedelta(minutes=3))
        jobs.reconcile(clock)
        queue.drain()
    finally:
        controller.stop()
    assert len(inbox.to(account.username)) == 1


def test_one_message_per_key(db, clock, queue):
    account = make_account()
    with unit_of_work() as session:
        first = queue_message(
            session,
            key="k-once",
            account_id=account.id,
            to_address="a@b.it",
            subject="s",
            body="b",
            clock=current_clock(),
        )
    with unit_of_work() as session:
        again = queue_message(
            session,
            key="k-once",
            account_id=account.id,
            to_address="a@b.it",
            subject="s",
            body="b",
            clock=current_clock(),
        )
    assert first.id == again.id
    assert queue.drain() == 1
