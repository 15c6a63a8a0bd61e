"""One log line per request and per job; a request's id in its line, in the lines of the jobs it
caused and in the callbacks it triggered; a client's X-Request-ID kept when it is plain."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.callbacks.receiver import Receiver
from tests.callbacks.support import register, user
from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.core import jobs, logs
from varco.core.db import unit_of_work
from varco.core.requests import scrub_query

GENERATED = re.compile(r"[0-9a-f]{16}")
FIRST = jobs.Task("tests.logs_first")
SECOND = jobs.Task("tests.logs_second")


class Captured:
    """What the root logger wrote, in a format of core/logs.py."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    def text(self) -> str:
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text().splitlines()]  # one JSON object per line

    def events(self, event: str, **fields: object) -> list[dict[str, Any]]:
        return [
            line
            for line in self.lines()
            if line["event"] == event and all(line.get(k) == v for k, v in fields.items())
        ]


@pytest.fixture
def capture() -> Iterator[Callable[[str], Captured]]:
    """`capture("json")`: the root logger's records, rendered as `varco serve` renders them."""
    root = logging.getLogger()
    level, handlers = root.level, []
    quiet = {name: logging.getLogger(name).level for name in logs.QUIET}

    def start(log_format: str) -> Captured:
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logs.formatter(log_format))
        root.addHandler(handler)
        handlers.append(handler)
        root.setLevel(logging.INFO)
        for name, threshold in logs.QUIET.items():
            logging.getLogger(name).setLevel(threshold)  # as `varco serve` has them
        return Captured(stream)

    yield start
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(level)
    for name, threshold in quiet.items():
        logging.getLogger(name).setLevel(threshold)


@pytest.fixture
def receiver(clock) -> Iterator[Receiver]:
    live = Receiver(clock)
    yield live
    live.close()


def test_a_request_id_reaches_its_line_its_jobs_lines_and_its_callbacks(client, queue, receiver, capture):
    captured = capture("json")
    account, token = user(client, vat_code=SUPPLIER_VAT)
    register(client, token, receiver.url, receiver)
    request_id = f"client-{uuid.uuid4().hex[:12]}"
    answer = client.post(
        "/services/invoice/upload",
        json={"dataFile": b64(invoice_xml())},
        headers={**bearer(token), "X-Request-ID": request_id},
    )
    assert answer.json()["errorCode"] == "0000", answer.text
    assert answer.headers["X-Request-ID"] == request_id
    assert f"[request {request_id}]" in answer.json()["errorDescription"]
    queue.drain()  # the asynchronous stage, the simulated SDI's RC, the callback deliveries

    [line] = captured.events("request", request_id=request_id)
    assert line["route"] == line["path"] == "/services/invoice/upload"
    assert (line["method"], line["status"], line["account"]) == ("POST", 200, account.id)
    assert (line["file_name"], line["dry_run"]) == (answer.json()["uploadFileName"], False)  # what it stored
    assert isinstance(line["duration_ms"], float) and line["level"] == "info"

    ran = captured.events("job", request_id=request_id)
    kinds = [job["kind"] for job in ran]
    assert kinds.count("invoices.process") == 1 and kinds.count("callbacks.deliver") >= 1, kinds
    for job in ran:
        assert job["outcome"] == "succeeded" and job["attempt"] == 1, job
        assert isinstance(job["job_id"], int) and isinstance(job["duration_ms"], float)
    delivered = captured.events("callback delivery", request_id=request_id, result="delivered")
    got = receiver.accepted()
    assert [r.event_type for r in got] == ["updateUsage", "updateInvoiceStatus", "updateInvoiceStatus"]
    assert len(delivered) == len(got)
    assert {r.request_id for r in got} == {request_id}  # X-Request-ID on every delivery it caused


def test_a_delivery_queued_behind_another_carries_its_own_request_id(client, queue, receiver):
    """Deliveries of one lane go one after the other, the next sent by the job of the one before
    it: each still carries the request that caused its event."""
    _, token = user(client, vat_code=SUPPLIER_VAT)
    register(client, token, receiver.url, receiver)
    request_ids = [f"client-{uuid.uuid4().hex[:12]}" for _ in range(3)]
    for n, request_id in enumerate(request_ids):
        answer = client.post(
            "/services/invoice/upload",
            json={"dataFile": b64(invoice_xml(number=f"LANE-{n}"))},
            headers={**bearer(token), "X-Request-ID": request_id},
        )
        assert answer.json()["errorCode"] == "0000", answer.text
    queue.drain()

    got = receiver.accepted()
    # updateUsage: one lane per account, so the second and third waited for the one before them
    assert [r.request_id for r in got if r.event_type == "updateUsage"] == request_ids
    assert {r.request_id for r in got} == set(request_ids)


