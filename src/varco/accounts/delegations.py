"""The delegation life cycle (§3.3 multiseller states): the transition table and the only writer of
`Delegation.status`. Every change adds a `DelegationChange` history row in the same transaction.

request → PENDING → approve → ACTIVE; ACTIVE ⇄ SUSPEND (suspend/resume); revoke → INACTIVE from any
live state; an INACTIVE delegation may be requested again (→ PENDING).
"""

from __future__ import annotations

from collections import deque
from enum import StrEnum
from typing import Final

from varco.accounts.models import Account, Delegation, DelegationChange, DelegationStatus
from varco.accounts.repository import AccountRepository
from varco.audit import service as audit
from varco.core.clock import Clock
from varco.core.errors import BadRequest, NotFound
from varco.core.uow import UnitOfWork

S = DelegationStatus
# Who moves a delegation: an audit actor, or a bare name (the history row keeps the name only).
Who = audit.Actor | str | None


class DelegationEvent(StrEnum):
    REQUEST = "request"
    APPROVE = "approve"
    SUSPEND = "suspend"
    RESUME = "resume"
    REVOKE = "revoke"


E = DelegationEvent

# None is "not created yet". The whole life cycle is here and only here.
TRANSITIONS: Final[dict[tuple[S | None, E], S]] = {
    (None, E.REQUEST): S.PENDING,
    (S.INACTIVE, E.REQUEST): S.PENDING,
    (S.PENDING, E.APPROVE): S.ACTIVE,
    (S.PENDING, E.REVOKE): S.INACTIVE,  # request refused or withdrawn
    (S.ACTIVE, E.SUSPEND): S.SUSPEND,
    (S.SUSPEND, E.RESUME): S.ACTIVE,
    (S.ACTIVE, E.REVOKE): S.INACTIVE,
    (S.SUSPEND, E.REVOKE): S.INACTIVE,
}


class DelegationError(BadRequest):
    """The delegation cannot be created or changed."""


class IllegalTransition(DelegationError):
    """This status change is not allowed."""


def parse_status(value: str) -> DelegationStatus:
    """A §3.3 status from user input (case-insensitive), or a clear error."""
    try:
        return DelegationStatus(value.strip().upper())
    except ValueError:
        choices = ", ".join(s.value for s in DelegationStatus)
        raise DelegationError(f"invalid delegation status {value!r}: choose one of {choices}") from None


def allowed_from(current: S | None) -> dict[E, S]:
    return {event: target for (source, event), target in TRANSITIONS.items() if source == current}


def next_status(current: S | None, event: E) -> S:
    if (current, event) not in TRANSITIONS:
        raise IllegalTransition(f"{event.value} is not allowed from {current or 'a new delegation'}")
    return TRANSITIONS[current, event]


def event_for(current: S, target: S) -> E:
    """The one event that moves `current` to `target`, or IllegalTransition naming the options."""
    if current == target:
        raise IllegalTransition(f"the delegation is already {target}")
    for event, reached in allowed_from(current).items():
        if reached == target:
            return event
    options = ", ".join(f"{s} ({e.value})" for e, s in allowed_from(current).items())
    raise IllegalTransition(f"a delegation cannot go from {current} to {target}; from {current}: {options}")


def path_to(target: S) -> list[E]:
    """Events from creation to `target` (shortest), so that a delegation created in any state has
    the history it would have had."""
    queue: deque[tuple[S | None, list[E]]] = deque([(None, [])])
    seen: set[S | None] = {None}
    while queue:
        state, events = queue.popleft()
        if state == target and events:
            return events
        for event, reached in allowed_from(state).items():
            if reached not in seen:
                seen.add(reached)
                queue.append((reached, [*events, event]))
    raise IllegalTransition(f"no way to reach {target}")  # pragma: no cover - every state is reachable


