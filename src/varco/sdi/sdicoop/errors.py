"""Why a call to the SDI produced no answer, and whether the SDI may nevertheless have the file.

`NotReceived`: certainly not taken (nothing, or no complete request, reached the SDI's application,
or the SDI said it refused the request as such): the same file may be sent again.
`MaybeReceived`: the complete request was sent and no usable answer came back: the SDI may have it.
Sending it again risks a duplicate (00002/00404 on the copy, sdicoop-notes.md); wait for its
notifications, or send again knowing that.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from varco.sdi.sdicoop.envelope import Fault
from varco.sdi.sdicoop.payloads import Exchange


class Reason(StrEnum):
    CONNECTION_FAILED = "connection-failed"  # refused, unreachable, name not resolved
    CONNECT_TIMEOUT = "connect-timeout"
    TLS_REFUSED = "tls-refused"  # handshake failed, server certificate not trusted, our certificate refused
    SEND_FAILED = "send-failed"  # the connection broke before the whole request was written
    TIMEOUT = "timeout"  # request written, no answer in time
    CONNECTION_LOST = "connection-lost"  # request written, connection closed or reset without an answer
    HTTP_STATUS = "http-status"  # an HTTP error status without a SOAP Fault
    SOAP_FAULT = "soap-fault"
    BAD_ANSWER = "bad-answer"  # an answer that is not the operation's response


class SdiCallError(Exception):
    """A call to the SDI without a usable answer; `exchange` holds what was sent and received."""

    may_have_been_received: ClassVar[bool]

    def __init__(
        self,
        message: str,
        *,
        reason: Reason,
        exchange: Exchange,
        status: int | None = None,
        fault: Fault | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.exchange = exchange
        self.status = status
        self.fault = fault


class NotReceived(SdiCallError):
    """Certainly not received: safe to send the same file again."""

    may_have_been_received = False


class MaybeReceived(SdiCallError):
    """The SDI may have received it: do not blindly send again."""

    may_have_been_received = True
