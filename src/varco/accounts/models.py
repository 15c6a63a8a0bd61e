"""Accounts (Premium and basic users) and the delegations between them."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from sqlalchemy import Boolean, Date, ForeignKey, Integer, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class AccountKind(StrEnum):
    PREMIUM = "premium"
    BASIC = "basic"


class DelegationStatus(StrEnum):
    # §3.3 multiseller states
    ACTIVE = "ACTIVE"
    SUSPEND = "SUSPEND"
    INACTIVE = "INACTIVE"
    PENDING = "PENDING"


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(150), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16), default=AccountKind.PREMIUM)
    description: Mapped[str] = mapped_column(String(255), default="")
    country_code: Mapped[str] = mapped_column(String(2), default="IT")
    vat_code: Mapped[str | None] = mapped_column(String(28), index=True)  # routing of received invoices
    fiscal_code: Mapped[str | None] = mapped_column(String(28), index=True)
    pec: Mapped[str | None] = mapped_column(String(255))
    tier: Mapped[int] = mapped_column(Integer, default=0)
    max_space_kb: Mapped[int] = mapped_column(Integer)
    expires_on: Mapped[date] = mapped_column(Date)
    is_disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)  # operators: SDI scenarios, tiers, locks
    # varco's addition: uploads answer 0096 with a failing SDI control (docs/sdi-controls.md)
    preflight_sdi_controls: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    @property
    def is_premium(self) -> bool:
        return self.kind == AccountKind.PREMIUM


class Delegation(Base):
    """`delegator` (basic or Premium) lets `delegate` (Premium) transmit for it."""

    __tablename__ = "delegations"
    __table_args__ = (UniqueConstraint("delegator_id", "delegate_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    delegator_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    delegate_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=DelegationStatus.PENDING)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class DelegationChange(Base):
    """One row per status change of a delegation (written only by `accounts.delegations`)."""

    __tablename__ = "delegation_changes"

    id: Mapped[int] = mapped_column(primary_key=True)
    delegation_id: Mapped[int] = mapped_column(ForeignKey("delegations.id"), index=True)
    event: Mapped[str] = mapped_column(String(16))  # DelegationEvent
    from_status: Mapped[str | None] = mapped_column(String(16))  # None: the delegation was created
    to_status: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str | None] = mapped_column(String(150))  # who asked (operator, username)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
