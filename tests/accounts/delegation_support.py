"""Helpers for delegation tests: each call is its own unit of work, like a request or a CLI command."""

from __future__ import annotations

from varco.accounts import delegations, service
from varco.accounts.models import Account, Delegation, DelegationStatus
from varco.core.clock import current_clock
from varco.core.db import unit_of_work


def delegate(
    delegator: Account, to: Account, status: DelegationStatus = DelegationStatus.ACTIVE
) -> Delegation:
    with unit_of_work() as session:
        return service.create_delegation(
            session, service.get(session, delegator.id), service.get(session, to.id), status, current_clock()
        )


def set_status(delegation_id: int, status: DelegationStatus) -> Delegation:
    with unit_of_work() as session:
        return delegations.set_status(session, delegation_id, status, current_clock(), actor="test")


def status_of(delegation_id: int) -> str:
    with unit_of_work() as session:
        found = session.get(Delegation, delegation_id)
        assert found is not None
        return found.status


def history(delegation_id: int) -> list[tuple[str, str | None, str]]:
    with unit_of_work() as session:
        return [(c.event, c.from_status, c.to_status) for c in delegations.history(session, delegation_id)]


def payer_of(account: Account) -> str:
    with unit_of_work() as session:
        return service.paying_account(session, service.get(session, account.id)).username
