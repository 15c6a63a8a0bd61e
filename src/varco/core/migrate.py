"""Programmatic Alembic: `varco db upgrade` and the test suite use the same migrations.

Processes started together (a rolling start: several `varco serve` and `varco worker` on one
database) migrate one at a time: `exclusive` holds a PostgreSQL advisory lock, or an exclusive
lock on a file beside the SQLite database, and the others find the work done. A database at a
revision this code does not know (migrated by a newer varco) is refused, never touched.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

_LOCK_KEY = 0x76617263  # "varc": the advisory lock every varco migrator takes


class UnknownSchema(Exception):
    """The database is at a revision this code does not have."""


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(files("varco") / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


@contextmanager
def exclusive(url: str) -> Iterator[None]:
    """One process at a time across every process on this database (migrations, demo seeding)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        engine = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _LOCK_KEY})
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _LOCK_KEY})
        finally:
            engine.dispose()
    elif backend == "sqlite" and parsed.database and parsed.database != ":memory:":
        lock_file = Path(f"{parsed.database}.lock")
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        with lock_file.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes, even on a crash
            yield
    else:
        yield


def upgrade(url: str, revision: str = "head") -> None:
    """Apply the migrations (one linear history), one migrator at a time."""
    cfg = alembic_config(url)
    with exclusive(url):
        _refuse_unknown(cfg, url)
        _collapse_branches(cfg, url)
        command.upgrade(cfg, revision)


def _refuse_unknown(cfg: Config, url: str) -> None:
    script = ScriptDirectory.from_config(cfg)
    for applied in current(url):
        try:
            script.get_revision(applied)
        except CommandError:
            raise UnknownSchema(
                f"the database is at schema revision {applied}, which this varco does not have "
                "(a newer varco migrated it): run that version, or upgrade this one"
            ) from None


def _collapse_branches(cfg: Config, url: str) -> None:
    """Databases migrated before the history was made linear list one revision per former branch
    (every branch was always applied whole): the newest of them stands for all."""
    applied = current(url)
    if len(applied) > 1:
        command.stamp(cfg, max(applied), purge=True)


def current(url: str) -> tuple[str, ...]:
    from alembic.runtime.migration import MigrationContext

    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return tuple(sorted(MigrationContext.configure(conn).get_current_heads()))
    finally:
        engine.dispose()


def revision(url: str, message: str) -> None:
    """Autogenerate a new migration (developers)."""
    command.revision(alembic_config(url), message=message, autogenerate=True)
