"""Stored files and the space they use (core/blobs.py)."""

from __future__ import annotations

import threading

import pytest

from tests.factories import make_account
from varco.core import blobs
from varco.core.clock import current_clock
from varco.core.db import Database


def _used(db: Database, account_id: int) -> int:
    with db.unit_of_work() as session:
        return blobs.used_bytes(session, account_id)


def test_two_transactions_storing_for_two_accounts_in_opposite_orders_both_commit(db: Database) -> None:
    # Two SDI deliveries between the same two clients at once: one stores a file for A then B, the
    # other for B then A. Space is counted at commit in account order, so neither waits for a row
    # the other holds (on PostgreSQL this used to end in a deadlock and a rolled-back delivery).
    if db.engine.dialect.name == "sqlite":
        pytest.skip("SQLite runs one writer at a time")
    first, second = make_account(), make_account()
    both_stored_one = threading.Barrier(2, timeout=30)
    failures: list[BaseException] = []

    def deliver(order: tuple[int, int]) -> None:
        try:
            with db.unit_of_work() as session:
                for n, account_id in enumerate(order):
                    blobs.store(session, f"f{n}.xml", b"x" * (100 + n), account_id, current_clock().now())
                    if n == 0:
                        both_stored_one.wait()
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=deliver, args=(o,)) for o in ((first.id, second.id), (second.id, first.id))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert _used(db, first.id) == _used(db, second.id) == 100 + 101


def test_space_stored_in_a_transaction_counts_before_it_commits(db: Database) -> None:
    account = make_account()
    with db.unit_of_work() as session:
        blobs.store(session, "a.xml", b"x" * 300, account.id, current_clock().now())
        assert blobs.used_bytes(session, account.id) == 300
    assert _used(db, account.id) == 300


def test_space_stored_in_a_rolled_back_savepoint_does_not_count(db: Database) -> None:
    account = make_account()
    with db.unit_of_work() as session:
        blobs.store(session, "kept.xml", b"x" * 10, account.id, current_clock().now())
        savepoint = session.begin_nested()
        blobs.store(session, "dropped.xml", b"x" * 1000, account.id, current_clock().now())
        savepoint.rollback()
        with session.begin_nested():
            blobs.store(session, "also-kept.xml", b"x" * 5, account.id, current_clock().now())
    assert _used(db, account.id) == 15


def test_space_of_a_rolled_back_transaction_does_not_count(db: Database) -> None:
    account = make_account()
    session = db.sessions()
    try:
        blobs.store(session, "a.xml", b"x" * 300, account.id, current_clock().now())
        session.rollback()
        blobs.store(session, "b.xml", b"x" * 7, account.id, current_clock().now())
        session.commit()
    finally:
        session.close()
    assert _used(db, account.id) == 7


def test_space_counts_when_the_transaction_commits_with_a_savepoint_still_open(db: Database) -> None:
    account = make_account()
    session = db.sessions()
    try:
        blobs.store(session, "before.xml", b"x" * 1000, account.id, current_clock().now())
        session.begin_nested()  # left open: committed with the transaction
        blobs.store(session, "inside.xml", b"x" * 20, account.id, current_clock().now())
        session.commit()
    finally:
        session.close()
    assert _used(db, account.id) == 1020


def test_space_stored_before_a_savepoint_that_is_released_counts_once(db: Database) -> None:
    account = make_account()
    with db.unit_of_work() as session:
        blobs.store(session, "before.xml", b"x" * 100, account.id, current_clock().now())
        with session.begin_nested():
            blobs.store(session, "inside.xml", b"x" * 3, account.id, current_clock().now())
        blobs.store(session, "after.xml", b"x" * 40, account.id, current_clock().now())
        assert blobs.used_bytes(session, account.id) == 143
    assert _used(db, account.id) == 143