def test_jobs_run_in_one_batch_each_log_their_own_request(client, queue, capture):
    """The asynchronous stages of three uploads run in one transaction (core/jobs.py): each job's
    line still carries the request that caused it, and the batch's size."""
    captured = capture("json")
    _, token = user(client, vat_code=SUPPLIER_VAT)
    request_ids = [f"client-{uuid.uuid4().hex[:12]}" for _ in range(3)]
    for n, request_id in enumerate(request_ids):
        answer = client.post(
            "/services/invoice/upload",
            json={"dataFile": b64(invoice_xml(number=f"BATCH-{n}"))},
            headers={**bearer(token), "X-Request-ID": request_id},
        )
        assert answer.json()["errorCode"] == "0000", answer.text
    queue.drain()

    stages = [line for line in captured.events("job", kind="invoices.process")]
    assert sorted(line["request_id"] for line in stages) == sorted(request_ids)
    assert {(line["batch"], line["attempt"], line["outcome"]) for line in stages} == {(3, 1, "succeeded")}
    assert len({line["job_id"] for line in stages}) == 3


def test_the_client_s_id_is_kept_only_when_plain(client):
    kept = client.get("/health", headers={"X-Request-ID": "lb-7f3a:42/x=1"})
    assert kept.headers["X-Request-ID"] == "lb-7f3a:42/x=1"
    for header in ({}, {"X-Request-ID": "two words"}, {"X-Request-ID": "x" * 65}, {"X-Request-ID": "a\tb"}):
        made = client.get("/health", headers=header).headers["X-Request-ID"]
        assert GENERATED.fullmatch(made), made
    refused = client.get("/api/v2/callbacks", headers={"X-Request-ID": "abc-1"})
    assert refused.status_code == 401 and refused.headers["X-Request-ID"] == "abc-1"


def test_a_job_no_request_caused_has_an_id_its_own_jobs_carry(db, clock, queue, capture):
    captured = capture("json")
    jobs.registry().add(FIRST, _then_second)
    jobs.registry().add(SECOND, lambda session, args, clock: None)
    with unit_of_work() as session:
        jobs.enqueue(session, FIRST)
    queue.drain()
    [first] = captured.events("job", kind=FIRST.name)
    assert GENERATED.fullmatch(first["request_id"])
    [second] = captured.events("job", kind=SECOND.name, request_id=first["request_id"])
    assert second["outcome"] == "succeeded"


def _then_second(session, args, clock):
    jobs.enqueue(session, SECOND, clock=clock)


def test_no_credential_of_a_query_string_reaches_the_request_line(client, capture):
    captured = capture("json")
    token = sign_in(client, make_account().username)["access_token"]
    client.get(f"/auth/userInfo?access_token={token}&password=Hunter2-Secret&page=2")
    [line] = captured.events("request", route="/auth/userInfo")
    assert line["path"] == "/auth/userInfo?access_token=***&password=***&page=2"
    assert token not in captured.text() and "Hunter2-Secret" not in captured.text()


def test_console_lines_are_for_people(client, capture):
    captured = capture("console")
    client.get("/health", headers={"X-Request-ID": "console-1"})
    [line] = [line for line in captured.text().splitlines() if "request_id=console-1" in line]
    assert " request " in line and "route=/health" in line and "status=200" in line
    assert not line.lstrip().startswith("{")


def test_the_format_follows_the_profile(configure):
    from varco.settings import get_settings

    assert get_settings().resolved_log_format == "console"  # demo
    configure(log_format="json")
    assert get_settings().resolved_log_format == "json"


def test_a_secret_value_is_masked_whole_up_to_the_next_ampersand(client, capture):
    """The app splits the query on `&` alone: a `;` or `#` inside a value is part of it."""
    captured = capture("json")
    client.get("/auth/userInfo?password=Hunter2-Secret;Tail-One&page=2")
    [line] = captured.events("request", route="/auth/userInfo")
    assert line["path"] == "/auth/userInfo?password=***&page=2"
    assert "Tail-One" not in captured.text()
    # a raw `#` reaches the server only from a client that sends the fragment (HTTP clients drop it)
    assert scrub_query("/auth/signin?password=Head#Tail-Two&x=1") == "/auth/signin?password=***&x=1"
