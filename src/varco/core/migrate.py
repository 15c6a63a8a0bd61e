"""Programmatic Alembic: `varco db upgrade` and the test suite use the same migrations."""

from __future__ import annotations

from importlib.resources import files

from alembic import command
from alembic.config import Config


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(files("varco") / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "heads") -> None:
    # "heads": domains add migrations on their own branches off a shared base; all are applied.
    command.upgrade(alembic_config(url), revision)


def current(url: str) -> tuple[str, ...]:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return tuple(sorted(MigrationContext.configure(conn).get_current_heads()))
    finally:
        engine.dispose()


def revision(url: str, message: str) -> None:
    """Autogenerate a new migration (developers)."""
    command.revision(alembic_config(url), message=message, autogenerate=True)
