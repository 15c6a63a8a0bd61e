"""Queries on callback endpoints and deliveries; no rules."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, bindparam, func, or_, select, update
from sqlalchemy.orm import aliased

from varco.accounts.models import Delegation, DelegationStatus
from varco.callbacks.models import CallbackDelivery, CallbackEndpoint
from varco.callbacks.states import DeliveryStatus, EndpointStatus
from varco.core.uow import Fact, UnitOfWork
from varco.events.models import Event

PENDING = DeliveryStatus.PENDING.value

# Run for every event (each upload, each SDI notification): built once, bound per call.
# On the tables' columns: a Core select costs half an ORM-enabled one.
_ENDPOINTS, _DELEGATIONS = CallbackEndpoint.__table__.c, Delegation.__table__.c
_RECEIVES_FROM_ACCOUNT = (
    _ENDPOINTS.status == EndpointStatus.ACTIVE,
    or_(
        _ENDPOINTS.account_id == bindparam("account_id"),
        _ENDPOINTS.account_id.in_(
            select(_DELEGATIONS.delegate_id).where(
                _DELEGATIONS.delegator_id == bindparam("account_id"),
                _DELEGATIONS.status == DelegationStatus.ACTIVE,
            )
        ),
    ),
)
_RECEIVERS_OF = (
    select(_ENDPOINTS.id, _ENDPOINTS.event_types).where(*_RECEIVES_FROM_ACCOUNT).order_by(_ENDPOINTS.id)
)
# Whether :account_id's events have a receiver at all, as a column of a caller's own statement (an
# upload reads it with its duplicate check): most accounts have none, and `no_receivers` then
# spares the event the upload records its query.
ANY_RECEIVER = select(_ENDPOINTS.id).where(*_RECEIVES_FROM_ACCOUNT).exists()


# receivers_of by account id, read again when what decides them changes: endpoints, delegations
_RECEIVERS: Fact[dict[int, list[Row[tuple[int, list[str]]]]]] = Fact(
    "callback receivers", dict, forget_on=(CallbackEndpoint, Delegation)
)


class CallbackRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    # endpoints

    def add(self, endpoint: CallbackEndpoint) -> CallbackEndpoint:
        self.session.add(endpoint)
        self.session.flush()
        return endpoint

    def get(self, callback_id: int, *, for_update: bool = False) -> CallbackEndpoint | None:
        # populate_existing: a row read before must show its locked (latest) state
        return self.session.get(
            CallbackEndpoint, callback_id, with_for_update=for_update, populate_existing=for_update
        )

    def owned(self, owner_id: int) -> list[CallbackEndpoint]:
        query = (
            select(CallbackEndpoint)
            .where(CallbackEndpoint.account_id == owner_id, CallbackEndpoint.status != EndpointStatus.DELETED)
            .order_by(CallbackEndpoint.id)
        )
        return list(self.session.scalars(query))

    def count_owned(self, owner_id: int) -> int:
        query = select(func.count(CallbackEndpoint.id)).where(
            CallbackEndpoint.account_id == owner_id, CallbackEndpoint.status != EndpointStatus.DELETED
        )
        return self.session.scalar(query) or 0

    def receivers_of(self, account_id: int) -> list[Row[tuple[int, list[str]]]]:
        """(id, event_types) of the active endpoints of the account and of the accounts it delegates
        (ACTIVE): those that may see its events, as in searches (accounts.visible_account_ids seen
        from the other side). It runs for every event: columns, not entities, and read once per
        transaction and account unless endpoints or delegations change in it."""
        cached = self.session.fact(_RECEIVERS)
        if account_id not in cached:
            cached[account_id] = list(self.session.execute(_RECEIVERS_OF, {"account_id": account_id}))
        return cached[account_id]

    def no_receivers(self, account_id: int) -> None:
        """The caller found that the account's events have no receiver (`ANY_RECEIVER`)."""
        self.session.fact(_RECEIVERS)[account_id] = []

    # deliveries

    def add_delivery(self, delivery: CallbackDelivery) -> CallbackDelivery:
        self.session.add(delivery)
        self.session.flush()
        return delivery

    def delivery(self, delivery_id: int, *, for_update: bool = False) -> CallbackDelivery | None:
        return self.session.get(
            CallbackDelivery, delivery_id, with_for_update=for_update, populate_existing=for_update
        )

    def has_earlier_pending(self, delivery: CallbackDelivery) -> bool:
        """Is an older delivery of the same lane still waiting? Then this one must wait too."""
        query = (
            select(CallbackDelivery.id)
            .where(
                CallbackDelivery.callback_id == delivery.callback_id,
                CallbackDelivery.lane == delivery.lane,
                CallbackDelivery.status == PENDING,
                CallbackDelivery.id < delivery.id,
            )
            .limit(1)
        )
        return self.session.scalar(query) is not None

    def lock_previous_pending(self, delivery: CallbackDelivery) -> int | None:
        """Lock the lane's pending delivery just before this one, if any. Its outcome, recorded in a
        transaction that locks it too, then runs after ours commits and sees this delivery."""
        query = (
            select(CallbackDelivery.id)
            .where(
                CallbackDelivery.callback_id == delivery.callback_id,
                CallbackDelivery.lane == delivery.lane,
                CallbackDelivery.status == PENDING,
                CallbackDelivery.id < delivery.id,
            )
            .order_by(CallbackDelivery.id.desc())
            .limit(1)
            .with_for_update()
        )
        return self.session.scalar(query)

    def next_in_lane(self, delivery: CallbackDelivery) -> int | None:
        query = (
            select(CallbackDelivery.id)
            .where(
                CallbackDelivery.callback_id == delivery.callback_id,
                CallbackDelivery.lane == delivery.lane,
                CallbackDelivery.status == PENDING,
                CallbackDelivery.id > delivery.id,
            )
            .order_by(CallbackDelivery.id)
            .limit(1)
        )
        return self.session.scalar(query)

    def cancel_pending(self, callback_id: int, reason: str) -> int:
        """Cancel every waiting delivery of an endpoint (disabled or deleted); returns how many."""
        result = self.session.execute(
            update(CallbackDelivery)
            .where(CallbackDelivery.callback_id == callback_id, CallbackDelivery.status == PENDING)
            .values(status=DeliveryStatus.CANCELLED.value, leased_until=None, last_error=reason[:500])
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    def stale_heads(self, due_before: datetime, now: datetime, limit: int = 1000) -> list[int]:
        """Lane heads that should have been attempted by `due_before` and are not in flight."""
        earlier = aliased(CallbackDelivery)
        blocked = (
            select(earlier.id)
            .where(
                earlier.callback_id == CallbackDelivery.callback_id,
                earlier.lane == CallbackDelivery.lane,
                earlier.status == PENDING,
                earlier.id < CallbackDelivery.id,
            )
            .exists()
        )
        query = (
            select(CallbackDelivery.id)
            .where(
                CallbackDelivery.status == PENDING,
                CallbackDelivery.next_attempt_at <= due_before,
                or_(CallbackDelivery.leased_until.is_(None), CallbackDelivery.leased_until <= now),
                ~blocked,
            )
            .order_by(CallbackDelivery.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def recent_deliveries(self, callback_id: int, limit: int) -> list[tuple[CallbackDelivery, str | None]]:
        """Newest first, with the event type (None for test events)."""
        query = (
            select(CallbackDelivery, Event.type)
            .outerjoin(Event, Event.id == CallbackDelivery.event_id)
            .where(CallbackDelivery.callback_id == callback_id)
            .order_by(CallbackDelivery.id.desc())
            .limit(limit)
        )
        return [(delivery, type_) for delivery, type_ in self.session.execute(query)]

    def latest_delivery_of(self, callback_ids: list[int]) -> dict[int, tuple[CallbackDelivery, str | None]]:
        """The newest delivery of each endpoint that has one, with its event type (None: a test)."""
        if not callback_ids:
            return {}
        newest = (
            select(func.max(CallbackDelivery.id))
            .where(CallbackDelivery.callback_id.in_(callback_ids))
            .group_by(CallbackDelivery.callback_id)
        )
        query = (
            select(CallbackDelivery, Event.type)
            .outerjoin(Event, Event.id == CallbackDelivery.event_id)
            .where(CallbackDelivery.id.in_(newest))
        )
        return {delivery.callback_id: (delivery, type_) for delivery, type_ in self.session.execute(query)}
