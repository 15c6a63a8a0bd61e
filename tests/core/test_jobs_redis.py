"""The same job guarantees with RedisHuey (production mode), on the real Redis server."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import redis

from tests.core.test_jobs import CREATE_ACCOUNT, _account_exists, _create_account, _status
from tests.factories import unique_name
from varco import jobs_list
from varco.core.db import unit_of_work
from varco.core.jobs import JobQueue, build_huey, enqueue, reconcile, set_queue
from varco.settings import get_settings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def redis_queue():
    name = f"varco-test-{uuid.uuid4().hex[:8]}"  # own key prefix, dropped after
    queue = JobQueue(build_huey(REDIS_URL, "", name))  # what production builds
    jobs_list.install().add(CREATE_ACCOUNT, _create_account)
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
