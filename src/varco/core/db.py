"""Database engine, sessions and the unit of work (one commit per request or job)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    DateTime,
    Engine,
    Insert,
    MetaData,
    Table,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from varco.core.clock import as_utc
from varco.core.dialects import dialect_of
from varco.core.errors import BadRequest
from varco.core.uow import Fact, UnitOfWork

T = TypeVar("T")

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


_BUSY_TIMEOUT = "PRAGMA busy_timeout=30000"  # ms: how long a writer waits for another process


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(_BUSY_TIMEOUT)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


_WAITING = threading.Lock()  # guards the waiting counts


class _QueuedWriters(sqlite3.Connection):
    """Transactions of one process wait for each other on a Python lock, handed over at COMMIT or
    ROLLBACK, instead of polling in SQLite's busy handler, whose growing sleeps (up to 100 ms)
    leave the database idle between concurrent requests. Other processes still meet busy_timeout."""

    writer_lock: threading.Lock  # one per engine (see make_engine)
    waiting: list[int]  # one per engine: threads waiting for writer_lock (a list: shared, mutable)
    _holds = False

    def acquire_writer(self, wait: bool = True) -> bool:
        """The writer lock; waiting at most as long as busy_timeout (then SQLite decides).
        Without `wait`, only if it is free and no thread waits for it (none is passed over)."""
        if not wait:
            self._holds = not self.waiting[0] and self.writer_lock.acquire(False)
            return self._holds
        self._holds = self.writer_lock.acquire(False)
        if not self._holds:
            with _WAITING:
                self.waiting[0] += 1
            try:
                self._holds = self.writer_lock.acquire(timeout=30)
            finally:
                with _WAITING:
                    self.waiting[0] -= 1
        return self._holds

    def release_writer(self) -> None:
        if self._holds:
            self._holds = False
            self.writer_lock.release()

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.release_writer()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.release_writer()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.release_writer()


_LOCKED: dict[type, Fact[dict[int, Any]]] = {}


def locked_rows(uow: UnitOfWork, model: type[T]) -> dict[int, T]:
    """Rows of `model` that this transaction locked (read FOR UPDATE, or inserted) and that are
    current in the session, by id: read again, they need no query. Held by the unit of work, so
    the session's weak identity map keeps them until the end of the transaction or savepoint."""
    if model not in _LOCKED:
        _LOCKED[model] = Fact(f"locked {model.__name__}", dict)
    return uow.fact(_LOCKED[model])


def get_for_update(uow: UnitOfWork, model: type[T], row_id: int, *options: Any) -> T | None:
    """The row locked for this transaction (FOR UPDATE on PostgreSQL; on SQLite the transaction
    holds the write lock), read once: locked or inserted before in it, no query."""
    locked = locked_rows(uow, model)
    if row_id in locked:
        return locked[row_id]
    uow.flush()  # the reload below must not drop unflushed changes (no_autoflush blocks)
    row = uow.get(model, row_id, with_for_update=True, populate_existing=True, options=list(options) or None)
    if row is not None:
        locked[row_id] = row
    return row


def lock_many(uow: UnitOfWork, model: type[T], row_ids: list[int], *options: Any) -> None:
    """Lock several rows in one statement (in id order, as every locker takes them), as
    `get_for_update` reads each: its later calls for these ids need no query."""
    locked = locked_rows(uow, model)
    wanted = sorted(set(row_ids) - locked.keys())
    if not wanted:
        return
    uow.flush()  # as get_for_update: the reload must not drop unflushed changes
    pk = model.__table__.c.id  # type: ignore[attr-defined]
    query = select(model).where(pk.in_(wanted)).order_by(pk).options(*options).with_for_update()
    for row in uow.scalars(query.execution_options(populate_existing=True)):
        locked[row.id] = row  # type: ignore[attr-defined]


_APPEND: dict[Table, Insert] = {}


