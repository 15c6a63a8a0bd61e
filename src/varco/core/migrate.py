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


def upgrade(url: str, revision: str = "head") -> None:
    """Apply the migrations (one linear history)."""
    cfg = alembic_config(url)
    _collapse_branches(cfg, url)
    command.upgrade(cfg, revision)


def _collapse_branches(cfg: Config, url: str) -> None:
    """Databases migrated before the history was made linear list one revision per former branch
    (every branch was always applied whole): the newest of them stands for all."""
    applied = current(url)
    if len(applied) > 1:
        command.stamp(cfg, max(applied), purge=True)


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
