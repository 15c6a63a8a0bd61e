"""A list reads its creation window from ix_invoices_search_window, newest first, without a window
function that copies and sorts every file of the window, and its cost does not grow with the
account's history outside the window (issue 27: 100,000 files in one window took 110 ms on SQLite).

SQLite (which varco never ANALYZEs): EXPLAIN QUERY PLAN, and the virtual-machine instructions the
list costs (the sqlite3 progress handler) before and after years of history are added.
PostgreSQL: EXPLAIN (FORMAT JSON) with sequential and bitmap scans off (a test table is tiny): the
index the statement can use and the absence of any sort or window aggregate."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, select

from tests.factories import make_account, make_basic
from varco.accounts.models import Account
from varco.core.blobs import Blob
from varco.core.db import Database
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.search import service
from varco.search.params import Filters

START = datetime(2031, 3, 1, tzinfo=UTC)  # far from other tests' files
END = START + timedelta(days=10, milliseconds=-1)
WINDOW = Filters(created_from=START, created_to=END)
INDEX = "ix_invoices_search_window"


def _fill(
    db: Database,
    account: Account,
    times: list[datetime],
    *,
    direction: str = "out",
    state: int = 7,
    **parties: str,
):
    """Bulk rows (no upload: only the columns a list reads matter here); `parties`: VAT numbers."""
    with db.unit_of_work() as session:
        blob = {"name": "x.xml", "sha256": "0" * 64, "size": 1, "content": b"x", "created_at": START}
        blob_id = session.execute(insert(Blob).values(**blob).returning(Blob.id)).scalar_one()
        rows = [
            {
                "direction": direction,
                "filename": f"IT{uuid.uuid4().hex[:20]}.xml",
                "account_id": account.id,
                "format": "FPR12",
                "state": state,
                "blob_id": blob_id,
                "content_sha256": "0" * 64,
                "is_signed": False,
                "skip_extra_schema": False,
                "sdi_errors": [],
                "pdd_available": False,
                "document_types": "TD01",
                "created_at": at,
                "updated_at": at,
                **parties,
            }
            for at in times
        ]
        session.execute(insert(Invoice), rows)


def _inside(n: int) -> list[datetime]:
    return [START + timedelta(minutes=7 * i) for i in range(n)]


def _history(n: int) -> list[datetime]:
    """Files before and after the window (a year each side)."""
    return [START + timedelta(days=-400 + 800 * i / n) for i in range(n) if not 0 <= -400 + 800 * i / n < 11]


def _search(account: Account, filters: Filters, size: int = 10) -> Callable[[UnitOfWork], Any]:
    def run(session: UnitOfWork) -> Any:
        caller = session.get(Account, account.id)
        return service.search(session, caller, "out", filters, service.Paging(1, size), None)

    return run


@contextmanager
def _statements(db: Database) -> Iterator[list[tuple[str, Any]]]:
    captured: list[tuple[str, Any]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _many) -> None:
        if "FROM invoices" in statement and "count(*)" in statement:
            captured.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", capture)
    try:
        yield captured
    finally:
        event.remove(db.engine, "before_cursor_execute", capture)


def _plan(db: Database, run: Callable[[UnitOfWork], Any]) -> tuple[Any, list[Any]]:
    """The answer, and the plan of the list's statement (ids + total) as the database reports it."""
    with db.unit_of_work() as session, _statements(db) as captured:
        page = run(session)
    assert len(captured) == 1, captured
    sql, parameters = captured[0]
    with db.unit_of_work() as session:
        cursor = session.connection().connection.dbapi_connection.cursor()
        if db.engine.dialect.name == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)
            return page, [row[3] for row in cursor.fetchall()]
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", parameters)
        (found,) = cursor.fetchone()
        return page, list(_nodes((found if isinstance(found, list) else json.loads(found))[0]["Plan"]))


def _nodes(node: dict) -> Iterator[dict]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _steps(db: Database, run: Callable[[UnitOfWork], Any]) -> int:
    """SQLite virtual-machine instructions (in hundreds) that one list costs, its statements all."""
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0

    with db.unit_of_work() as session:
        raw = session.connection().connection.dbapi_connection
        raw.set_progress_handler(tick, 100)
        try:
            run(session)
        finally:
            raw.set_progress_handler(None, 100)
    return ticks[0]


