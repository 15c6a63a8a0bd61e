"""annual locks and mail outbox

Revision ID: 0006
Revises: 0002
Create Date: 2026-11-23 05:06:29.483271
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import varco.core.db

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annual_locks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("annual_limit", sa.Integer(), nullable=False),
        sa.Column("used", sa.Integer(), nullable=False),
        sa.Column("locked_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("unlocked_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("unlocked_by", sa.String(length=150), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_annual_locks_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annual_locks")),
        sa.UniqueConstraint("account_id", "year", "annual_limit", name=op.f("uq_annual_locks_account_id")),
    )
    with op.batch_alter_table("annual_locks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_annual_locks_account_id"), ["account_id"], unique=False)

    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("to_address", sa.String(length=255), nullable=True),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", varco.core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", varco.core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("transport", sa.String(length=8), nullable=True),
        sa.Column("location", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_mail_outbox_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_outbox")),
        sa.UniqueConstraint("key", name=op.f("uq_mail_outbox_key")),
    )
    with op.batch_alter_table("mail_outbox", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mail_outbox_account_id"), ["account_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("mail_outbox", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mail_outbox_account_id"))

    op.drop_table("mail_outbox")
    with op.batch_alter_table("annual_locks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_annual_locks_account_id"))

    op.drop_table("annual_locks")
