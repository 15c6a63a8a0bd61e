"""One scheduler: the lease that runs periodic work once per interval across all workers

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 18:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from varco.core.db import UTCDateTime

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "periodic_runs",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("last_run_at", UTCDateTime(), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_periodic_runs")),
    )


def downgrade() -> None:
    op.drop_table("periodic_runs")
