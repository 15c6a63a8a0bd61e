"""One HTTP attempt: POST the body, signed, to a checked address; 2xx is success, anything else is not."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import ssl
import threading
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from varco import __version__
from varco.callbacks import signing
from varco.callbacks.urls import CallbackUrlRefused, Target, resolve
from varco.core import metrics
from varco.core.clock import Clock
from varco.core.logs import current_request_id
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.callbacks")

ERROR_CHARS = 300
MAX_ANSWER_BYTES = 64 * 1024
MAX_ADDRESSES = 4  # tried in turn while the connection is refused (within the attempt's deadline)
MAX_CLIENTS = 64  # receivers' hosts with a pool of kept-alive connections
_CONTROL = str.maketrans({c: " " for c in [*map(chr, range(32)), "\x7f"]})


@dataclass(frozen=True)
class Attempt:
    """Everything one attempt needs, read in the claiming transaction; sent after it commits."""

    delivery_id: int
    number: int
    callback_id: int
    url: str
    secret: str
    event_uid: str
    event_type: str
    body: bytes
    is_test: bool
    request_id: str | None = None  # the request that caused the event; None: the running job's


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str | None

    @property
    def delivered(self) -> bool:
        return self.error is None


def post(attempt: Attempt, settings: Settings, clock: Clock) -> Outcome:
    """Send once, within `callback_timeout_seconds` for the whole exchange; never raises (every
    failure is an Outcome the retry logic can record). The request that caused the event (the id
    the delivery carries, else the running job's) goes along as X-Request-ID, and is the log line's."""
    request_id = attempt.request_id or current_request_id.get()
    bound = current_request_id.set(request_id)
    try:
        return _post(attempt, settings, clock, request_id)
    finally:
        current_request_id.reset(bound)


def _post(attempt: Attempt, settings: Settings, clock: Clock, request_id: str) -> Outcome:
    try:
        target = resolve(attempt.url, settings)  # again at each attempt: DNS or the rules may have changed
        outcome = _loop.run(
            _send(attempt, target, settings, clock, request_id), settings.callback_timeout_seconds
        )
    except CallbackUrlRefused as exc:
        outcome = Outcome(None, f"refused: {exc}")
    except TimeoutError:
        outcome = Outcome(None, f"timeout: no answer within {settings.callback_timeout_seconds:g} s")
    except Exception as exc:  # e.g. httpx.InvalidURL, not an httpx.HTTPError: still a failed attempt
        log.warning("callback delivery %s: request not sent", attempt.delivery_id, exc_info=True)
        outcome = Outcome(None, f"request not sent: {type(exc).__name__}: {exc}")
    if outcome.error is not None:  # what a receiver answered is stored: no NUL, no control characters
        outcome = Outcome(outcome.status_code, outcome.error.translate(_CONTROL)[:ERROR_CHARS].strip())
    result = _result(outcome)
    metrics.count(metrics.CALLBACK_DELIVERIES, result)
    fields = {"delivery_id": attempt.delivery_id, "delivery_attempt": attempt.number, "result": result}
    log.info("callback delivery", extra={**fields, "status_code": outcome.status_code})
    return outcome


def _result(outcome: Outcome) -> str:
    """delivered (2xx), rejected (another status), timeout, refused (the address, by our rules),
    or error (no answer: connection refused, TLS, ...)."""
    if outcome.delivered:
        return "delivered"
    if outcome.status_code is not None:
        return "rejected"
    error = outcome.error or ""
    if error.startswith("timeout"):
        return "timeout"
    return "refused" if error.startswith("refused:") else "error"


class _Loop:
    """One event loop in a thread of its own for every delivery of this process: a worker thread
    waits for its attempt at most the deadline, whatever a receiver does (an answer trickled a
    byte at a time would hold a blocking client past any per-read timeout), and the connections
    of each receiver host stay alive between attempts."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self.clients: OrderedDict[tuple[str, Path | None], httpx.AsyncClient] = OrderedDict()

    def run(self, work: Coroutine[Any, Any, Outcome], deadline: float) -> Outcome:
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(work, deadline), self._started())
        try:
            return future.result(timeout=deadline + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="varco-callbacks", daemon=True).start()
            return self._loop

    def client_for(self, host: str) -> httpx.AsyncClient:
        """A client per receiver host (in the loop's thread only): connections go to checked
        addresses (the URL names the address), so one pool for all would hand a TLS connection
        verified for one host to another host on the same address. Redirects are not followed
        (they could lead to an internal address); proxies from the environment are ignored so
        that the SSRF check applies to the address contacted."""
        extra_cas = get_settings().callback_ca_bundle
        key = (host, extra_cas)  # a client verifies with the CAs of its time
        client = self.clients.pop(key, None)
        if client is None:
            client = httpx.AsyncClient(
                follow_redirects=False,
                trust_env=False,
                verify=_tls_context(extra_cas),
                headers={"User-Agent": f"varco/{__version__}", "Accept-Encoding": "identity"},
            )
        self.clients[key] = client  # most recently used last
        if len(self.clients) > MAX_CLIENTS:
            asyncio.get_running_loop().create_task(self.clients.popitem(last=False)[1].aclose())
        return client


