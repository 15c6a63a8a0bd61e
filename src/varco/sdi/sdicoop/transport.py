"""HTTP for the SDICoop client: mutual TLS that ignores the environment, MTOM answers, typed failures.

Whether the SDI may have received a request is decided by how far the request got, which urllib3's
exceptions do not say (a reset looks the same before and after the request is written). So our
connections record it: CONNECTING until `request()` is entered, SENDING while the request is being
written, SENT once it has all been handed to the kernel. A connection is used again only if its
last call ended less than `REUSE_WITHIN` ago (and urllib3 finds it still open), far inside any
server's keep-alive timeout, so a server closing an idle connection as we write does not blur that;
an older one is closed and the call opens a fresh one. Each reuse saves a mutual-TLS handshake.

- CONNECTING or SENDING failed: NotReceived. The SDI's application cannot act on an incomplete request
  (its length is declared).
- SENT, then a TLS alert about the handshake or a certificate: NotReceived. With TLS 1.3 the client
  finishes its side of the handshake before the server has checked our certificate, so a refusal
  arrives only when we read; the server's TLS layer never passed our request on.
- SENT, then a timeout, a reset, an EOF or garbage: MaybeReceived.
- An HTTP answer: 2xx with the operation's answer is read by zeep; 3xx, 4xx, 503 without a Fault and
  any `Client` Fault: NotReceived (refused as such); other 5xx and `Server` Faults: MaybeReceived (the
  server may have stored the file before failing).

Not distinguishable: a server that drops our certificate without a TLS alert after we wrote the
request (MaybeReceived, conservatively); a timeout on reading while the SDI was still processing.
"""

from __future__ import annotations

import logging
import re
import ssl
import time
from contextvars import ContextVar
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

import requests
import zeep
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.retry import Retry

from varco.sdi.sdicoop import envelope, mtom
from varco.sdi.sdicoop.errors import MaybeReceived, NotReceived, Reason, SdiCallError
from varco.sdi.sdicoop.payloads import Exchange
from varco.sdi.sdicoop.schemas import InvalidXml

logger = logging.getLogger(__name__)

LOG_BODY_BYTES = 4096  # bodies are logged cut: invoices are megabytes of personal data
# OpenSSL reasons of alerts that end a handshake (incl. the TLS 1.3 "certificate required").
_HANDSHAKE_ALERT = re.compile(
    r"ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_\w+|UNSUPPORTED_CERTIFICATE|ACCESS_DENIED"
    r"|HANDSHAKE_FAILURE|PROTOCOL_VERSION|INSUFFICIENT_SECURITY|DECRYPT_ERROR|ILLEGAL_PARAMETER)"
)


# A pooled connection idle for longer is closed rather than used: servers close idle connections
# after their keep-alive timeout (uvicorn 5 s, Apache 5 s, nginx 75 s), never this soon.
REUSE_WITHIN = 1.0  # seconds


class Stage(Enum):
    CONNECTING = "connecting"
    SENDING = "sending"
    SENT = "sent"


@dataclass
class CallRecord:
    """How far one call got, and its exchange so far."""

    stage: Stage = Stage.CONNECTING
    exchange: Exchange | None = None


_current: ContextVar[CallRecord | None] = ContextVar("sdicoop_call", default=None)


class _StageTracking:
    def request(self, *args: Any, **kwargs: Any) -> None:
        call = _current.get()
        if call is not None:
            call.stage = Stage.SENDING
        super().request(*args, **kwargs)  # type: ignore[misc]
        if call is not None:
            call.stage = Stage.SENT


class _HTTPConnection(_StageTracking, HTTPConnection):
    pass


class _HTTPSConnection(_StageTracking, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _StageTrackingAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def make_session(cert: tuple[str, str], ca: str | None) -> requests.Session:
    """A session that uses exactly this certificate and CA: `trust_env = False`, or REQUESTS_CA_BUNDLE /
    CURL_CA_BUNDLE (set on these machines) would replace `verify`, and *_PROXY would reroute."""
    session = requests.Session()
    session.trust_env = False
    session.verify = ca if ca is not None else True  # True: requests' own bundle (certifi)
    session.cert = cert
    adapter = _StageTrackingAdapter(max_retries=Retry(total=0, read=False, redirect=False))  # never resend
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def _cut(body: bytes) -> str:
    text = body[:LOG_BODY_BYTES].decode("utf-8", "replace")
    return text + (f"... [{len(body)} bytes]" if len(body) > LOG_BODY_BYTES else "")


def _failure(
    exc: requests.RequestException, call: CallRecord, exchange: Exchange, timeout: float
) -> SdiCallError:
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return NotReceived(
            f"no connection within {timeout}s ({detail})", reason=Reason.CONNECT_TIMEOUT, exchange=exchange
        )
    if call.stage is Stage.CONNECTING:
        reason = (
            Reason.TLS_REFUSED if isinstance(exc, requests.exceptions.SSLError) else Reason.CONNECTION_FAILED
        )
        return NotReceived(f"could not connect ({detail})", reason=reason, exchange=exchange)
    if call.stage is Stage.SENDING and isinstance(exc, requests.exceptions.SSLError):
        # TLS 1.3: a server refusing our certificate often shows up here, as an EOF while we write
        return NotReceived(
            f"the TLS session ended before the request was written ({detail})",
            reason=Reason.TLS_REFUSED,
            exchange=exchange,
        )
    if call.stage is Stage.SENDING:
        return NotReceived(
            f"the connection broke while sending ({detail})", reason=Reason.SEND_FAILED, exchange=exchange
        )
    if _HANDSHAKE_ALERT.search(str(exc)) or _is_handshake_alert(exc):
        return NotReceived(
            f"the SDI refused the TLS session ({detail})", reason=Reason.TLS_REFUSED, exchange=exchange
        )
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return MaybeReceived(
            f"request sent, no answer within {timeout}s", reason=Reason.TIMEOUT, exchange=exchange
        )
    return MaybeReceived(
        f"request sent, then the connection was lost ({detail})",
        reason=Reason.CONNECTION_LOST,
        exchange=exchange,
    )


def _is_handshake_alert(exc: BaseException) -> bool:
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:  # walk causes, contexts and the args urllib3/requests wrap errors in
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ssl.SSLError) and _HANDSHAKE_ALERT.search(item.reason or ""):
            return True
        stack.extend([item.__cause__, item.__context__, getattr(item, "reason", None), *item.args])
    return False