def append_row(session: Session, model: type[T], values: dict[str, Any]) -> T:
    """Insert a row that a hot path only appends (events, files, job rows...) with a Core `INSERT …
    RETURNING id`, built once per table: no ORM flush (a fraction of its cost). The object
    returned is built from `values` and is NOT in the session: read it, never add or change it."""
    table = model.__table__  # type: ignore[attr-defined]
    if table not in _APPEND:
        _APPEND[table] = insert(table).returning(table.c.id)
    row_id = session.connection().execute(_APPEND[table], values).scalar_one()
    return detached_row(model, values, row_id)


def detached_row(model: type[T], values: dict[str, Any], row_id: int | None) -> T:
    """The object of a row inserted with a Core statement, outside any session (see `append_row`).
    Built as the ORM builds a loaded object: no constructor, no attribute events (a fifth of the cost)."""
    row: T = model.__mapper__.class_manager.new_instance()  # type: ignore[attr-defined]
    row.__dict__.update(values, id=row_id)
    return row


_DEFERRED = "varco_sqlite_deferred"  # execution option: a read-only transaction (see reading())
_AUTOCOMMIT_READS = "varco_sqlite_autocommit_reads"  # execution option: see reading(then_write=True)
_NO_BEGIN = {_AUTOCOMMIT_READS: True}  # a connection that begins nothing on its own


def _sqlite_begin_immediate(conn: object) -> None:
    # Writers serialise at BEGIN instead of failing later on lock upgrade: SQLite's
    # equivalent of SELECT ... FOR UPDATE for our short transactions.
    options = conn.get_execution_options()  # type: ignore[attr-defined]
    if options.get(_DEFERRED):
        conn.exec_driver_sql("BEGIN")  # type: ignore[attr-defined]
        return
    if options.get(_AUTOCOMMIT_READS):
        return  # no BEGIN yet: reading() emits it when its reads are done
    _begin_immediate(conn)  # type: ignore[arg-type]


def _begin_immediate(conn: Connection) -> None:
    dbapi = conn.connection.dbapi_connection
    queued = isinstance(dbapi, _QueuedWriters)
    if queued:
        dbapi.acquire_writer()
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    except BaseException:
        if queued:
            dbapi.release_writer()
        raise


BEGUN, HELD_HERE, HELD_ELSEWHERE = "begun", "held here", "held elsewhere"  # begin_writing_now


def begin_writing_now(session: Session) -> str:
    """SQLite: begin the session's write transaction (BEGIN IMMEDIATE) only if nobody holds the
    write lock, in this process or another, and no thread of this process waits for it: never
    waits. For work run on the event loop, which must not wait for a lock that a thread could hold
    until the loop schedules its commit (core/turns.py).

    The session has no transaction yet, or only the reads of `reading(then_write=True,
    begin=False)`. Returns BEGUN, or who holds the lock: HELD_HERE (a thread of this process has
    it or waits for it) or HELD_ELSEWHERE (another process: waiting for it cannot block on this
    process's threads). When not begun, a session without a transaction is left without one, and
    reads done before stay loaded (no rollback)."""
    reads_before = session.in_transaction()
    if reads_before and not session.connection().get_execution_options().get(_AUTOCOMMIT_READS):
        raise RuntimeError("begin_writing_now: the session has begun its transaction already")
    # No BEGIN yet: the reads' connection, or a new one that begins nothing on its own.
    connection = session.connection() if reads_before else session.connection(execution_options=_NO_BEGIN)
    dbapi = connection.connection.dbapi_connection
    queued = isinstance(dbapi, _QueuedWriters)
    if queued and not dbapi.acquire_writer(wait=False):
        if not reads_before:
            session.rollback()
        return HELD_HERE
    try:
        dbapi.execute("PRAGMA busy_timeout=0")  # another process writing: SQLITE_BUSY at once
        # On the driver's connection: a refusal, asked again every half millisecond while another
        # process writes, costs no SQLAlchemy exception handling.
        dbapi.execute("BEGIN IMMEDIATE")
    except BaseException as exc:
        dbapi.execute(_BUSY_TIMEOUT)  # before the connection goes back to the pool
        if queued:
            dbapi.release_writer()
        if not reads_before:
            session.rollback()
        if isinstance(exc, sqlite3.OperationalError):  # database is locked
            return HELD_ELSEWHERE
        raise
    dbapi.execute(_BUSY_TIMEOUT)
    return BEGUN


