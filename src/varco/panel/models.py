"""Panel tables: browser sessions and registration completion (e-mail receipt is in `varco.mail.models`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from varco.core.db import Base, UTCDateTime


class PanelSession(Base):
    """A signed-in browser; the cookie carries a random token, only its digest is stored."""

    __tablename__ = "panel_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_token: Mapped[str] = mapped_column(String(64))  # every form posts it back
    user_agent: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PanelRegistration(Base):
    """§1: registration is completed in the panel at first sign-in (terms, reference e-mail, password)."""

    __tablename__ = "panel_registrations"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    reference_email: Mapped[str] = mapped_column(String(255))
    terms_accepted_at: Mapped[datetime] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime] = mapped_column(UTCDateTime)