@functools.cache
def _tls_context(extra_cas: Path | None) -> ssl.SSLContext:
    """The system's CAs, and those of VARCO_CALLBACK_CA_BUNDLE (receivers on a private CA)."""
    context = ssl.create_default_context()
    if extra_cas is not None:
        context.load_verify_locations(cafile=str(extra_cas))
    return context


_loop = _Loop()


async def _send(
    attempt: Attempt, target: Target, settings: Settings, clock: Clock, request_id: str
) -> Outcome:
    """POST to the first checked address that accepts the connection (localhost may be ::1 and
    127.0.0.1, the receiver listening on one): a refused connection has sent nothing yet."""
    timeout = settings.callback_timeout_seconds
    refused: httpx.ConnectError | None = None
    for address in target.addresses[:MAX_ADDRESSES]:
        url, headers, extensions = _route(target, address)
        headers.update(
            {
                "Content-Type": "application/json",
                signing.SIGNATURE_HEADER: signing.header(attempt.secret, clock.now(), attempt.body),
                signing.EVENT_ID_HEADER: attempt.event_uid,
                signing.EVENT_TYPE_HEADER: attempt.event_type,
            }
        )
        if request_id != "-":
            headers["X-Request-ID"] = request_id
        client = _loop.client_for(target.host)
        try:
            async with client.stream(
                "POST", url, content=attempt.body, headers=headers, timeout=timeout, extensions=extensions
            ) as response:
                head = await _head(response)
        except httpx.ConnectError as exc:
            refused = exc
            continue
        except httpx.TimeoutException:
            return Outcome(None, f"timeout: no answer within {timeout:g} s")
        except httpx.HTTPError as exc:
            return Outcome(None, f"{type(exc).__name__}: {exc}")
        if 200 <= response.status_code < 300:
            return Outcome(response.status_code, None)
        text = head[:ERROR_CHARS].decode("utf-8", "replace")
        return Outcome(response.status_code, f"HTTP {response.status_code}: {text}".strip())
    return Outcome(None, f"ConnectError: {refused}")


async def _head(response: httpx.Response) -> bytes:
    """The start of the answer, as sent (never decompressed: a small gzip body may inflate to
    gigabytes). A short answer is read to its end, so the connection is reused; a long one is
    cut (the connection is then closed); the deadline covers a slow one."""
    head = b""
    async for chunk in response.aiter_raw():
        head += chunk
        if len(head) > MAX_ANSWER_BYTES:
            break
    return head


def _route(target: Target, address: str) -> tuple[str, dict[str, str], dict[str, object]]:
    """Connect to a checked address, keeping the name for Host, SNI and certificate checks."""
    parts = urlsplit(target.url)
    literal = f"[{address}]" if ":" in address else address
    pinned = urlunsplit(parts._replace(netloc=f"{literal}:{target.port}"))
    return pinned, {"Host": parts.netloc}, {"sni_hostname": target.host}
