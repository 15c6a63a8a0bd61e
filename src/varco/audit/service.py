"""The audit trail (docs/operations.md, "Audit trail"): security and administrative events, recorded
where they are caused, in the transaction of the change, and read by operators.

`record` adds the event to the caller's unit of work, so an event is stored if and only if its
change commits. A refused sign-in changes nothing and its request fails, so `record_refused` ends
the request's transaction and commits the event in one of its own.

What an event may carry is fixed here: the actor and the subject (ids and user names), the client
address, the request id, and details under the names of `DETAIL_KEYS` only, built by the call
sites from explicit fields. No password, token, secret or credential: a detail name that looks
like one is refused even if someone adds it to the list.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from varco.audit.models import AuditEvent
from varco.audit.repository import AuditRepository, Filters
from varco.core.clock import Clock
from varco.core.errors import BadRequest
from varco.core.numbers import MAX_BIGINT, optional_whole_number
from varco.core.uow import UnitOfWork
from varco.limits import ip as client_ips
from varco.search import dates
from varco.settings import Settings, get_settings

if TYPE_CHECKING:
    from varco.accounts.models import Account

log = logging.getLogger("varco.audit")
# What a refused sign-in that named no account stores instead of the name typed (see _unknown).
UNKNOWN_USER = "unknown user #"


class Kind(StrEnum):
    """The event kinds: short, stable strings (operators filter on their dotted prefixes)."""

    SIGNIN_SUCCEEDED = "auth.signin.succeeded"
    SIGNIN_FAILED = "auth.signin.failed"
    TOKEN_REFRESHED = "auth.token.refreshed"
    TOKEN_REVOKED = "auth.token.revoked"
    TOKENS_REVOKED = "auth.token.revoked_all"
    PANEL_SESSION_REVOKED = "auth.panel_session.revoked"
    PASSWORD_CHANGED = "auth.password.changed"
    ACCOUNT_CREATED = "account.created"
    ACCOUNT_DISABLED = "account.disabled"
    TIER_CHANGED = "account.tier.changed"
    UNLOCKED = "account.unlocked"
    SIGNER_SET = "account.signer.set"
    DELEGATION_CREATED = "delegation.created"
    DELEGATION_CHANGED = "delegation.changed"
    CALLBACK_CREATED = "callback.created"
    CALLBACK_DELETED = "callback.deleted"
    CALLBACK_ENABLED = "callback.enabled"
    CALLBACK_DISABLED = "callback.disabled"
    CALLBACK_SECRET_ROTATED = "callback.secret.rotated"
    SDI_SCENARIO_SET = "sdi.scenario.set"
    SDI_SCENARIO_DELETED = "sdi.scenario.deleted"
    SDI_CLOCK_ADVANCED = "sdi.clock.advanced"
    SDI_INVOICE_INJECTED = "sdi.invoice.injected"
    SDI_REDELIVERED = "sdi.unroutable.redelivered"


# Every name a detail may have (docs/operations.md lists what each kind carries).
DETAIL_KEYS = frozenset(
    {
        "channel",  # api, panel, v1: where a sign-in came from
        "reason",  # why a sign-in was refused: wrong_credentials, account_refused
        "grantId",  # the id (never the value) of an access/refresh token pair
        "panelSessionId",
        "count",
        "accountKind",
        "tier",
        "isAdmin",
        "from",
        "to",
        "year",
        "domain",
        "delegationId",
        "delegate",
        "event",
        "status",
        "callbackId",
        "host",
        "events",
        "rule",
        "value",
        "outcome",
        "esitoOutcome",
        "delay",
        "deleted",
        "duration",
        "filename",
        "sdiId",
        "result",
        "delivered",
    }
)
# A second lock: a detail named like one of these is refused even if it is added to the list above.
SECRET_NAME = re.compile(
    r"pass|pwd|secret|token|credential|bearer|cookie|hash|signature|private|api.?key|pkcs", re.IGNORECASE
)
MAX_TEXT = 200
Detail = str | int | bool | None | list[str]


class AuditInputError(BadRequest):
    """A filter of the audit trail is wrong."""


@dataclass(frozen=True)
class Actor:
    """Who causes an event and from where: an account over HTTP, the CLI, or varco itself. A client
    that is not signed in has neither account id nor user name."""

    account_id: int | None
    username: str | None
    ip: str | None = None
    request_id: str | None = None

    def signed_in(self, account: Account) -> Actor:
        """The same client, now known as `account` (a sign-in, a refresh)."""
        return replace(self, account_id=account.id, username=account.username)


CLI = Actor(None, "cli")
SYSTEM = Actor(None, "system")  # varco itself: demo seeding, a retry budget spent


def actor_of(request: Request, account: Account | None = None) -> Actor:
    """The request's client as an actor: its address as the §8.1 limits see it (X-Forwarded-For
    only from VARCO_TRUSTED_PROXIES) and the request id of its answer and log lines."""
    peer = request.client.host if request.client else ""
    address = client_ips.client_ip(peer, request.headers.getlist("x-forwarded-for"), get_settings())
    request_id = getattr(request.state, "request_id", None)
    return Actor(
        account.id if account else None,
        account.username if account else None,
        _address(address),
        request_id if isinstance(request_id, str) else None,
    )


def as_actor(who: Actor | str | None) -> Actor:
    """An actor from what older call sites pass (a bare name, as delegation history rows keep it)."""
    if isinstance(who, Actor):
        return who
    return SYSTEM if who is None else Actor(None, who)


def record(
    session: UnitOfWork,
    kind: Kind,
    actor: Actor,
    clock: Clock,
    *,
    subject: Account | None = None,
    subject_username: str | None = None,
    details: Mapping[str, Detail] | None = None,
) -> None:
    """Add an audit event to the caller's transaction: stored if and only if the change commits."""
    checked = _details(details or {})  # first: a wrong name is a programming error, nothing is added
    event = AuditEvent(
        at=clock.now(),
        kind=kind.value,
        actor_account_id=actor.account_id,
        actor_username=_text(actor.username, 150),
        subject_account_id=subject.id if subject is not None else None,
        subject_username=_text(subject.username if subject is not None else subject_username, 150),
        ip=actor.ip,
        request_id=_text(actor.request_id, 64),
        details=checked,
    )
    AuditRepository(session).add(event)
    fields = {
        "audit": event.kind,
        "actor": event.actor_username,
        "subject": event.subject_username,
        "client_ip": event.ip,
        "details": event.details,
    }
    session.on_commit(partial(log.info, "audit event", extra=fields))  # the log says what was stored


