"""The migrations build exactly the tables the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from varco.all_models import metadata


def test_migrated_schema_matches_the_models(db):
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
