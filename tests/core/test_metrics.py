"""GET /metrics after real traffic, read with prometheus_client's own parser: the counts the
traffic caused, in one process and with the processes of production (two `varco worker` on
PostgreSQL + Redis, their counts added up in a shared directory)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path

import httpx
import pytest
import redis
from fastapi.testclient import TestClient
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families
from starlette.requests import Request

from tests.conftest import _postgres_database
from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from tests.live_server import free_port
from tests.sdi.factories import invoice_file
from varco.core import jobs, metrics
from varco.core.db import unit_of_work
from varco.core.errors import Forbidden, Unauthorized
from varco.metrics_endpoints import _check_reader
from varco.sdi import transmissions
from varco.settings import Settings

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
EXPLODE = jobs.Task("tests.metrics_explode")


def parse(text: str) -> Samples:
    """Every sample, by name and labels, as Prometheus would read them."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(client: TestClient | httpx.Client) -> Samples:
    answer = client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(answer.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def grew(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_the_counts_of_real_traffic(client, queue, configure):
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    before = scrape(client)

    accepted = client.post(
        "/services/invoice/upload", json={"dataFile": b64(invoice_xml())}, headers=bearer(token)
    )
    assert accepted.json()["errorCode"] == "0000", accepted.text
    refused = client.post("/services/invoice/upload", json={"dataFile": b64(b"<a/>")}, headers=bearer(token))
    refused_code = refused.json()["errorCode"]
    assert refused.status_code == 200 and refused_code != "0000"
    queue.drain()  # the asynchronous stage, the simulated SDI's RC, the callbacks: none registered
    configure(ip_limits_enabled="true", auth_requests_per_minute="1")
    form = {"grant_type": "password", "username": "nobody", "password": "wrong"}
    assert client.post("/auth/signin", data=form).status_code == 400
    assert client.post("/auth/signin", data=form).status_code == 429
    after = scrape(client)

    upload = {"route": "/services/invoice/upload", "method": "POST", "status": "200"}
    assert grew(before, after, "varco_http_requests_total", **upload) == 2
    assert grew(before, after, "varco_http_request_duration_seconds_count", **upload) == 2
    assert grew(before, after, "varco_http_request_duration_seconds_bucket", le="+Inf", **upload) == 2
    signin = {"route": "/auth/signin", "method": "POST"}
    assert grew(before, after, "varco_http_requests_total", status="429", **signin) == 1
    assert grew(before, after, "varco_uploads_total", code="0000") == 1
    assert grew(before, after, "varco_uploads_total", code=refused_code) == 1
    assert grew(before, after, "varco_rate_limit_refusals_total", limit="ip:auth") == 1
    process = {"kind": "invoices.process"}
    for event in ("enqueued", "started", "succeeded"):
        assert grew(before, after, "varco_jobs_total", event=event, **process) == 1, event
    assert grew(before, after, "varco_jobs_total", event="retried", **process) == 0
    assert grew(before, after, "varco_job_duration_seconds_count", **process) == 1
    for state in ("PRESA_IN_CARICO", "INVIATA", "CONSEGNATA"):
        assert grew(before, after, "varco_invoice_state_entries_total", state=state) == 1, state
    riceviFile = {"channel": "simulator", "operation": "RiceviFile", "result": "accepted"}
    assert grew(before, after, "varco_sdi_calls_total", **riceviFile) == 1
    for gauge in ("varco_pending_jobs", "varco_oldest_pending_job_age_seconds", "varco_mail_outbox_size"):
        assert (gauge, frozenset()) in after  # read from the database at each scrape


def test_a_failed_attempt_is_counted_as_retried(client, queue, clock):
    jobs.registry().add(EXPLODE, _explode)
    before = scrape(client)
    with unit_of_work() as session:
        jobs.enqueue(session, EXPLODE)
    queue.drain()
    during = scrape(client)
    assert grew(before, during, "varco_jobs_total", kind=EXPLODE.name, event="retried") == 1
    assert grew(before, during, "varco_jobs_total", kind=EXPLODE.name, event="succeeded") == 0
    # waiting for the reconciler: due, and as old as the clock says
    assert value(during, "varco_pending_jobs") >= 1
    clock.advance(timedelta(minutes=5))
    assert value(scrape(client), "varco_oldest_pending_job_age_seconds") >= 300


def _explode(session, args, clock):
    raise RuntimeError("boom")


def test_route_labels_are_templates_and_unknown_paths_share_one(client):
    before = scrape(client)
    for n in range(3):
        client.get(f"/no/such/path/{uuid.uuid4().hex}")
        client.get(f"/api/v2/callbacks/{n}")  # 401 without a token, still its route
    client.request("BREW", "/health")
    after = scrape(client)
    unmatched = {"route": "unmatched", "method": "GET", "status": "404"}
    assert grew(before, after, "varco_http_requests_total", **unmatched) == 3
    callback = {"route": "/api/v2/callbacks/{callback_id}", "method": "GET", "status": "401"}
    assert grew(before, after, "varco_http_requests_total", **callback) == 3
    assert (
        grew(before, after, "varco_http_requests_total", route="/health", method="other", status="405") == 1
    )
    assert not any("/no/such/path" in dict(labels).get("route", "") for _, labels in after)


def test_sdicoop_calls_are_counted_by_operation_and_result(db, clock):
    before = parse(metrics.render().decode())
    # no certificate configured: nothing sent, tried again later (an operator's setting)
    call = partial(transmissions._ricevi_file, "IT01234567890_00001.xml", b"<x/>")
    transmissions._call_and_record(0, call)
    after = parse(metrics.render().decode())
    labels = {"channel": "sdicoop", "operation": "RiceviFile", "result": "retry"}
    assert grew(before, after, "varco_sdi_calls_total", **labels) == 1


def test_metrics_off(client, configure):
    configure(metrics_enabled="false")
    assert client.get("/metrics").status_code == 404


def _request(client: tuple[str, int], headers: dict[str, str] | None = None) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    return Request({"type": "http", "method": "GET", "path": "/metrics", "headers": raw, "client": client})


PRODUCTION = {
    "profile": "production",
    "secret_key": "x" * 40,
    "database_url": "postgresql+psycopg://varco@db/varco",
    "sdi_channel": "simulator",
}


def test_who_may_read_the_metrics():
    demo, production = Settings(), Settings(**PRODUCTION)
    _check_reader(_request(("203.0.113.9", 1)), demo)  # open on the demo profile
    with pytest.raises(Forbidden):  # production with neither setting: nobody
        _check_reader(_request(("127.0.0.1", 1)), production)

    by_token = Settings(**PRODUCTION, metrics_token="scrape-secret")
    _check_reader(_request(("203.0.113.9", 1), {"Authorization": "Bearer scrape-secret"}), by_token)
    for wrong in ({}, {"Authorization": "Bearer other"}, {"Authorization": "scrape-secret"}):
        with pytest.raises(Unauthorized):
            _check_reader(_request(("203.0.113.9", 1), wrong), by_token)

    by_network = Settings(**PRODUCTION, metrics_allow=["10.0.0.0/8"], trusted_proxies=["192.0.2.1"])
    _check_reader(_request(("10.1.2.3", 1)), by_network)
    _check_reader(_request(("192.0.2.1", 1), {"X-Forwarded-For": "10.9.9.9"}), by_network)  # via the proxy
    for peer, forwarded in (("203.0.113.9", "10.1.2.3"), ("192.0.2.1", "203.0.113.9")):
        with pytest.raises(Forbidden):  # a client's own X-Forwarded-For is not believed
            _check_reader(_request((peer, 1), {"X-Forwarded-For": forwarded}), by_network)

    for blank in ("", "   ", "scrape-secret "):  # ${TOKEN} unset must not open it; " " no client sends
        with pytest.raises(ValueError, match="VARCO_METRICS_TOKEN is empty or has spaces"):
            Settings(**PRODUCTION, metrics_token=blank)

    both = Settings(**PRODUCTION, metrics_allow=["10.0.0.0/8"], metrics_token="scrape-secret")
    with pytest.raises(Unauthorized):
        _check_reader(_request(("10.1.2.3", 1)), both)
    with pytest.raises(Forbidden):
        _check_reader(_request(("203.0.113.9", 1), {"Authorization": "Bearer scrape-secret"}), both)


# -- production: one API process, worker processes, one metrics directory ------------------------

REDIS_URL = "redis://127.0.0.1:6379/0"
DEMO_VAT = "01234560017"  # demo-premium


@contextmanager
def _production(tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """PostgreSQL + Redis, a fresh database and queue, the environment of every process."""
    urls = _postgres_database(f"varco_metrics_{uuid.uuid4().hex[:8]}")
    url = next(urls)
    queue = f"varco-metrics-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env.update(
        VARCO_DATA_DIR=str(tmp_path / "data"),
        VARCO_DATABASE_URL=url,
        VARCO_REDIS_URL=REDIS_URL,
        VARCO_QUEUE_NAME=queue,
        VARCO_LIMITS_KEY_PREFIX=f"{queue}:limits:",
        VARCO_IP_LIMITS_ENABLED="false",
        VARCO_DEFAULT_TIER="6",
        VARCO_METRICS_DIR=str(tmp_path / "metrics"),
        VARCO_LOG_FORMAT="json",
    )
    try:
        yield env, url
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
        next(urls, None)


@contextmanager
def _process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "varco.cli", *args], env=env, stdout=out, stderr=out)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _until(check, what: str, logs: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(logs.glob("*.log")))
            raise AssertionError(f"{what}: not within {seconds:.0f} s\n{tails}")
        time.sleep(0.2)


