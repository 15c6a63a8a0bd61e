"""A real SMTP server (aiosmtpd) in the test process: what varco sends is parsed as a mail client would."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from aiosmtpd.controller import Controller


class Inbox:
    def __init__(self) -> None:
        self.envelopes: list = []
        self.refuse = 0  # messages still to answer with a temporary failure (451)

    def to(self, address: str) -> list[EmailMessage]:
        """Messages for one recipient (other tests' pending mail may be delivered in the same drain)."""
        return [
            message_from_bytes(e.content, policy=policy.default)  # type: ignore[misc]
            for e in self.envelopes
            if address in e.rcpt_tos
        ]

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd hook
        if self.refuse > 0:
            self.refuse -= 1
            return "451 4.3.0 Mailbox busy, try again later"
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp(configure) -> Iterator[Inbox]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    configure(smtp_host="127.0.0.1", smtp_port=port, mail_from="varco <receipts@varco.test>")
    yield inbox
    controller.stop()
