"""mail attachments (files sent with an outbox message, e.g. e-mail receipt of received invoices)

Revision ID: 0010
Revises: 0002
Create Date: 2026-11-24 06:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mail_attachments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=100), nullable=False),
        sa.Column("blob_id", sa.Integer(), nullable=False),
        sa.Column("rendered_from", sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(["blob_id"], ["blobs.id"], name=op.f("fk_mail_attachments_blob_id_blobs")),
        sa.ForeignKeyConstraint(
            ["message_id"], ["mail_outbox.id"], name=op.f("fk_mail_attachments_message_id_mail_outbox")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_attachments")),
        sa.UniqueConstraint("message_id", "position", name=op.f("uq_mail_attachments_message_id")),
    )
    with op.batch_alter_table("mail_attachments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mail_attachments_message_id"), ["message_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("mail_attachments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mail_attachments_message_id"))
    op.drop_table("mail_attachments")