def test_one_taxpayer_reads_its_window_backwards_in_the_index(db, clock):
    account = make_account()
    _fill(db, account, _inside(40))
    _fill(db, account, _history(300))
    page, plan = _plan(db, _search(account, WINDOW))
    assert page.totalElements == 40 and page.totalPages == 4
    with db.unit_of_work() as session:
        newest = session.scalars(
            select(Invoice.id)
            .where(Invoice.account_id == account.id, Invoice.created_at.between(START, END))
            .order_by(Invoice.created_at.desc(), Invoice.id.desc())
            .limit(10)
        )
        assert [int(record.id) for record in page.content] == list(newest)
    if db.engine.dialect.name == "sqlite":
        window = (
            f"USING COVERING INDEX {INDEX} (account_id=? AND direction=? AND created_at>? AND created_at<?)"
        )
        reads = [line for line in plan if "invoices" in line]
        assert len(reads) == 2 and all(window in line for line in reads), plan  # the page and the count
        assert not any("TEMP B-TREE" in line or "CO-ROUTINE" in line for line in plan), plan
    else:
        kinds = {node["Node Type"] for node in plan}
        assert not kinds & {"WindowAgg", "Sort", "Incremental Sort"}, kinds
        scans = [node for node in plan if node.get("Relation Name") == "invoices"]
        assert len(scans) == 2 and {node.get("Index Name") for node in scans} == {INDEX}, scans
        assert any(node["Scan Direction"] == "Backward" for node in scans), scans  # the page: no sort


def test_a_tenant_with_delegators_counts_in_the_index_not_with_a_window_function(db, clock):
    premium = make_account()
    delegator = make_basic(delegate_to=premium)
    _fill(db, premium, _inside(15))
    _fill(db, delegator, _inside(15))
    page, plan = _plan(db, _search(premium, WINDOW))
    assert page.totalElements == 30
    if db.engine.dialect.name == "sqlite":
        reads = [line for line in plan if "invoices" in line]
        assert len(reads) == 2 and all(f"INDEX {INDEX} (account_id=?" in line for line in reads), plan
        assert not any("CO-ROUTINE" in line for line in plan), plan
    else:
        kinds = {node["Node Type"] for node in plan}
        assert "WindowAgg" not in kinds, kinds
        scans = [node for node in plan if node.get("Relation Name") == "invoices"]
        assert {node.get("Index Name") for node in scans} == {INDEX}, scans


@pytest.mark.parametrize("column", ["receiver_vat", "sender_vat"])
def test_a_counterparty_filter_reads_that_counterpartys_files_only(db, clock, column):
    """receiverVatcode/senderVatcode: their own index, VAT number first (issue 27: a list filtered
    by a customer among 100,000 files of the window read each of them from the table)."""
    account = make_account()
    _fill(db, account, _inside(30), **{column: "01114601006"})
    _fill(db, account, _inside(50), **{column: "09876543210"})
    _fill(db, account, _history(200), **{column: "01114601006"})
    filters = Filters(created_from=START, created_to=END, **{column: "01114601006"})
    page, plan = _plan(db, _search(account, filters))
    assert page.totalElements == 30
    index = f"ix_invoices_{column.split('_')[0]}_window"
    if db.engine.dialect.name == "sqlite":
        reads = [line for line in plan if "invoices" in line]
        window = f"USING COVERING INDEX {index} ({column}=? AND account_id=? AND direction=? AND created_at>?"
        assert len(reads) == 2 and all(window in line for line in reads), plan
        assert not any("TEMP B-TREE" in line for line in plan), plan
    else:
        scans = [node for node in plan if node.get("Relation Name") == "invoices"]
        assert {node.get("Index Name") for node in scans} == {index}, scans
        assert not {node["Node Type"] for node in plan} & {"Sort", "WindowAgg"}, plan


@pytest.mark.parametrize(
    "filters",
    [WINDOW, Filters(created_from=WINDOW.created_from, created_to=WINDOW.created_to, state=7)],
    ids=["window", "window+status"],
)
def test_history_outside_the_window_costs_nothing(db, clock, filters):
    """Years of files outside the window (same taxpayer, same state, both directions) leave the
    list's work unchanged: the plan never reads the tenant's history, nor every file of a state."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("instruction counts are SQLite's (PostgreSQL: the plans above)")
    premium = make_account()
    # three taxpayers: from three on, an IN list made SQLite prefer `state = ?` on ix_invoices_state_updated
    tenancy = [premium, make_basic(delegate_to=premium), make_basic(delegate_to=premium)]
    for owner in tenancy:
        _fill(db, owner, _inside(20))
        _fill(db, owner, _inside(5), state=3)  # in the window, of another state: the status filter drops them
    run = _search(premium, filters)
    before = min(_steps(db, run) for _ in range(3))
    for owner in tenancy:
        _fill(db, owner, _history(1000))
        _fill(db, owner, _history(300), direction="in", state=11)
    after = min(_steps(db, run) for _ in range(3))
    with db.unit_of_work() as session:
        assert _search(premium, filters)(session).totalElements == (60 if filters.state else 75)
    # 3,000 more files of that state: reading them costs several times the list itself
    assert after <= before * 1.2 + 5, (before, after)
