"""search: document types on invoices, month counts kept by triggers, one search index

Revision ID: 0013
Revises: 0002
Create Date: 2026-11-24 07:00:00

- `invoices.document_types` (distinct TipoDocumento of the bodies, sorted, space-separated) joins
  the search index, so the `documentType` filter is read inside the index-only scan instead of a
  join with `invoice_bodies` (whose document-type index goes).
- `invoice_month_counts`: files per (account, direction, UTC month), kept by triggers on
  `invoices`, so a total over whole months (version 1 without dates) is a sum of a few hundred rows
  instead of a count of every file.
- `ix_invoices_account_direction_created` is a prefix of the search index: dropped.

Runs after 0011: on SQLite, 0011 rebuilds `invoices` (batch mode), which would drop the triggers.
Any later migration that rebuilds `invoices` on SQLite must create them again (`_triggers`).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEARCH_COLUMNS = ["account_id", "direction", "created_at", "id", "state"]

PG_MONTH = "to_char({t}.created_at AT TIME ZONE 'UTC', 'YYYYMM')::integer"
SQLITE_MONTH = "CAST(strftime('%Y%m', {t}.created_at) AS INTEGER)"

PG_TRIGGERS = [
    f"""
    CREATE FUNCTION invoice_month_counts_statement() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO invoice_month_counts AS c (account_id, direction, month, count)
            SELECT account_id, direction, {PG_MONTH.format(t="new_rows")}, count(*)
            FROM new_rows GROUP BY 1, 2, 3
            ON CONFLICT (account_id, direction, month) DO UPDATE SET count = c.count + excluded.count;
        ELSE
            UPDATE invoice_month_counts AS c SET count = c.count - gone.n
            FROM (SELECT account_id, direction, {PG_MONTH.format(t="old_rows")} AS month, count(*) AS n
                  FROM old_rows GROUP BY 1, 2, 3) AS gone
            WHERE (c.account_id, c.direction, c.month) = (gone.account_id, gone.direction, gone.month);
        END IF;
        RETURN NULL;
    END $$
    """,
    f"""
    CREATE FUNCTION invoice_month_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE invoice_month_counts AS c SET count = c.count - 1
        WHERE (c.account_id, c.direction, c.month)
            = (OLD.account_id, OLD.direction, {PG_MONTH.format(t="OLD")});
        INSERT INTO invoice_month_counts AS c (account_id, direction, month, count)
        VALUES (NEW.account_id, NEW.direction, {PG_MONTH.format(t="NEW")}, 1)
        ON CONFLICT (account_id, direction, month) DO UPDATE SET count = c.count + 1;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER invoice_month_counts_insert AFTER INSERT ON invoices REFERENCING NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION invoice_month_counts_statement()",
    "CREATE TRIGGER invoice_month_counts_delete AFTER DELETE ON invoices REFERENCING OLD TABLE AS old_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION invoice_month_counts_statement()",
    "CREATE TRIGGER invoice_month_counts_update AFTER UPDATE OF account_id, direction, created_at "
    "ON invoices FOR EACH ROW WHEN ((OLD.account_id, OLD.direction, OLD.created_at) "
    "IS DISTINCT FROM (NEW.account_id, NEW.direction, NEW.created_at)) "
    "EXECUTE FUNCTION invoice_month_counts_move()",
]

_SQLITE_ADD = f"""
    INSERT OR IGNORE INTO invoice_month_counts (account_id, direction, month, count)
    VALUES (NEW.account_id, NEW.direction, {SQLITE_MONTH.format(t="NEW")}, 0);
    UPDATE invoice_month_counts SET count = count + 1
    WHERE account_id = NEW.account_id AND direction = NEW.direction
      AND month = {SQLITE_MONTH.format(t="NEW")};
"""
_SQLITE_REMOVE = f"""
    UPDATE invoice_month_counts SET count = count - 1
    WHERE account_id = OLD.account_id AND direction = OLD.direction
      AND month = {SQLITE_MONTH.format(t="OLD")};
"""
SQLITE_TRIGGERS = [
    f"CREATE TRIGGER invoice_month_counts_insert AFTER INSERT ON invoices BEGIN {_SQLITE_ADD} END",
    f"CREATE TRIGGER invoice_month_counts_delete AFTER DELETE ON invoices BEGIN {_SQLITE_REMOVE} END",
    "CREATE TRIGGER invoice_month_counts_update AFTER UPDATE OF account_id, direction, created_at "
    f"ON invoices BEGIN {_SQLITE_REMOVE} {_SQLITE_ADD} END",
]

PG_DOCUMENT_TYPES = """
    UPDATE invoices SET document_types = t.types FROM (
        SELECT invoice_id, string_agg(DISTINCT document_type, ' ' ORDER BY document_type) AS types
        FROM invoice_bodies WHERE document_type IS NOT NULL GROUP BY invoice_id
    ) AS t WHERE t.invoice_id = invoices.id
"""
SQLITE_DOCUMENT_TYPES = """
    UPDATE invoices SET document_types = (
        SELECT group_concat(document_type, ' ') FROM (
            SELECT DISTINCT document_type FROM invoice_bodies
            WHERE invoice_id = invoices.id AND document_type IS NOT NULL ORDER BY document_type
        )
    )
"""


def _triggers(dialect: str) -> list[str]:
    return PG_TRIGGERS if dialect == "postgresql" else SQLITE_TRIGGERS


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.add_column("invoices", sa.Column("document_types", sa.String(length=100), nullable=True))
    op.execute(PG_DOCUMENT_TYPES if dialect == "postgresql" else SQLITE_DOCUMENT_TYPES)
    op.drop_index("ix_invoices_search_window", table_name="invoices")
    op.create_index("ix_invoices_search_window", "invoices", [*SEARCH_COLUMNS, "document_types"])
    op.drop_index("ix_invoices_account_direction_created", table_name="invoices")
    op.drop_index("ix_invoice_bodies_document_type_invoice_id", table_name="invoice_bodies")

    op.create_table(
        "invoice_month_counts",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("direction", sa.String(length=3), nullable=False),
        sa.Column("month", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("account_id", "direction", "month", name=op.f("pk_invoice_month_counts")),
    )
    month = (PG_MONTH if dialect == "postgresql" else SQLITE_MONTH).format(t="invoices")
    op.execute(
        "INSERT INTO invoice_month_counts (account_id, direction, month, count) "
        f"SELECT account_id, direction, {month}, count(*) FROM invoices GROUP BY 1, 2, 3"
    )
    for statement in _triggers(dialect):
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    on = " ON invoices" if dialect == "postgresql" else ""
    for name in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS invoice_month_counts_{name}{on}")
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS invoice_month_counts_statement()")
        op.execute("DROP FUNCTION IF EXISTS invoice_month_counts_move()")
    op.drop_table("invoice_month_counts")
    op.create_index(
        "ix_invoice_bodies_document_type_invoice_id", "invoice_bodies", ["document_type", "invoice_id"]
    )
    op.create_index("ix_invoices_account_direction_created", "invoices", SEARCH_COLUMNS[:3])
    op.drop_index("ix_invoices_search_window", table_name="invoices")
    op.create_index("ix_invoices_search_window", "invoices", SEARCH_COLUMNS)
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.drop_column("document_types")
