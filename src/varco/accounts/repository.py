"""Account and delegation queries."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from varco.accounts.models import Account, Delegation, DelegationStatus


class AccountRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, account_id: int) -> Account | None:
        return self.session.get(Account, account_id)

    def by_username(self, username: str) -> Account | None:
        return self.session.scalar(select(Account).where(Account.username == username))

    def add(self, account: Account) -> Account:
        self.session.add(account)
        self.session.flush()
        return account

    def all(self) -> list[Account]:
        return list(self.session.scalars(select(Account).order_by(Account.username)))

    def has_active_delegate(self, delegator_id: int) -> bool:
        """Is there an ACTIVE delegation from this account to a Premium account?"""
        query = (
            select(Delegation.id)
            .join(Account, Account.id == Delegation.delegate_id)
            .where(
                Delegation.delegator_id == delegator_id,
                Delegation.status == DelegationStatus.ACTIVE,
                Account.kind == "premium",
                Account.is_disabled.is_(False),
            )
            .limit(1)
        )
        return self.session.scalar(query) is not None

    def add_delegation(self, delegation: Delegation) -> Delegation:
        self.session.add(delegation)
        self.session.flush()
        return delegation

    def active_delegate_of(self, delegator_id: int) -> Account | None:
        """The Premium account this one has an ACTIVE delegation to (the contract allows one)."""
        query = (
            select(Account)
            .join(Delegation, Delegation.delegate_id == Account.id)
            .where(
                Delegation.delegator_id == delegator_id,
                Delegation.status == DelegationStatus.ACTIVE,
                Account.kind == "premium",
            )
            .order_by(Delegation.id)
            .limit(1)
        )
        return self.session.scalar(query)

    def assignor_by_vat(self, delegate_id: int, country: str, vat: str) -> tuple[Account, str] | None:
        """An account with this VAT that delegated `delegate_id`, with the delegation's status."""
        query = (
            select(Account, Delegation.status)
            .join(Delegation, Delegation.delegator_id == Account.id)
            .where(
                Delegation.delegate_id == delegate_id,
                Account.country_code == country,
                Account.vat_code == vat,
            )
            .order_by(Delegation.id)
            .limit(1)
        )
        row = self.session.execute(query).first()
        return (row[0], row[1]) if row else None

    def active_delegator_ids(self, delegate_id: int) -> list[int]:
        query = select(Delegation.delegator_id).where(
            Delegation.delegate_id == delegate_id, Delegation.status == DelegationStatus.ACTIVE
        )
        return list(self.session.scalars(query))
