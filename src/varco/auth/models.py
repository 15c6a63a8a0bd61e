"""Issued tokens. Only SHA-256 digests are stored, never the tokens themselves."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class AuthToken(Base):
    """One sign-in or refresh: an access token and the refresh token issued with it."""

    __tablename__ = "auth_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    access_digest: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_digest: Mapped[str] = mapped_column(String(64), unique=True)
    client_id: Mapped[str] = mapped_column(String(100), default="")
    issued_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)  # §3.4: issue + 30 min
    refresh_expires_at: Mapped[datetime] = mapped_column(UTCDateTime)  # §3.4: issue + 60 min
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # refresh token used up
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