def begin_writing(session: Session) -> None:
    """Begin the write transaction after `reading(then_write=True, begin=False)`, waiting for the
    lock as every writer does; nothing to do elsewhere (PostgreSQL, or begun already)."""
    connection = session.connection()
    if connection.get_execution_options().get(_AUTOCOMMIT_READS):
        if not connection.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
            _begin_immediate(connection)


class NulInText(BadRequest):
    """A text value holds the NUL character, which no field of the contract may hold."""


_NUL_REFUSED = "Text values cannot contain the NUL character (U+0000)"


def _refuse_nul(_conn: object, _cursor: object, _statement: str, parameters: Any, *_args: object) -> None:
    # SQLite stores NUL in text; PostgreSQL cannot. Refused here for every SQLite statement, so that
    # both databases answer the same 400 wherever the value came from.
    rows = parameters if isinstance(parameters, list) else [parameters]
    for row in rows:
        values = row.values() if isinstance(row, dict) else row if isinstance(row, tuple | list) else ()
        for value in values:
            if isinstance(value, str) and "\x00" in value:
                raise NulInText(_NUL_REFUSED)


def _nul_refused_by_driver(context: ExceptionContext) -> None:
    # psycopg refuses a NUL in a text parameter itself, before sending the statement (the
    # connection stays usable): the same 400 as on SQLite, without a listener on every statement.
    if "cannot contain NUL" in str(context.original_exception):
        raise NulInText(_NUL_REFUSED) from None


def make_engine(url: str) -> Engine:
    engine = _make_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "before_cursor_execute", _refuse_nul)
    else:
        event.listen(engine, "handle_error", _nul_refused_by_driver)
    return engine


def _make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        factory = type("QueuedWriters", (_QueuedWriters,), {"writer_lock": threading.Lock(), "waiting": [0]})
        connect_args = {"check_same_thread": False, "isolation_level": None, "factory": factory}
        # No limit on connections: a checkout never waits, so work on the event loop
        # (begin_writing_now) cannot wait for a connection that only the loop would give back.
        engine = create_engine(url, connect_args=connect_args, max_overflow=-1)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin_immediate)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


class Database:
    """Engine + session factory for one database URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, class_=UnitOfWork, expire_on_commit=False)

    @contextmanager
    def unit_of_work(self) -> Iterator[UnitOfWork]:
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


@contextmanager
def reading(session: Session, *, then_write: bool = False, begin: bool = True) -> Iterator[Session]:
    """Reads that take no write lock. On SQLite, when the session has no transaction open yet, they
    run in a deferred transaction of their own, ended on leaving the block (loaded objects stay
    usable), so the write lock is held only by the work after it; otherwise this does nothing.
    Nothing may be written inside the block.

    `then_write`: the block is followed by writes in the same unit of work (the upload). On SQLite
    its reads then run without a transaction (each statement is atomic on its own; none needs
    another's snapshot) and leaving the block begins the write transaction, BEGIN IMMEDIATE, in
    the same session transaction: one begin and one commit per request instead of two. With
    `begin=False` the caller begins it (`begin_writing`, or `begin_writing_now` on the event loop)."""
    if session.in_transaction() or not dialect_of(session).one_writer:
        yield session
        return
    if not then_write:
        session.connection(execution_options={_DEFERRED: True})
        yield session
        session.commit()
        return
    connection = session.connection(execution_options=_NO_BEGIN)
    yield session
    if begin:
        _begin_immediate(connection)


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
def unit_of_work() -> Iterator[UnitOfWork]:
    with get_database().unit_of_work() as session:
        yield session
