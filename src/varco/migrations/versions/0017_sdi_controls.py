"""SDI controls: the simulated SDI's register of invoices it took (00404, fattura duplicata), and
the account setting preflightSdiControls

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 02:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sdi_sim_invoice_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("supplier", sa.String(length=32), nullable=False),
        sa.Column("document_type", sa.String(length=4), nullable=False),
        sa.Column("number", sa.String(length=20), nullable=False),
        sa.Column("invoice_date", sa.Date(), nullable=False),
        sa.Column("file_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["file_id"], ["sdi_sim_files.id"], name=op.f("fk_sdi_sim_invoice_keys_file_id_sdi_sim_files")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sdi_sim_invoice_keys")),
        sa.UniqueConstraint(
            "supplier",
            "document_type",
            "number",
            "invoice_date",
            name=op.f("uq_sdi_sim_invoice_keys_supplier"),
        ),
    )

    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("preflight_sdi_controls", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_column("preflight_sdi_controls")
    op.drop_table("sdi_sim_invoice_keys")
