"""invoice file names unique per direction (a file sent between two varco clients is stored twice)

Revision ID: 0011
Revises: 0002
Create Date: 2026-11-24 06:50:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite cannot drop a constraint in place, so the table is copied.
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.drop_constraint("uq_invoices_filename", type_="unique")
        batch_op.create_unique_constraint("uq_invoices_filename_direction", ["filename", "direction"])


def downgrade() -> None:
    # Fails while a file name is held in both directions (the received copies of internal sends).
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.drop_constraint("uq_invoices_filename_direction", type_="unique")
        batch_op.create_unique_constraint("uq_invoices_filename", ["filename"])
