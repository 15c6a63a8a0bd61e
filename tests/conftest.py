"""Shared fixtures: every database test runs on SQLite and on the real PostgreSQL server."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from huey import SqliteHuey
from sqlalchemy import create_engine, text

from varco import jobs_list
from varco.core import migrate
from varco.core.clock import ManualClock, SystemClock, use_clock
from varco.core.db import Database, set_database
from varco.core.jobs import JobQueue, set_queue, wait_for_wake_ups
from varco.settings import get_settings

POSTGRES_ADMIN_URL = os.environ.get(
    "VARCO_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
BACKENDS = os.environ.get("VARCO_TEST_BACKENDS", "sqlite,postgres").split(",")


@pytest.fixture(scope="session", autouse=True)
def _test_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    data_dir = tmp_path_factory.mktemp("varco-data")
    os.environ["VARCO_DATA_DIR"] = str(data_dir)
    os.environ.pop("VARCO_REDIS_URL", None)
    os.environ.pop("VARCO_DATABASE_URL", None)
    os.environ.update(VARCO_IP_LIMITS_ENABLED="false", VARCO_DEFAULT_TIER="6")  # tests/limits enable them
    # A test drains its own few jobs in one thread: on PostgreSQL a partial batch would only wait out
    # the gathering time, which tests/core/test_jobs.py sets where it is the subject.
    os.environ["VARCO_JOB_BATCH_WAIT"] = "0"
    get_settings.cache_clear()
    yield data_dir
    get_settings.cache_clear()


def _postgres_database(name: str) -> Iterator[str]:
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    """A migrated database per backend for the whole session (tests use unique names, no cleanup)."""
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp_path_factory.mktemp('db') / 'varco.sqlite3'}"])
    else:
        urls = _postgres_database(f"varco_test_{uuid.uuid4().hex[:12]}")
    url = next(urls)
    migrate.upgrade(url)
    db = Database(url)
    yield db
    db.dispose()
    next(urls, None)  # drops the PostgreSQL database


@pytest.fixture
def db(database: Database) -> Iterator[Database]:
    set_database(database)
    yield database
    set_database(None)


@pytest.fixture
def clock() -> Iterator[ManualClock]:
    manual = ManualClock(datetime(2026, 11, 23, 8, 0, tzinfo=UTC))
    use_clock(manual)
    yield manual
    use_clock(SystemClock())


@pytest.fixture(scope="session")
def _queue(tmp_path_factory: pytest.TempPathFactory) -> JobQueue:
    return JobQueue(SqliteHuey("varco-tests", filename=str(tmp_path_factory.mktemp("huey") / "huey.sqlite3")))


@pytest.fixture
def queue(_queue: JobQueue) -> Iterator[JobQueue]:
    """The real huey queue (SQLite storage); `queue.drain()` runs what is queued in this thread."""
    q = _queue
    # A wake-up an earlier test handed to the sender thread must not land in this test's queue.
    wait_for_wake_ups()
    q.flush()
    jobs_list.install()  # what the app's worker runs (tests add their own tasks to it)
    set_queue(q)
    yield q
    wait_for_wake_ups()
    q.flush()
    set_queue(None)


@pytest.fixture
def app(db: Database, clock: ManualClock, queue: JobQueue):
    from varco.app import create_app

    return create_app()


@pytest.fixture
def client(app) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def configure() -> Iterator[Callable[..., None]]:
    """Set VARCO_* variables for this test (settings re-read); restored afterwards."""
    saved: dict[str, str | None] = {}

    def set_env(**values: object) -> None:
        for name, value in values.items():
            key = f"VARCO_{name.upper()}"
            saved.setdefault(key, os.environ.get(key))
            os.environ[key] = str(value)
        get_settings.cache_clear()

    yield set_env
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def playwright_session():
    """One Playwright per test process, shared by every browser test (the panel's, /docs'): its sync
    API runs an event loop of its own, and a second one in the same process refuses to start."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright
