"""§8.4 annual locks: one row per paying account, year and annual limit that was reached."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class AnnualLock(Base):
    """Locked while `unlocked_at` is null. An operator's unlock holds for that limit and year: the
    account locks again only at a different annual limit (a tier change) or in the next year."""

    __tablename__ = "annual_locks"
    __table_args__ = (UniqueConstraint("account_id", "year", "annual_limit"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    year: Mapped[int] = mapped_column(Integer)
    annual_limit: Mapped[int] = mapped_column(Integer)
    used: Mapped[int] = mapped_column(Integer)  # accepted transmissions when it locked
    locked_at: Mapped[datetime] = mapped_column(UTCDateTime)
    unlocked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    unlocked_by: Mapped[str | None] = mapped_column(String(150))
