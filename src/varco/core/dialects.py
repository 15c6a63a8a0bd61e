"""What differs between the two databases varco runs on, in one place: SQLite (the embedded
default) and PostgreSQL (production). Code asks `dialect_of(session)` for a capability, never
for a database name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Integer, any_, literal, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

T = TypeVar("T")


@dataclass(frozen=True)
class Dialect:
    name: str
    # INSERT ... ON CONFLICT exists in both databases, with one construct per dialect.
    insert: Callable[..., Any]
    # SQLite admits one writer at a time (every transaction begins with BEGIN IMMEDIATE: our
    # SELECT ... FOR UPDATE); PostgreSQL locks rows, and needs advisory locks where a whole set
    # of rows must not change (the delegation graph, the event feed).
    one_writer: bool
    # Bind a list of ids as one array parameter (`= ANY(:ids)`) instead of one parameter each.
    binds_arrays: bool
    # Plans without statistics (varco never runs ANALYZE on SQLite): an equality on an indexed
    # column can win over a better composite index, so such a filter is sometimes written so that
    # no index serves it (search/repository.py).
    plans_without_statistics: bool

    def unindexed(self, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """`column` as a filter that no index serves (`column + 0`) where the planner has no
        statistics to weigh indexes with; the column itself elsewhere."""
        return column + 0 if self.plans_without_statistics else column

    def advisory_lock(self, session: Session, key: int, *, shared: bool = False) -> None:
        """Hold an advisory lock until the end of the transaction (a no-op with one writer)."""
        if not self.one_writer:
            function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
            session.execute(text(f"SELECT {function}(:key)"), {"key": key})

    def in_ids(self, values: Sequence[int]) -> Callable[[ColumnElement[int]], ColumnElement[bool]]:
        """`column IN (...)`, or `column = ANY(:array)` (one parameter however many ids); one id is
        an equality (the planner then reads an index in its order, without a sort)."""
        if len(values) == 1:
            only = values[0]
            return lambda column: column == only
        if self.binds_arrays:
            array = literal(list(values), ARRAY(Integer))
            return lambda column: column == any_(array)
        return lambda column: column.in_(values)


SQLITE = Dialect("sqlite", sqlite_insert, one_writer=True, binds_arrays=False, plans_without_statistics=True)
POSTGRESQL = Dialect(
    "postgresql", pg_insert, one_writer=False, binds_arrays=True, plans_without_statistics=False
)
_BY_NAME = {d.name: d for d in (SQLITE, POSTGRESQL)}


def dialect_of(session: Session) -> Dialect:
    return _BY_NAME[session.get_bind().dialect.name]


def per_dialect(build: Callable[[Callable[..., Any]], T]) -> Callable[[Session], T]:
    """A statement built once per database: `build(insert)` gets the dialect's `insert` construct;
    the returned function gives the statement for a session's database. For statements that every
    upload or notification runs (building one costs more than running it)."""
    built: dict[str, T] = {}

    def statement(session: Session) -> T:
        dialect = dialect_of(session)
        if dialect.name not in built:
            built[dialect.name] = build(dialect.insert)
        return built[dialect.name]

    return statement
