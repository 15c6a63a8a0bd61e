"""One HTTP attempt: POST the body, signed, to a checked address; 2xx is success, anything else is not."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from varco import __version__
from varco.callbacks import signing
from varco.callbacks.urls import CallbackUrlRefused, Target, resolve
from varco.core.clock import Clock
from varco.settings import Settings

log = logging.getLogger("varco.callbacks")

ERROR_CHARS = 300
MAX_ANSWER_BYTES = 64 * 1024
MAX_ADDRESSES = 4  # tried in turn while the connection is refused (each within the timeout)

MAX_CLIENTS = 64  # receivers' hosts with a pool of kept-alive connections
_clients: OrderedDict[str, httpx.Client] = OrderedDict()
_clients_lock = threading.Lock()


def _client_for(host: str) -> httpx.Client:
    """A client per receiver host: connections go to checked addresses (the URL names the address),
    so one pool for all would hand a TLS connection verified for one host to another host on the
    same address. Redirects are not followed (they could lead to an internal address); proxies
    from the environment are ignored so that the SSRF check applies to the address contacted."""
    with _clients_lock:
        client = _clients.pop(host, None)
        if client is None:
            client = httpx.Client(
                follow_redirects=False, trust_env=False, headers={"User-Agent": f"varco/{__version__}"}
            )
        _clients[host] = client  # most recently used last
        evicted = _clients.popitem(last=False)[1] if len(_clients) > MAX_CLIENTS else None
    if evicted is not None:
        evicted.close()
    return client


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


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str | None

    @property
    def delivered(self) -> bool:
        return self.error is None


def post(attempt: Attempt, settings: Settings, clock: Clock) -> Outcome:
    """Send once; never raises (every failure is an Outcome the retry logic can record)."""
    try:
        target = resolve(attempt.url, settings)  # again at each attempt: DNS or the rules may have changed
        return _send(attempt, target, settings, clock)
    except CallbackUrlRefused as exc:
        return Outcome(None, f"refused: {exc}")
    except Exception as exc:  # e.g. httpx.InvalidURL, not an httpx.HTTPError: still a failed attempt
        log.warning("callback delivery %s: request not sent", attempt.delivery_id, exc_info=True)
        return Outcome(None, f"request not sent: {type(exc).__name__}: {exc}"[:ERROR_CHARS])


def _send(attempt: Attempt, target: Target, settings: Settings, clock: Clock) -> Outcome:
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
        try:
            with _client_for(target.host).stream(
                "POST", url, content=attempt.body, headers=headers, timeout=timeout, extensions=extensions
            ) as response:
                head = _head(response, deadline=time.monotonic() + timeout)
        except httpx.ConnectError as exc:
            refused = exc
            continue
        except httpx.TimeoutException:
            return Outcome(None, f"timeout: no answer within {timeout:g} s")
        except httpx.HTTPError as exc:
            return Outcome(None, f"{type(exc).__name__}: {exc}"[:ERROR_CHARS])
        if 200 <= response.status_code < 300:
            return Outcome(response.status_code, None)
        text = head[:ERROR_CHARS].decode("utf-8", "replace")
        return Outcome(response.status_code, f"HTTP {response.status_code}: {text}".strip())
    return Outcome(None, f"ConnectError: {refused}"[:ERROR_CHARS])


def _head(response: httpx.Response, deadline: float) -> bytes:
    """The start of the answer. A short answer is read to its end, so the connection is reused;
    a long or slow one is cut (the connection is then closed): a receiver cannot keep us reading."""
    head = b""
    for chunk in response.iter_bytes():
        head += chunk
        if len(head) > MAX_ANSWER_BYTES or time.monotonic() > deadline:
            break
    return head


def _route(target: Target, address: str) -> tuple[str, dict[str, str], dict[str, object]]:
    """Connect to a checked address, keeping the name for Host, SNI and certificate checks."""
    parts = urlsplit(target.url)
    literal = f"[{address}]" if ":" in address else address
    pinned = urlunsplit(parts._replace(netloc=f"{literal}:{target.port}"))
    return pinned, {"Host": parts.netloc}, {"sni_hostname": target.host}
