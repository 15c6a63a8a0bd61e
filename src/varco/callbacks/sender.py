"""One HTTP attempt: POST the body, signed, to the checked address; 2xx is success, anything else is not."""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from varco import __version__
from varco.callbacks import signing
from varco.callbacks.urls import CallbackUrlRefused, Target, resolve
from varco.core.clock import Clock
from varco.settings import Settings

ERROR_CHARS = 300
MAX_ANSWER_BYTES = 64 * 1024

# Redirects are not followed (they could lead to an internal address); proxies from the
# environment are ignored so that the SSRF check applies to the address actually contacted.
_client = httpx.Client(
    follow_redirects=False, trust_env=False, headers={"User-Agent": f"varco/{__version__}"}
)


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
        target = resolve(attempt.url, settings)  # again at each attempt: DNS may have changed
    except CallbackUrlRefused as exc:
        return Outcome(None, f"refused: {exc}")
    url, headers, extensions = _route(target)
    headers.update(
        {
            "Content-Type": "application/json",
            signing.SIGNATURE_HEADER: signing.header(attempt.secret, clock.now(), attempt.body),
            signing.EVENT_ID_HEADER: attempt.event_uid,
            signing.EVENT_TYPE_HEADER: attempt.event_type,
        }
    )
    timeout = settings.callback_timeout_seconds
    try:
        with _client.stream(
            "POST", url, content=attempt.body, headers=headers, timeout=timeout, extensions=extensions
        ) as response:
            head = _head(response, deadline=time.monotonic() + timeout)
    except httpx.TimeoutException:
        return Outcome(None, f"timeout: no answer within {timeout:g} s")
    except httpx.HTTPError as exc:
        return Outcome(None, f"{type(exc).__name__}: {exc}"[:ERROR_CHARS])
    if 200 <= response.status_code < 300:
        return Outcome(response.status_code, None)
    text = head[:ERROR_CHARS].decode("utf-8", "replace")
    return Outcome(response.status_code, f"HTTP {response.status_code}: {text}".strip())


def _head(response: httpx.Response, deadline: float) -> bytes:
    """The start of the answer. A short answer is read to its end, so the connection is reused;
    a long or slow one is cut (the connection is then closed): a receiver cannot keep us reading."""
    head = b""
    for chunk in response.iter_bytes():
        head += chunk
        if len(head) > MAX_ANSWER_BYTES or time.monotonic() > deadline:
            break
    return head


def _route(target: Target) -> tuple[str, dict[str, str], dict[str, object]]:
    """Connect to the checked address, keeping the name for Host, SNI and certificate checks."""
    if target.address is None:
        return target.url, {}, {}
    parts = urlsplit(target.url)
    address = f"[{target.address}]" if ":" in target.address else target.address
    pinned = urlunsplit(parts._replace(netloc=f"{address}:{target.port}"))
    return pinned, {"Host": parts.netloc}, {"sni_hostname": target.host}