def _guard(repo: AccountRepository, delegation: Delegation, event: E, target: S) -> None:
    if event is E.REQUEST:
        # A cycle would make the §8.5 paying account undefined: refuse it while it is not INACTIVE.
        if delegation.delegator_id in repo.reachable_delegates(delegation.delegate_id):
            delegator = repo.get(delegation.delegator_id)
            delegate = repo.get(delegation.delegate_id)
            assert delegator is not None and delegate is not None
            raise DelegationError(
                f"{delegate.username} already delegates {delegator.username} (directly or through a chain): "
                f"a delegation from {delegator.username} to {delegate.username} would make a cycle"
            )
    if target is S.ACTIVE:
        # §8.5: one paying Premium user per taxpayer, so at most one ACTIVE delegation per delegator.
        other = repo.other_active_delegation(delegation)
        if other is not None:
            delegate = repo.get(other.delegate_id)
            assert delegate is not None
            raise DelegationError(
                f"the delegator already has an ACTIVE delegation (id {other.id}, to {delegate.username}): "
                "suspend or revoke it first"
            )


def apply(
    session: UnitOfWork, delegation: Delegation, event: E, clock: Clock, actor: Who = None
) -> Delegation:
    """Move a delegation by one event of the table and record the change."""
    repo = AccountRepository(session)
    current = S(delegation.status) if delegation.id is not None else None
    target = next_status(current, event)
    _guard(repo, delegation, event, target)
    now = clock.now()
    delegation.status = target
    delegation.updated_at = now
    if delegation.id is None:
        repo.add_delegation(delegation)
    repo.add_change(
        DelegationChange(
            delegation_id=delegation.id,
            event=event.value,
            from_status=current.value if current else None,
            to_status=target.value,
            actor=actor.username if isinstance(actor, audit.Actor) else actor,
            at=now,
        )
    )
    session.flush()
    return delegation


def create(
    session: UnitOfWork,
    delegator: Account,
    delegate: Account,
    status: S,
    clock: Clock,
    actor: Who = None,
) -> Delegation:
    """Create a delegation from `delegator` to the Premium user `delegate`, in `status`."""
    if not delegate.is_premium:
        raise DelegationError(
            f"{delegate.username!r} is not a Premium user: only Premium users can be delegated"
        )
    if delegator.id == delegate.id:
        raise DelegationError("an account cannot delegate itself")
    repo = AccountRepository(session)
    repo.lock_delegation_graph()
    existing = repo.delegation_between(delegator.id, delegate.id)
    if existing is not None:
        raise DelegationError(
            f"a delegation from {delegator.username} to {delegate.username} already exists "
            f"(id {existing.id}, {existing.status}): change its status instead"
        )
    now = clock.now()
    delegation = Delegation(
        delegator_id=delegator.id, delegate_id=delegate.id, created_at=now, updated_at=now
    )
    for event in path_to(status):
        apply(session, delegation, event, clock, actor)
    details = {"delegationId": delegation.id, "delegate": delegate.username, "status": delegation.status}
    by = audit.as_actor(actor)
    audit.record(session, audit.Kind.DELEGATION_CREATED, by, clock, subject=delegator, details=details)
    return delegation


def set_status(
    session: UnitOfWork, delegation_id: int, status: S, clock: Clock, actor: Who = None
) -> Delegation:
    """Move a delegation to `status` if the table has a transition for it."""
    repo = AccountRepository(session)
    repo.lock_delegation_graph()
    delegation = repo.delegation(delegation_id, for_update=True)
    if delegation is None:
        raise NotFound(f"no delegation with id {delegation_id}")
    current = S(delegation.status)
    event = event_for(current, status)
    apply(session, delegation, event, clock, actor)
    delegator, delegate = repo.get(delegation.delegator_id), repo.get(delegation.delegate_id)
    details = {
        "delegationId": delegation.id,
        "delegate": delegate.username if delegate else None,
        "event": event.value,
        "from": current.value,
        "to": delegation.status,
    }
    by = audit.as_actor(actor)
    audit.record(session, audit.Kind.DELEGATION_CHANGED, by, clock, subject=delegator, details=details)
    return delegation


def history(session: UnitOfWork, delegation_id: int) -> list[DelegationChange]:
    """The status changes of one delegation, oldest first."""
    repo = AccountRepository(session)
    if repo.delegation(delegation_id) is None:
        raise NotFound(f"no delegation with id {delegation_id}")
    return repo.changes(delegation_id)


def listing(session: UnitOfWork, account: Account | None) -> list[tuple[Delegation, str, str]]:
    """Delegations given or received by `account` (all when None), with both usernames."""
    return AccountRepository(session).delegations_of(account.id if account else None)
