"""SDICoop channel: transmissions owed to the SDI, exchanges as sent and answered, unmatched
messages; invoices handed to the channel

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 17:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from varco.core.db import UTCDateTime

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sdicoop_transmissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("ref_id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=80), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=False),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("answer_id", sa.String(length=32), nullable=True),
        sa.Column("resent", sa.Boolean(), nullable=False),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sdicoop_transmissions")),
        sa.UniqueConstraint("kind", "ref_id", name=op.f("uq_sdicoop_transmissions_kind")),
    )
    op.create_index(
        op.f("ix_sdicoop_transmissions_status"), "sdicoop_transmissions", ["status"], unique=False
    )
    op.create_table(
        "sdicoop_exchanges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("transmission_id", sa.Integer(), nullable=True),
        sa.Column("direction", sa.String(length=3), nullable=False),
        sa.Column("operation", sa.String(length=40), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("sdi_id", sa.String(length=32), nullable=True),
        sa.Column("request_blob_id", sa.Integer(), nullable=True),
        sa.Column("response_blob_id", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["transmission_id"],
            ["sdicoop_transmissions.id"],
            name=op.f("fk_sdicoop_exchanges_transmission_id_sdicoop_transmissions"),
        ),
        sa.ForeignKeyConstraint(
            ["request_blob_id"], ["blobs.id"], name=op.f("fk_sdicoop_exchanges_request_blob_id_blobs")
        ),
        sa.ForeignKeyConstraint(
            ["response_blob_id"], ["blobs.id"], name=op.f("fk_sdicoop_exchanges_response_blob_id_blobs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sdicoop_exchanges")),
    )
    op.create_index(
        op.f("ix_sdicoop_exchanges_transmission_id"), "sdicoop_exchanges", ["transmission_id"], unique=False
    )
    op.create_index(op.f("ix_sdicoop_exchanges_sdi_id"), "sdicoop_exchanges", ["sdi_id"], unique=False)
    op.create_table(
        "sdi_unmatched_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=80), nullable=False),
        sa.Column("type", sa.String(length=4), nullable=True),
        sa.Column("sdi_id", sa.String(length=32), nullable=True),
        sa.Column("nome_file", sa.String(length=80), nullable=True),
        sa.Column("reason", sa.String(length=255), nullable=False),
        sa.Column("blob_id", sa.Integer(), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["blob_id"], ["blobs.id"], name=op.f("fk_sdi_unmatched_messages_blob_id_blobs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sdi_unmatched_messages")),
        sa.UniqueConstraint("filename", name=op.f("uq_sdi_unmatched_messages_filename")),
    )
    op.create_index(
        op.f("ix_sdi_unmatched_messages_sdi_id"), "sdi_unmatched_messages", ["sdi_id"], unique=False
    )
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.add_column(sa.Column("handed_over_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.drop_column("handed_over_at")
    op.drop_table("sdi_unmatched_messages")
    op.drop_table("sdicoop_exchanges")
    op.drop_table("sdicoop_transmissions")
