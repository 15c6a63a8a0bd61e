"""The unit of work's read-only blocks: on SQLite they leave the write lock free."""

from __future__ import annotations

import sqlite3

import pytest

from tests.factories import unique_name
from varco.accounts import service
from varco.core.clock import current_clock
from varco.core.db import (
    BEGUN,
    HELD_ELSEWHERE,
    HELD_HERE,
    Database,
    begin_writing,
    begin_writing_now,
    reading,
)
from varco.settings import get_settings


def _create(db: Database, username: str) -> None:
    with db.unit_of_work() as session:
        service.create_account(session, service.NewAccount(username, "pw"), get_settings(), current_clock())


def test_objects_read_in_a_reading_block_stay_usable_for_the_writes_after_it(db: Database) -> None:
    name = unique_name("reader")
    _create(db, name)
    with db.unit_of_work() as session:
        with reading(session):
            account = service.find(session, name)
        assert account is not None
        account.description = "changed after the read"
    with db.unit_of_work() as session:
        assert service.find(session, name).description == "changed after the read"


def test_a_reading_block_does_not_hold_the_sqlite_write_lock(db: Database) -> None:
    if db.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no database-wide write lock; reading() does nothing there")
    name = unique_name("reader")
    _create(db, name)
    other = sqlite3.connect(db.engine.url.database, timeout=0.5, isolation_level=None)
    try:
        with db.unit_of_work() as session:
            with reading(session):
                assert service.find(session, name) is not None
                other.execute("BEGIN IMMEDIATE")  # another writer gets the lock at once
                other.execute("ROLLBACK")
            service.find(session, name).description = "written"  # a write transaction of its own
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                session.flush()
                other.execute("BEGIN IMMEDIATE")
    finally:
        other.close()


def test_begin_writing_now_never_waits_for_the_sqlite_write_lock(db: Database) -> None:
    if db.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no database-wide write lock")
    other = sqlite3.connect(db.engine.url.database, timeout=0.2, isolation_level=None)
    session = db.sessions()
    try:
        other.execute("BEGIN IMMEDIATE")  # another process writes
        assert begin_writing_now(session) == HELD_ELSEWHERE and not session.in_transaction()
        other.execute("COMMIT")
        with db.unit_of_work() as holder:  # a thread of this process writes
            holder.connection()
            assert begin_writing_now(session) == HELD_HERE and not session.in_transaction()
        assert begin_writing_now(session) == BEGUN
        # It holds the lock now, and its connection waits for other processes again as configured.
        assert session.connection().exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    finally:
        session.close()
        other.close()


def test_reads_taken_without_the_lock_are_kept_until_the_lock_is_free_then_written_after(
    db: Database,
) -> None:
    # The upload on the event loop (core/turns.py): its reads and checks first, without the lock;
    # when another process holds the lock, it asks again later, its reads still loaded, and its
    # writes then commit in one transaction with them.
    if db.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no database-wide write lock")
    name = unique_name("reader")
    _create(db, name)
    other = sqlite3.connect(db.engine.url.database, timeout=0.2, isolation_level=None)
    session = db.sessions()
    try:
        with reading(session, then_write=True, begin=False):
            account = service.find(session, name)
        other.execute("BEGIN IMMEDIATE")  # the reads took no lock: another process gets it at once
        assert begin_writing_now(session) == HELD_ELSEWHERE
        other.execute("COMMIT")
        assert begin_writing_now(session) == BEGUN
        account.description = "written after the reads"  # still loaded: nothing was rolled back
        session.commit()
    finally:
        session.close()
        other.close()
    with db.unit_of_work() as check:
        assert service.find(check, name).description == "written after the reads"


def test_begin_writing_after_reads_waits_for_the_lock_and_is_a_no_op_once_begun(db: Database) -> None:
    name = unique_name("reader")
    _create(db, name)
    with db.unit_of_work() as session:
        with reading(session, then_write=True, begin=False):
            account = service.find(session, name)
        begin_writing(session)
        begin_writing(session)  # begun already (or PostgreSQL): nothing more
        account.description = "written"
    with db.unit_of_work() as check:
        assert service.find(check, name).description == "written"
