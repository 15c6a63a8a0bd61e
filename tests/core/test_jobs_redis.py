"""The same job guarantees with RedisHuey (production mode), on the real Redis server."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import redis

from tests.core.test_jobs import (
    BATCHED,
    CREATE_ACCOUNT,
    _account_exists,
    _create_account,
    _create_or_fail,
    _status,
)
from tests.factories import unique_name
from varco import jobs_list
from varco.core.db import unit_of_work
from varco.core.jobs import JobQueue, build_huey, enqueue, reconcile, run_job, set_queue
from varco.settings import get_settings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def redis_queue():
    name = f"varco-test-{uuid.uuid4().hex[:8]}"  # own key prefix, dropped after
    queue = JobQueue(build_huey(REDIS_URL, "", name))  # what production builds
    registry = jobs_list.install()
    registry.add(CREATE_ACCOUNT, _create_account)
    registry.add(BATCHED, _create_or_fail)
    set_queue(queue)
    yield queue
    set_queue(None)
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"huey.*{queue.huey.storage.name}*"):  # huey's cleaned-up name
        client.delete(key)


def test_lost_job_is_recovered_with_redis(db, clock, redis_queue):
    name = unique_name()
    with unit_of_work() as session:
        row = enqueue(session, CREATE_ACCOUNT, username=name)
    assert redis_queue.huey.pending_count() == 1
    redis_queue.flush()
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    assert row.id in reconcile()
    redis_queue.drain()
    assert _status(row.id) == "done"
    assert _account_exists(name)


def test_redis_keeps_no_key_per_job_after_a_drain(db, clock, redis_queue):
    """Nothing reads a job's result: none is stored (they grew without limit before)."""
    names = [unique_name() for _ in range(20)]
    with unit_of_work() as session:
        for name in names:
            enqueue(session, CREATE_ACCOUNT, username=name)
    assert redis_queue.drain() == 20
    client = redis.Redis.from_url(REDIS_URL)
    keys = {key.decode() for key in client.scan_iter(f"huey.*{redis_queue.huey.storage.name}*")}
    assert not any("result" in key for key in keys), keys
    assert client.llen(f"huey.redis.{redis_queue.huey.storage.name}") == 0


def test_a_batch_takes_the_wake_ups_of_the_jobs_it_claimed_out_of_the_queue(db, clock, redis_queue):
    """Another worker process would otherwise take each of them, only to find its job held or done."""
    names = [unique_name() for _ in range(3)]
    with unit_of_work() as session:
        rows = [enqueue(session, BATCHED, username=name) for name in names]
    assert redis_queue.queued_job_ids() == {row.id for row in rows}
    assert run_job(rows[0].id) == "done"  # as a worker runs the first wake-up it takes
    assert [_status(row.id) for row in rows] == ["done"] * 3 and all(map(_account_exists, names))
    assert redis_queue.queued_job_ids() == {rows[0].id}  # the one this test did not take
    assert redis_queue.drain() == 1


def test_a_failed_batch_sends_the_wake_ups_it_took_out_again(db, clock, redis_queue):
    ok_before, failing, ok_after = unique_name(), f"fail-{unique_name()}", unique_name()
    with unit_of_work() as session:
        rows = [enqueue(session, BATCHED, username=name) for name in (ok_before, failing, ok_after)]
    assert run_job(rows[0].id) == "pending"  # rolled back with the failing one
    # The others are woken again; the failed one is charged and left to the reconciler's retry.
    assert redis_queue.queued_job_ids() == {rows[0].id, rows[2].id}
    redis_queue.drain()
    assert [_status(row.id) for row in rows] == ["done", "pending", "done"]
    assert _account_exists(ok_before) and _account_exists(ok_after)
    clock.advance(get_settings().stale_job_after + timedelta(seconds=1))
    assert rows[1].id in reconcile()
