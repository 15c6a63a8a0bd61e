"""control panel: sessions, registrations, e-mail receipt of received invoices

Revision ID: 0009
Revises: 0002
Create Date: 2026-11-23 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import varco.core.db

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "panel_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("user_agent", sa.String(length=255), nullable=False),
        sa.Column("created_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_digest"),
    )
    op.create_index(op.f("ix_panel_sessions_account_id"), "panel_sessions", ["account_id"], unique=False)
    op.create_table(
        "panel_registrations",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("reference_email", sa.String(length=255), nullable=False),
        sa.Column("terms_accepted_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("account_id"),
    )
    op.create_table(
        "mail_receipt_settings",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("is_enabled", sa.Boolean(), nullable=False),
        sa.Column("address", sa.String(length=255), nullable=True),
        sa.Column("enabled_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("updated_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("account_id"),
    )
    op.create_table(
        "mail_receipts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("invoice_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("created_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.ForeignKeyConstraint(["invoice_id"], ["invoices.id"]),
        sa.ForeignKeyConstraint(["message_id"], ["mail_outbox.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("invoice_id"),
    )
    op.create_index(op.f("ix_mail_receipts_account_id"), "mail_receipts", ["account_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_mail_receipts_account_id"), table_name="mail_receipts")
    op.drop_table("mail_receipts")
    op.drop_table("mail_receipt_settings")
    op.drop_table("panel_registrations")
    op.drop_index(op.f("ix_panel_sessions_account_id"), table_name="panel_sessions")
    op.drop_table("panel_sessions")