def _succeeded_in(file: Path) -> float:
    """invoices.process jobs that succeeded, as counted in one process's file."""
    for metric in MultiProcessCollector.merge([str(file)]):
        for sample in metric.samples:
            if sample.name == "varco_jobs_total" and sample.labels == {
                "kind": "invoices.process",
                "event": "succeeded",
            }:
                return sample.value
    return 0.0


def test_worker_processes_counts_add_up_in_the_api_processs_metrics(tmp_path: Path) -> None:
    logs = tmp_path
    with _production(tmp_path) as (env, _), ExitStack() as stack:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        api = stack.enter_context(_process(["serve", "--port", str(port)], env, logs / "serve.log"))
        first = stack.enter_context(_process(["worker"], env, logs / "worker-1.log"))
        _until(lambda: _healthy(base), "serve up", logs)
        http = stack.enter_context(httpx.Client(base_url=base, timeout=30))
        token = http.post(
            "/auth/signin",
            data={"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"},
        ).json()["access_token"]
        http.headers["Authorization"] = f"Bearer {token}"
        before = scrape(http)

        def upload(count: int) -> None:
            for _ in range(count):
                content = invoice_file(supplier_vat=DEMO_VAT)
                answer = http.post(
                    "/services/invoice/upload", json={"dataFile": base64.b64encode(content).decode()}
                )
                assert answer.json()["errorCode"] == "0000", answer.text

        def delivered(expected: int):
            return lambda: (
                grew(before, scrape(http), "varco_invoice_state_entries_total", state="CONSEGNATA")
                == expected
            )

        upload(3)  # the first worker alone
        _until(delivered(3), "3 invoices delivered", logs)
        second = stack.enter_context(_process(["worker"], env, logs / "worker-2.log"))
        _until(lambda: "scheduler started" in (logs / "worker-2.log").read_text(), "second worker up", logs)
        upload(3)  # both workers running
        _until(delivered(6), "6 invoices delivered", logs)
        first.terminate()
        first.wait(timeout=60)
        upload(3)  # the second worker alone
        _until(delivered(9), "9 invoices delivered", logs)
        after = scrape(http)

        process = {"kind": "invoices.process"}
        assert grew(before, after, "varco_uploads_total", code="0000") == 9  # counted by the API process
        assert grew(before, after, "varco_jobs_total", event="enqueued", **process) == 9
        # run by the workers, each in its own file, added up by the API process's /metrics
        assert grew(before, after, "varco_jobs_total", event="started", **process) == 9
        assert grew(before, after, "varco_jobs_total", event="succeeded", **process) == 9
        directory = tmp_path / "metrics"
        by_worker = [_succeeded_in(directory / f"counter_{proc.pid}.db") for proc in (first, second)]
        assert by_worker[0] >= 3 and by_worker[1] >= 3 and sum(by_worker) == 9, by_worker
        assert _succeeded_in(directory / f"counter_{api.pid}.db") == 0  # the API runs no jobs here

        # A process starting folds the files of ended ones together: their counts stay, once.
        third = stack.enter_context(_process(["worker"], env, logs / "worker-3.log"))
        _until(
            lambda: not (directory / f"counter_{first.pid}.db").exists(), "files of the first folded", logs
        )
        assert (directory / "counter_archive.db").exists()
        assert grew(before, scrape(http), "varco_jobs_total", event="succeeded", **process) == 9
        assert third.poll() is None


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