def _http_failure(response: requests.Response, exchange: Exchange) -> SdiCallError | None:
    """None when the answer is for zeep to read; else what the status or Fault means."""
    status = response.status_code
    fault = None
    if response.content:
        try:
            message = envelope.read(response.headers.get("Content-Type"), response.content)
            fault = envelope.fault_of(message.payload)
        except (envelope.NotSoap, envelope.BadEnvelope, envelope.VersionMismatch):
            fault = None
    if fault is not None:
        kind = NotReceived if fault.is_client else MaybeReceived
        return kind(
            f"SOAP Fault {fault.faultcode} (HTTP {status}): {fault.faultstring}",
            reason=Reason.SOAP_FAULT,
            exchange=exchange,
            status=status,
            fault=fault,
        )
    if status == 200:
        return None
    if 200 <= status < 300:
        return MaybeReceived(
            f"HTTP {status} without an answer", reason=Reason.BAD_ANSWER, exchange=exchange, status=status
        )
    kind = NotReceived if status < 500 or status == 503 else MaybeReceived
    return kind(
        f"HTTP {status} {response.reason}", reason=Reason.HTTP_STATUS, exchange=exchange, status=status
    )


class OfflineTransport(zeep.Transport):
    """Loads WSDLs and XSDs from local files only: nothing is ever fetched from the network."""

    def load(self, url: str) -> bytes:
        if "://" in url and not url.startswith("file://"):
            raise ValueError(f"refusing to fetch {url}: SDICoop schemas come from package data")
        return super().load(url)


class SdiTransport(OfflineTransport):
    """zeep's transport for calls to the SDI: records the exchange, reads MTOM, raises SdiCallError."""

    def __init__(self, session: requests.Session, timeout_seconds: float) -> None:
        super().__init__(session=session, timeout=timeout_seconds, operation_timeout=timeout_seconds)
        self.timeout_seconds = timeout_seconds
        self.last_call_ended = -REUSE_WITHIN
        session.headers["User-Agent"] = "varco-sdicoop"

    def post(self, address: str, message: bytes | str, headers: dict[str, str]) -> requests.Response:
        body = message.encode("utf-8") if isinstance(message, str) else message
        action = headers.get("SOAPAction", "")
        exchange = Exchange(address, action, body, headers.get("Content-Type", ""))
        call = _current.get() or CallRecord()
        call.exchange = exchange
        logger.debug("SDICoop → %s SOAPAction=%s (%d bytes)\n%s", address, action, len(body), _cut(body))
        token = _current.set(call)
        if time.monotonic() - self.last_call_ended > REUSE_WITHIN:
            self.session.close()  # its pooled connections; the next request opens a fresh one
        try:
            response = self.session.post(
                address,
                data=body,
                headers=headers,
                timeout=(self.timeout_seconds, self.timeout_seconds),
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            failure = _failure(exc, call, exchange, self.timeout_seconds)
            logger.debug("SDICoop ✗ %s: %s (stage %s)", address, failure, call.stage.value)
            raise failure from exc
        finally:
            _current.reset(token)
            self.last_call_ended = time.monotonic()
        content_type = response.headers.get("Content-Type", "")
        exchange = replace(
            exchange,
            status=response.status_code,
            response=response.content,
            response_content_type=content_type,
        )
        call.exchange = exchange
        logger.debug(
            "SDICoop ← %s HTTP %d %s (%d bytes)\n%s",
            address,
            response.status_code,
            content_type,
            len(response.content),
            _cut(response.content),
        )
        failure = _http_failure(response, exchange)
        if failure is not None:
            raise failure
        if mtom.is_multipart(content_type):
            try:  # zeep would strip CR/LF around binary parts: hand it plain XML instead
                response._content = mtom.decode_to_bytes(content_type, response.content)
            except (mtom.MtomError, InvalidXml) as exc:
                raise MaybeReceived(
                    f"unreadable MTOM answer: {exc}",
                    reason=Reason.BAD_ANSWER,
                    exchange=exchange,
                    status=response.status_code,
                ) from None
            response.headers["Content-Type"] = envelope.XML_CONTENT_TYPE
        return response


def begin_call() -> tuple[CallRecord, Any]:
    """Start recording one call in this context (the client reads the exchange back from it)."""
    call = CallRecord()
    return call, _current.set(call)


def end_call(token: Any) -> None:
    _current.reset(token)
