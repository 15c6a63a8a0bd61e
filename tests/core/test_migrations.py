"""The migrations build exactly the tables the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from varco.all_models import metadata


def test_migrated_schema_matches_the_models(db):
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []


def test_the_history_is_linear():
    from alembic.script import ScriptDirectory

    from varco.core.migrate import alembic_config

    assert len(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()) == 1


def test_a_database_migrated_on_the_former_branches_upgrades(tmp_path):
    from sqlalchemy import create_engine, text

    from varco.core import migrate

    url = f"sqlite:///{tmp_path / 'branches.sqlite3'}"
    migrate.upgrade(url)
    engine = create_engine(url)
    with engine.begin() as conn:  # what a database upgraded with "heads" before had: one row per branch
        for revision in ("0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011"):
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": revision})
    engine.dispose()
    migrate.upgrade(url)
    [head] = ScriptDirectory.from_config(migrate.alembic_config(url)).get_heads()
    assert migrate.current(url) == (head,)
