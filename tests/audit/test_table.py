"""The table itself: an event is stored if and only if its change commits; it is never updated or
deleted (triggers on both databases); details never carry a secret-named field."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.audit.support import events_of
from tests.factories import unique_name
from varco.audit import service as audit
from varco.core.db import unit_of_work


def test_an_event_is_stored_only_when_its_transaction_commits(db, clock):
    kept, dropped = unique_name(), unique_name()
    with unit_of_work() as session:
        audit.record(session, audit.Kind.ACCOUNT_DISABLED, audit.CLI, clock, subject_username=kept)
    with pytest.raises(RuntimeError), unit_of_work() as session:
        audit.record(session, audit.Kind.ACCOUNT_DISABLED, audit.CLI, clock, subject_username=dropped)
        raise RuntimeError("the change fails")
    assert [e.kind for e in events_of(kept)] == ["account.disabled"]
    assert events_of(dropped) == []


@pytest.mark.parametrize(
    "statement",
    ["UPDATE audit_events SET kind = 'x' WHERE id = :id", "DELETE FROM audit_events WHERE id = :id"],
)
def test_rows_are_never_updated_or_deleted(db, clock, statement):
    name = unique_name()
    with unit_of_work() as session:
        audit.record(session, audit.Kind.ACCOUNT_DISABLED, audit.CLI, clock, subject_username=name)
    [event] = events_of(name)
    with pytest.raises(DBAPIError, match="append-only"), db.engine.begin() as conn:
        conn.execute(text(statement), {"id": event.id})
    assert [(e.id, e.kind) for e in events_of(name)] == [(event.id, "account.disabled")]


def test_postgresql_refuses_truncate_too(db):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no TRUNCATE (DELETE without WHERE is refused by the trigger)")
    with pytest.raises(DBAPIError, match="append-only"), db.engine.begin() as conn:
        conn.execute(text("TRUNCATE audit_events"))


@pytest.mark.parametrize(
    "name", ["password", "newPassword", "accessToken", "callbackSecret", "credential", "note"]
)
def test_details_are_whitelisted_and_never_named_like_a_secret(db, clock, name):
    with pytest.raises(ValueError, match="may not be named"), unit_of_work() as session:
        audit.record(session, audit.Kind.PASSWORD_CHANGED, audit.CLI, clock, details={name: "x"})


def test_the_denylist_holds_even_for_a_listed_name(db, clock, monkeypatch):
    monkeypatch.setattr(audit, "DETAIL_KEYS", audit.DETAIL_KEYS | {"secretHint"})
    hint = {"secretHint": "abcd"}
    with pytest.raises(ValueError, match="secretHint"), unit_of_work() as session:
        audit.record(session, audit.Kind.CALLBACK_SECRET_ROTATED, audit.CLI, clock, details=hint)
