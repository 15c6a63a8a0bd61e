"""callbacks and their deliveries (issue 12)

Revision ID: 0007
Revises: 0002
Create Date: 2026-11-23 05:25:25.259693
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import varco.core.db

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "callbacks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("secret_encrypted", sa.String(length=255), nullable=False),
        sa.Column("secret_hint", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("disabled_reason", sa.String(length=500), nullable=True),
        sa.Column("disabled_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_callbacks_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_callbacks")),
    )
    with op.batch_alter_table("callbacks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_callbacks_account_id"), ["account_id"], unique=False)

    op.create_table(
        "callback_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("callback_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("event_uid", sa.String(length=40), nullable=False),
        sa.Column("lane", sa.String(length=120), nullable=False),
        sa.Column("is_test", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("leased_until", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("first_attempt_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("delivered_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["callback_id"], ["callbacks.id"], name=op.f("fk_callback_deliveries_callback_id_callbacks")
        ),
        sa.ForeignKeyConstraint(
            ["event_id"], ["events.id"], name=op.f("fk_callback_deliveries_event_id_events")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_callback_deliveries")),
        sa.UniqueConstraint("callback_id", "event_id", name=op.f("uq_callback_deliveries_callback_id")),
    )
    with op.batch_alter_table("callback_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_callback_deliveries_due", ["status", "next_attempt_at"], unique=False)
        batch_op.create_index(
            "ix_callback_deliveries_lane", ["callback_id", "lane", "status", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("callback_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_callback_deliveries_lane")
        batch_op.drop_index("ix_callback_deliveries_due")

    op.drop_table("callback_deliveries")
    with op.batch_alter_table("callbacks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_callbacks_account_id"))

    op.drop_table("callbacks")
