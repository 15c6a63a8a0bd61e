"""Database engine, sessions and the unit of work (one commit per request or job)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import DateTime, Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from varco.core.clock import as_utc

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both SQLite (which drops the zone) and PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        return as_utc(value) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        return as_utc(value) if value is not None else None


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin_immediate(conn: object) -> None:
    # Writers serialise at BEGIN instead of failing later on lock upgrade: SQLite's
    # equivalent of SELECT ... FOR UPDATE for our short transactions.
    conn.exec_driver_sql("BEGIN IMMEDIATE")  # type: ignore[attr-defined]


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "isolation_level": None})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin_immediate)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


class Database:
    """Engine + session factory for one database URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def unit_of_work(self) -> Iterator[Session]:
        """A session that commits once at the end, or rolls back on any error."""
        session = self.sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()


_db: Database | None = None
_db_lock = threading.Lock()


def get_database() -> Database:
    """The process-wide database, built from settings on first use."""
    global _db
    with _db_lock:
        if _db is None:
            from varco.settings import get_settings

            settings = get_settings()
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            _db = Database(settings.resolved_database_url)
        return _db


def set_database(db: Database | None) -> None:
    global _db
    with _db_lock:
        _db = db


@contextmanager
def unit_of_work() -> Iterator[Session]:
    with get_database().unit_of_work() as session:
        yield session
