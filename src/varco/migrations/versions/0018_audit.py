"""Audit trail: the append-only table of security and administrative events, with triggers that
refuse UPDATE and DELETE (and TRUNCATE on PostgreSQL)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from varco.core.db import UTCDateTime

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REFUSAL = "audit_events is append-only"
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER audit_events_no_{what} BEFORE {what.upper()} ON audit_events "
    f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
    for what in ("update", "delete")
]
PG_TRIGGERS = [
    "CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$",
    "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
    "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()",
    "CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()",
]


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("actor_account_id", sa.Integer(), nullable=True),
        sa.Column("actor_username", sa.String(length=150), nullable=True),
        sa.Column("subject_account_id", sa.Integer(), nullable=True),
        sa.Column("subject_username", sa.String(length=150), nullable=True),
        sa.Column("ip", sa.String(length=45), nullable=True),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_events_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_events_kind"), ["kind"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_events_actor_username"), ["actor_username"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_audit_events_subject_username"), ["subject_username"], unique=False
        )
    postgresql = op.get_bind().dialect.name == "postgresql"
    for statement in PG_TRIGGERS if postgresql else SQLITE_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    op.drop_table("audit_events")  # its triggers go with it
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION audit_events_append_only()")
