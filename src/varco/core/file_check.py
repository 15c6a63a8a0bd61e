"""The check of stored files, `varco backup --verify` (docs/operations.md, Backup and restore): on
either database, every stored file matches the size and SHA-256 recorded with it, and every row
naming a stored file names one that exists."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, bindparam, column, create_engine, exists, func, inspect, select, table
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from varco.core.blobs import Blob

_CONTENTS_PER_QUERY = 32 * 1024 * 1024  # stored bytes read at once (memory)


@dataclass
class Check:
    """What `verify_stored_files` found: files and bytes checked, and the problems (the first
    `shown` of them kept, all counted)."""

    files: int = 0
    bytes: int = 0
    problems: list[str] = field(default_factory=list)
    count: int = 0
    shown: int = 20

    def problem(self, text: str) -> None:
        self.count += 1
        if len(self.problems) < self.shown:
            self.problems.append(text)


_BLOBS = Blob.__table__
_PAGE = (
    select(_BLOBS.c.id, _BLOBS.c.name, _BLOBS.c.sha256, _BLOBS.c.size)
    .where(_BLOBS.c.id > bindparam("after"))
    .order_by(_BLOBS.c.id)
    .limit(1000)
)
_CONTENTS = select(_BLOBS.c.id, _BLOBS.c.content)


def verify_stored_files(url: str) -> Check:
    """Every stored file (a `blobs` row) has the size and SHA-256 recorded with it, and every row
    naming a stored file names one that exists: `varco backup --verify`, on either database, in
    one read-only snapshot beside the running processes."""
    check = Check()
    with _snapshot(url) as conn:
        _check_contents(conn, check)
        _check_references(conn, check)
    return check


@contextmanager
def _snapshot(url: str) -> Iterator[Connection]:
    # Its own engine: not core.db's, whose SQLite transactions take the write lock (BEGIN IMMEDIATE).
    sqlite = make_url(url).get_backend_name() == "sqlite"
    engine = create_engine(url, poolclass=NullPool, connect_args={"isolation_level": None} if sqlite else {})
    try:
        with engine.connect() as conn:
            if sqlite:
                conn.exec_driver_sql("BEGIN")  # deferred: a read snapshot (WAL), never the write lock
                yield conn
            else:
                yield conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            conn.rollback()
    finally:
        engine.dispose()


def _check_contents(conn: Connection, check: Check) -> None:
    after = 0
    while page := conn.execute(_PAGE, {"after": after}).all():
        after = page[-1].id
        for group in _by_size(page):
            contents = dict(conn.execute(_CONTENTS.where(_BLOBS.c.id.in_([row.id for row in group]))).all())
            for row in group:
                _check_one(row, contents.get(row.id), check)


def _by_size(rows: list[Any]) -> Iterator[list[Any]]:
    """The rows in groups of at most _CONTENTS_PER_QUERY recorded bytes (one row at least)."""
    group: list[Any] = []
    size = 0
    for row in rows:
        if group and size + row.size > _CONTENTS_PER_QUERY:
            yield group
            group, size = [], 0
        group.append(row)
        size += row.size
    if group:
        yield group


def _check_one(row: Any, content: bytes | None, check: Check) -> None:
    label = f"stored file {row.id} ({row.name})"
    if content is None:
        check.problem(f"{label}: no content")
        return
    check.files += 1
    check.bytes += len(content)
    sha256 = hashlib.sha256(content).hexdigest()
    if len(content) != row.size:
        check.problem(f"{label}: {len(content)} bytes where the database records {row.size}")
    elif sha256 != row.sha256:
        check.problem(f"{label}: SHA-256 {sha256} where the database records {row.sha256}")


def _check_references(conn: Connection, check: Check) -> None:
    """Every column with a foreign key to blobs.id, found by reflection (core knows no domain)."""
    inspector = inspect(conn)
    for name in sorted(inspector.get_table_names()):
        for key in inspector.get_foreign_keys(name):
            if key["referred_table"] != _BLOBS.name:
                continue
            for column_name in key["constrained_columns"]:
                owner = table(name, column(column_name))
                named = owner.c[column_name]
                missing = conn.execute(
                    select(func.count())
                    .select_from(owner)
                    .where(named.is_not(None), ~exists().where(_BLOBS.c.id == named))
                ).scalar_one()
                if missing:
                    check.problem(f"{name}.{column_name}: {missing} rows name a missing stored file")
