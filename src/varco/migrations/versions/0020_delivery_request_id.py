"""Callbacks: each delivery keeps the id of the request that caused its event, sent as X-Request-ID
even when the delivery is sent by the job of the one before it in its lane

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 11:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("callback_deliveries") as batch:
        batch.add_column(sa.Column("request_id", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("callback_deliveries") as batch:
        batch.drop_column("request_id")