def record_refused(
    session: UnitOfWork,
    kind: Kind,
    actor: Actor,
    clock: Clock,
    *,
    subject_username: str | None = None,
    subject_known: bool = True,
    details: Mapping[str, Detail] | None = None,
) -> None:
    """Record the event of a request that is refused (a failed sign-in): the request's transaction
    is rolled back first (a refusal keeps nothing of it, and on SQLite its write lock must be
    free), then the event is committed in a transaction of its own, so that it stays although the
    request fails. The one place where the audit trail commits. `subject_known`: whether the
    user name typed names an account (auth.names_an_account); if not, only a digest of it is kept."""
    session.rollback()
    subject_username = subject_username if subject_known else _unknown(subject_username)
    record(session, kind, actor, clock, subject_username=subject_username, details=details)
    session.commit()


def _unknown(username: str | None) -> str | None:
    """A keyed digest of a typed user name that is no account: people type their password into the
    user name field, and the trail keeps what it stores for ever; the digest still shows the same
    unknown name tried again and again."""
    if username is None:
        return None
    key = get_settings().secret_key.get_secret_value().encode()
    digest = hmac.new(key, username.encode(errors="replace"), hashlib.sha256).hexdigest()[:16]
    return f"{UNKNOWN_USER}{digest}"


def _text(value: str | None, length: int) -> str | None:
    return None if value is None else value.replace("\x00", "")[:length]


def _address(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:  # no client address (a test client, a Unix socket)
        return None


def _details(details: Mapping[str, Detail]) -> dict[str, Any]:
    refused = [key for key in details if key not in DETAIL_KEYS or SECRET_NAME.search(key)]
    if refused:
        raise ValueError(f"audit details may not be named {refused}: see audit.service.DETAIL_KEYS")
    cleaned: dict[str, Any] = {}
    for key, value in details.items():
        if isinstance(value, str):
            cleaned[key] = _text(value, MAX_TEXT)
        elif isinstance(value, list):
            cleaned[key] = [_text(str(item), MAX_TEXT) for item in value[:20]]
        else:
            cleaned[key] = value
    return cleaned


# -- reading ------------------------------------------------------------------------------------

_KIND = re.compile(r"[a-z_]+(\.[a-z_]+)*")


@dataclass(frozen=True)
class Page:
    events: list[AuditEvent]
    total: int
    page: int
    size: int


def filters(
    *,
    kind: str | None = None,
    username: str | None = None,
    ip: str | None = None,
    start: str | None = None,
    end: str | None = None,
) -> Filters:
    """The filters of a listing from query or form values (blank means any), or a 400 naming the
    parameter."""
    kind, username, ip, start, end = (_blank(v) for v in (kind, username, ip, start, end))
    if kind is not None and (len(kind) > 64 or not _KIND.fullmatch(kind)):
        raise AuditInputError(
            f"kind {kind[:70]!r} is not an event kind or a prefix of one, e.g. auth.signin or auth"
        )
    if username is not None and len(username) > 150:
        raise AuditInputError("username is longer than 150 characters")
    address = None
    if ip is not None:
        address = _address(ip)
        if address is None:
            raise AuditInputError(f"ip {ip[:50]!r} is not an IP address, e.g. 203.0.113.7 or 2001:db8::7")
    since, until = _instant(start, "from"), _instant(end, "to", end_of_day=True)
    if since is not None and until is not None and since > until:
        raise AuditInputError("from is after to; swap them")
    return Filters(kind=kind, username=username, ip=address, start=since, end=until)


def paging(page: str | None, size: str | None, settings: Settings) -> tuple[int, int]:
    """`page` 1-based (default 1), `size` 1..page_size_max (default page_size_default), as the
    invoice searches page."""
    return (
        optional_whole_number(page, "page", 1, low=1, high=MAX_BIGINT // settings.page_size_max),
        optional_whole_number(size, "size", settings.page_size_default, low=1, high=settings.page_size_max),
    )


def listing(session: UnitOfWork, where: Filters, page: int, size: int) -> Page:
    """One page of the events that match, newest first (operators only: the endpoint checks)."""
    events, total = AuditRepository(session).page(where, offset=(page - 1) * size, limit=size)
    return Page(events, total, page, size)


def _blank(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def _instant(value: str | None, name: str, *, end_of_day: bool = False) -> datetime | None:
    if value is None:
        return None
    try:
        return dates.parse_instant(value, end_of_day=end_of_day)
    except dates.DateParseError as exc:
        raise AuditInputError(f"{name}: {exc}") from None
