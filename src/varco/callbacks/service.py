"""Registration API: endpoints owned by the caller; nothing here ever sees another account's rows."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from varco.accounts.models import Account
from varco.audit import service as audit
from varco.callbacks import delivery, secret_store, urls
from varco.callbacks.models import CallbackDelivery, CallbackEndpoint
from varco.callbacks.repository import CallbackRepository
from varco.callbacks.states import EndpointEvent, EndpointStatus, next_status
from varco.core.clock import Clock
from varco.core.errors import BadRequest, NotFound
from varco.core.numbers import is_id
from varco.core.uow import UnitOfWork
from varco.settings import Settings

# decisions.md "Callbacks" + our disabled notice (docs/callbacks.md)
EVENT_KINDS = ("createInvoice", "updateInvoiceStatus", "updateUsage", delivery.DISABLED_TYPE)
MAX_DESCRIPTION = 255


class CallbackInputError(BadRequest):
    """Invalid callback registration."""


class CallbackNotFound(NotFound):
    """No such callback endpoint."""


@dataclass(frozen=True)
class NewCallback:
    url: str
    events: list[str] | None = None  # None or empty: every kind
    description: str | None = None


def parse_id(raw: str) -> int:
    """Path ids are digits; anything else names no endpoint (404, as for another account's id)."""
    if not is_id(raw):
        raise CallbackNotFound(f"no callback endpoint with id {raw!r}")
    return int(raw)


def _event_kinds(events: list[str] | None) -> list[str]:
    if not events:
        return list(EVENT_KINDS)
    unknown = [e for e in events if e not in EVENT_KINDS]
    if unknown:
        raise CallbackInputError(
            f"unknown event kind(s) {', '.join(map(repr, unknown))}: use {', '.join(EVENT_KINDS)}"
        )
    return list(dict.fromkeys(events))


def register(
    session: UnitOfWork,
    owner: Account,
    new: NewCallback,
    settings: Settings,
    clock: Clock,
    actor: audit.Actor = audit.SYSTEM,
) -> tuple[CallbackEndpoint, str]:
    """Register an endpoint; the secret is returned here and never again."""
    repo = CallbackRepository(session)
    url = urls.check_url(new.url, settings)
    kinds = _event_kinds(new.events)
    description = (new.description or "").strip()
    if len(description) > MAX_DESCRIPTION:
        raise CallbackInputError(f"description is longer than {MAX_DESCRIPTION} characters")
    if repo.count_owned(owner.id) >= settings.callback_max_per_account:
        raise CallbackInputError(
            f"at most {settings.callback_max_per_account} callback endpoints per account: delete one first"
        )
    secret = secret_store.generate()
    now = clock.now()
    endpoint = repo.add(
        CallbackEndpoint(
            account_id=owner.id,
            url=url,
            event_types=kinds,
            description=description,
            secret_encrypted=secret_store.encrypt(secret, settings),
            secret_hint=secret_store.hint(secret),
            status=EndpointStatus.ACTIVE.value,
            created_at=now,
            updated_at=now,
        )
    )
    details = {"callbackId": endpoint.id, "host": urlsplit(url).hostname, "events": kinds}
    audit.record(session, audit.Kind.CALLBACK_CREATED, actor, clock, subject=owner, details=details)
    return endpoint, secret


def listing(session: UnitOfWork, owner: Account) -> list[CallbackEndpoint]:
    """The caller's endpoints (deleted ones excluded)."""
    return CallbackRepository(session).owned(owner.id)


def get_owned(
    session: UnitOfWork, owner: Account, callback_id: int, *, for_update: bool = False
) -> CallbackEndpoint:
    """One of the caller's endpoints; another account's id is answered as unknown (404)."""
    endpoint = CallbackRepository(session).get(callback_id, for_update=for_update)
    if endpoint is None or endpoint.account_id != owner.id or endpoint.status == EndpointStatus.DELETED:
        raise CallbackNotFound(f"no callback endpoint with id {callback_id}")
    return endpoint


def _move(endpoint: CallbackEndpoint, event: EndpointEvent, clock: Clock) -> None:
    endpoint.status = next_status(EndpointStatus(endpoint.status), event).value
    endpoint.updated_at = clock.now()


def delete(session: UnitOfWork, owner: Account, callback_id: int, clock: Clock, actor: audit.Actor) -> None:
    """Delete an endpoint: nothing more is sent to it (pending deliveries are cancelled)."""
    endpoint = get_owned(session, owner, callback_id, for_update=True)
    _move(endpoint, EndpointEvent.DELETE, clock)
    CallbackRepository(session).cancel_pending(endpoint.id, "endpoint deleted")
    details = {"callbackId": endpoint.id}
    audit.record(session, audit.Kind.CALLBACK_DELETED, actor, clock, subject=owner, details=details)


def enable(
    session: UnitOfWork, owner: Account, callback_id: int, clock: Clock, actor: audit.Actor
) -> CallbackEndpoint:
    """Turn a disabled endpoint back on: it receives events recorded from now on."""
    endpoint = get_owned(session, owner, callback_id, for_update=True)
    _move(endpoint, EndpointEvent.ENABLE, clock)
    endpoint.disabled_reason = endpoint.disabled_at = None
    details = {"callbackId": endpoint.id}
    audit.record(session, audit.Kind.CALLBACK_ENABLED, actor, clock, subject=owner, details=details)
    return endpoint


def rotate_secret(
    session: UnitOfWork,
    owner: Account,
    callback_id: int,
    settings: Settings,
    clock: Clock,
    actor: audit.Actor,
) -> tuple[CallbackEndpoint, str]:
    """A new secret (shown once); deliveries are signed with it from now on."""
    endpoint = get_owned(session, owner, callback_id, for_update=True)
    secret = secret_store.generate()
    endpoint.secret_encrypted = secret_store.encrypt(secret, settings)
    endpoint.secret_hint = secret_store.hint(secret)
    endpoint.updated_at = clock.now()
    details = {"callbackId": endpoint.id}  # never the secret, nor its hint
    audit.record(session, audit.Kind.CALLBACK_SECRET_ROTATED, actor, clock, subject=owner, details=details)
    return endpoint, secret


def send_test(session: UnitOfWork, owner: Account, callback_id: int, clock: Clock) -> CallbackDelivery:
    """Queue a test event for the endpoint (also when disabled, to check a fix before enabling)."""
    endpoint = get_owned(session, owner, callback_id)
    return delivery.add_test(session, endpoint, clock)


def deliveries(
    session: UnitOfWork, owner: Account, callback_id: int, limit: int
) -> list[tuple[CallbackDelivery, str | None]]:
    """The endpoint's latest deliveries with their event type, newest first."""
    endpoint = get_owned(session, owner, callback_id)
    return CallbackRepository(session).recent_deliveries(endpoint.id, limit)


def last_deliveries(
    session: UnitOfWork, owner: Account, endpoints: list[CallbackEndpoint]
) -> dict[int, tuple[CallbackDelivery, str | None]]:
    """The newest delivery (and its event type) of each of the caller's endpoints that has one."""
    ids = [e.id for e in endpoints if e.account_id == owner.id]
    return CallbackRepository(session).latest_delivery_of(ids)
