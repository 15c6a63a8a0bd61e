"""Search: the VAT-number indexes of invoices become (VAT, account, direction, creation time, id),
so that a list filtered by receiverVatcode or senderVatcode reads that counterparty's files of the
window, not all of them (SQLite, without statistics, preferred the search index to the VAT one)

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 11:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    # The VAT number first: a list without that filter has no use for them (docs/search.md).
    "ix_invoices_receiver_window": ["receiver_vat", "account_id", "direction", "created_at", "id"],
    "ix_invoices_sender_window": ["sender_vat", "account_id", "direction", "created_at", "id"],
}


REPLACED = {"ix_invoices_receiver_vat": "receiver_vat", "ix_invoices_sender_vat": "sender_vat"}


def upgrade() -> None:
    for name, columns in INDEXES.items():
        op.create_index(name, "invoices", columns)
    for name in REPLACED:  # each new index starts with the VAT number: it serves their look-ups
        op.drop_index(name, table_name="invoices")


def downgrade() -> None:
    for name, column in REPLACED.items():
        op.create_index(name, "invoices", [column])
    for name in INDEXES:
        op.drop_index(name, table_name="invoices")
