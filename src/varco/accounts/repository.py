"""Account and delegation queries."""

from __future__ import annotations

from sqlalchemy import bindparam, or_, select

from varco.accounts.models import Account, Delegation, DelegationChange, DelegationStatus
from varco.core.dialects import dialect_of
from varco.core.uow import Fact, UnitOfWork

# pg_advisory_xact_lock key for changes to the delegation graph (any constant: one lock).
_GRAPH_LOCK_KEY = 0x7661_7263_6F64  # "varcod"


# Run twice per upload (§8.5 payer, §8 guard): built once, bound per call.
# Its id only: most accounts have none (one cheap query); the account, if any, comes by primary key
# (usually already in the session: no query).
# A Core select on the tables' columns: half the cost of an ORM-enabled one.
_ACCOUNTS, _DELEGATIONS = Account.__table__.c, Delegation.__table__.c
ACTIVE_DELEGATE = (
    select(_ACCOUNTS.id)
    .join_from(Delegation.__table__, Account.__table__, _DELEGATIONS.delegate_id == _ACCOUNTS.id)
    .where(
        _DELEGATIONS.delegator_id == bindparam("delegator_id"),
        _DELEGATIONS.status == DelegationStatus.ACTIVE,
        _ACCOUNTS.kind == "premium",
    )
    .order_by(_DELEGATIONS.id)
    .limit(1)
)


# Accounts read by id in this transaction, held so that the session's weak identity map keeps them:
# the jobs of a batch (core/jobs.py) read the same uploader's without a query each.
_READ: Fact[dict[int, Account]] = Fact("accounts read", dict)


class AccountRepository:
    def __init__(self, session: UnitOfWork) -> None:
        self.session = session

    def get(self, account_id: int) -> Account | None:
        read = self.session.fact(_READ)
        account = read.get(account_id) or self.session.get(Account, account_id)
        if account is not None:
            read[account_id] = account
        return account

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
        self.session.flush()  # a Core select: no autoflush of its own
        delegate_id = self.session.scalar(ACTIVE_DELEGATE, {"delegator_id": delegator_id})
        return None if delegate_id is None else self.session.get(Account, delegate_id)

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

    # Delegation graph (writes go through accounts.delegations) -------------------------------------

    def lock_delegation_graph(self) -> None:
        """Serialise changes to the delegation graph (cycle and single-ACTIVE checks read all of it).

        SQLite transactions already start with BEGIN IMMEDIATE; PostgreSQL takes an advisory lock
        released at commit.
        """
        dialect_of(self.session).advisory_lock(self.session, _GRAPH_LOCK_KEY)

    def delegation(self, delegation_id: int, *, for_update: bool = False) -> Delegation | None:
        return self.session.get(Delegation, delegation_id, with_for_update=for_update or None)

    def delegation_between(self, delegator_id: int, delegate_id: int) -> Delegation | None:
        return self.session.scalar(
            select(Delegation).where(
                Delegation.delegator_id == delegator_id, Delegation.delegate_id == delegate_id
            )
        )

    def reachable_delegates(self, start_id: int) -> set[int]:
        """Accounts reachable from `start_id` along delegations that are not INACTIVE."""
        seen: set[int] = set()
        frontier = {start_id}
        while frontier:
            query = select(Delegation.delegate_id).where(
                Delegation.delegator_id.in_(frontier), Delegation.status != DelegationStatus.INACTIVE
            )
            frontier = set(self.session.scalars(query)) - seen
            seen |= frontier
        return seen

    def other_active_delegation(self, delegation: Delegation) -> Delegation | None:
        """Another ACTIVE delegation from the same delegator, if any."""
        return self.session.scalar(
            select(Delegation)
            .where(
                Delegation.delegator_id == delegation.delegator_id,
                Delegation.status == DelegationStatus.ACTIVE,
                Delegation.id != delegation.id,
            )
            .limit(1)
        )

    def add_change(self, change: DelegationChange) -> None:
        self.session.add(change)

    def changes(self, delegation_id: int) -> list[DelegationChange]:
        query = (
            select(DelegationChange)
            .where(DelegationChange.delegation_id == delegation_id)
            .order_by(DelegationChange.id)
        )
        return list(self.session.scalars(query))

    def delegations_of(self, account_id: int | None) -> list[tuple[Delegation, str, str]]:
        """Delegations (with delegator and delegate usernames) touching `account_id`, or all of them."""
        delegator = Account.__table__.alias("delegator")
        delegate = Account.__table__.alias("delegate")
        query = (
            select(Delegation, delegator.c.username, delegate.c.username)
            .join(delegator, delegator.c.id == Delegation.delegator_id)
            .join(delegate, delegate.c.id == Delegation.delegate_id)
            .order_by(Delegation.id)
        )
        if account_id is not None:
            query = query.where(
                or_(Delegation.delegator_id == account_id, Delegation.delegate_id == account_id)
            )
        return [(row[0], row[1], row[2]) for row in self.session.execute(query)]
