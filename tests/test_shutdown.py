"""Graceful shutdown with work in flight (docs/operations.md, Shutdown).

`varco serve` (embedded default): SIGTERM while an upload is still being sent and while its worker
waits on a callback receiver. New connections are refused at once; the upload gets its whole
answer; the callback POST is answered and recorded; no job is taken after the signal (the upload's
processing waits for the next start, which does it); exit code 0.

`varco worker` (PostgreSQL + Redis): SIGTERM while a job waits on an SMTP server. The job finishes,
the worker takes no new job, exits 0. With a short VARCO_SHUTDOWN_TIMEOUT the job is cut off
instead: its row stays pending and the next worker's reconciler runs it, and the message is sent
exactly once.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from aiosmtpd.controller import Controller
from sqlalchemy import create_engine, text

from tests.conftest import _postgres_database
from tests.live_server import CallbackReceiver, free_port
from tests.sdi.factories import invoice_file, valid_vat
from varco.accounts import service as accounts
from varco.core import migrate
from varco.core.clock import SystemClock
from varco.core.db import Database
from varco.settings import get_settings

REDIS_URL = "redis://127.0.0.1:6379/0"
DEMO_VAT = "01234560017"  # demo-premium's
DEMO = {"username": "demo-premium", "password": "demo-premium-pw"}


class Process:
    """A `varco` command as a process of its own, its output in a log file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("a") as out:
            command = [sys.executable, "-m", "varco.cli", *args]
            self.proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_log(self, line: str, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while line not in self.text():
            assert self.proc.poll() is None, f"exited with {self.proc.returncode}:\n{self.text()[-4000:]}"
            assert time.monotonic() < deadline, f"no {line!r} in the log:\n{self.text()[-4000:]}"
            time.sleep(0.1)

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    def exit_code(self, seconds: float = 60) -> int:
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {seconds} s:\n{self.text()[-4000:]}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def wait_healthy(base: str, process: Process) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.proc.poll() is None, f"exited:\n{process.text()[-4000:]}"
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"not up:\n{process.text()[-4000:]}"
        time.sleep(0.2)


def sign_in(base: str, username: str, password: str) -> dict[str, str]:
    answer = httpx.post(
        f"{base}/auth/signin",
        data={"grant_type": "password", "username": username, "password": password},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def upload(base: str, headers: dict[str, str], vat: str) -> str:
    body = {"dataFile": base64.b64encode(invoice_file(supplier_vat=vat)).decode()}
    answer = httpx.post(f"{base}/services/invoice/upload", json=body, headers=headers, timeout=60)
    assert answer.status_code == 200 and answer.json()["errorCode"] == "0000", answer.text
    return answer.json()["uploadFileName"]


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


class HeldReceiver(CallbackReceiver):
    """A callback receiver whose first POST waits until `release` is set; the others are answered
    at once. Records the event id of every POST it answered."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.first_event: str | None = None
        self.answered_events: list[str] = []
        super().__init__()

    def received(self, event_id: str) -> None:
        with self.lock:
            held = self.first_event is None
            if held:
                self.first_event = event_id
        if held:
            self.arrived.set()
            self.release.wait(120)

    def answered(self, event_id: str) -> None:
        with self.lock:
            self.answered_events.append(event_id)


class SlowUpload(threading.Thread):
    """An upload whose body is sent in two halves: the second only when `release` is set."""

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        super().__init__(daemon=True)
        body = json.dumps({"dataFile": base64.b64encode(invoice_file(supplier_vat=DEMO_VAT)).decode()})
        self.body = body.encode()
        self.url = f"{base}/services/invoice/upload"
        self.headers = headers | {"Content-Type": "application/json", "Content-Length": str(len(self.body))}
        self.half_sent = threading.Event()
        self.release = threading.Event()
        self.answer: httpx.Response | None = None
        self.error: BaseException | None = None

    def _chunks(self) -> Iterator[bytes]:
        half = len(self.body) // 2
        yield self.body[:half]
        self.half_sent.set()  # asked for the rest: the headers and the first half are on the wire
        self.release.wait(120)
        yield self.body[half:]

    def run(self) -> None:
        try:
            self.answer = httpx.post(self.url, content=self._chunks(), headers=self.headers, timeout=120)
        except BaseException as exc:  # reported by the test
            self.error = exc


def embedded_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env |= {
        "VARCO_DATA_DIR": str(tmp_path / "data"),
        "VARCO_PROFILE": "demo",
        "VARCO_IP_LIMITS_ENABLED": "false",
        "VARCO_DEFAULT_TIER": "6",
        "VARCO_CALLBACK_TIMEOUT_SECONDS": "120",  # the held POST must not time out by itself
        **settings,
    }
    return env


def test_serve_finishes_the_request_and_the_job_in_flight_and_takes_nothing_new(tmp_path: Path) -> None:
    receiver = HeldReceiver()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = embedded_env(tmp_path, VARCO_SHUTDOWN_TIMEOUT="90")
    serve = Process(["serve", "--port", str(port)], env, tmp_path / "serve-1.log")
    try:
        wait_healthy(base, serve)
        headers = sign_in(base, **DEMO)
        created = httpx.post(f"{base}/api/v2/callbacks", json={"url": receiver.url}, headers=headers)
        assert created.status_code == 201, created.text
        upload(base, headers, DEMO_VAT)  # its events' first delivery is held by the receiver
        assert receiver.arrived.wait(60), serve.text()[-4000:]

        slow = SlowUpload(base, headers)
        slow.start()
        assert slow.half_sent.wait(60)
        # A request on another connection answered after the first half was sent: the server's
        # event loop has read that half, so the upload is a request in flight.
        assert httpx.get(f"{base}/health", timeout=30).status_code == 200

        serve.terminate()
        deadline = time.monotonic() + 30
        while not refused(port):  # the listener closes at once
            assert time.monotonic() < deadline, "still accepting connections after SIGTERM"
            time.sleep(0.05)
        assert serve.proc.poll() is None  # draining

        slow.release.set()
        slow.join(timeout=60)
        assert slow.error is None, slow.error
        assert slow.answer is not None and slow.answer.status_code == 200, slow.answer
        assert slow.answer.json()["errorCode"] == "0000", slow.answer.text
        late_invoice = slow.answer.json()["uploadFileName"]
        assert serve.proc.poll() is None, serve.text()[-4000:]  # the job still runs: it waits

        receiver.release.set()
        assert serve.exit_code() == 0, serve.text()[-4000:]
        log = serve.text()
        assert "stopping: no new jobs" in log and "worker stopped: every running job finished" in log
        assert "Application shutdown complete" in log and "cut off" not in log

        with sqlite3.connect(tmp_path / "data" / "varco.sqlite3") as conn:
            delivery = conn.execute(
                "SELECT status, attempts FROM callback_deliveries WHERE event_uid = ?",
                (receiver.first_event,),
            ).fetchall()
            late = conn.execute(
                "SELECT i.state, j.status, j.attempts FROM invoices i "
                "JOIN jobs j ON j.key = 'process:' || i.id WHERE i.filename = ? AND i.direction = 'out'",
                (late_invoice,),
            ).fetchall()
        assert delivery == [("DELIVERED", 1)]  # the job in flight completed and was recorded
        assert late == [(1, "pending", 0)]  # accepted during the drain, not taken by the stopping worker

        # The next start does the work accepted during the drain (its wake-up is in the queue).
        serve = Process(["serve", "--port", str(port)], env, tmp_path / "serve-2.log")
        wait_healthy(base, serve)
        headers = sign_in(base, **DEMO)
        deadline = time.monotonic() + 90
        while status(base, headers, late_invoice) != "Consegnata":
            assert time.monotonic() < deadline, serve.text()[-4000:]
            time.sleep(0.2)
        serve.terminate()
        assert serve.exit_code() == 0, serve.text()[-4000:]
        assert receiver.answered_events.count(receiver.first_event) == 1  # POSTed once, answered once
    finally:
        serve.kill()
        receiver.close()


def status(base: str, headers: dict[str, str], filename: str) -> str:
    answer = httpx.get(f"{base}/api/v2/invoices-out/detail", params={"filename": filename}, headers=headers)
    return answer.json()["invoices"][0]["status"]


class HeldMailbox:
    """An SMTP server (aiosmtpd) that, when `hold_next` is set, keeps the next sender waiting after
    MAIL FROM until `release` is set (a sender cut off then never reaches DATA: no message)."""

    def __init__(self) -> None:
        self.hold_next = False
        self.held = threading.Event()
        self.release = threading.Event()
        self.messages: list = []

    async def handle_MAIL(self, server, session, envelope, address, mail_options) -> str:  # aiosmtpd hook
        if self.hold_next:
            self.hold_next = False
            self.held.set()
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 120)
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd hook
        self.messages.append(envelope)
        return "250 Message accepted for delivery"

    def hold(self) -> None:
        self.held.clear()
        self.release.clear()
        self.hold_next = True

    def to(self, address: str) -> list:
        return [m for m in self.messages if address in m.rcpt_tos]


@pytest.fixture
def mailbox() -> Iterator[tuple[HeldMailbox, int]]:
    box, port = HeldMailbox(), free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, port
    box.release.set()
    controller.stop()


def locked_account(url: str, vat: str) -> tuple[str, str]:
    """A tier-0 account (annual limit 1 here): its first upload locks it and queues the §8.4
    e-mail to its PEC, a job that talks to the SMTP server. Returns (username, pec)."""
    username, pec = f"mailer-{uuid.uuid4().hex[:8]}", f"{uuid.uuid4().hex[:8]}@pec.example.it"
    new = accounts.NewAccount(username=username, password="mailer-pw", vat_code=vat, pec=pec, tier=0)
    db = Database(url)
    try:
        with db.unit_of_work() as session:
            accounts.create_account(session, new, get_settings(), SystemClock())
    finally:
        db.dispose()
    return username, pec


def test_worker_finishes_the_running_job_or_leaves_it_to_the_reconciler(tmp_path: Path, mailbox) -> None:
    box, smtp_port = mailbox
    urls = _postgres_database(f"varco_shutdown_{uuid.uuid4().hex[:8]}")
    url = next(urls)
    queue = f"varco-shutdown-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    tiers = {0: [60, 1], **{tier: [30000, 10**6] for tier in range(1, 7)}}
    env |= {
        "VARCO_DATA_DIR": str(tmp_path / "data"),
        "VARCO_DATABASE_URL": url,
        "VARCO_REDIS_URL": REDIS_URL,
        "VARCO_QUEUE_NAME": queue,
        "VARCO_LIMITS_KEY_PREFIX": f"{queue}:limits:",
        "VARCO_IP_LIMITS_ENABLED": "false",
        "VARCO_TIERS": json.dumps(tiers),
        "VARCO_SMTP_HOST": "127.0.0.1",
        "VARCO_SMTP_PORT": str(smtp_port),
        "VARCO_SMTP_TIMEOUT_SECONDS": "120",  # the held message must not time out by itself
        "VARCO_STALE_JOB_AFTER": "1",  # a cut-off job is re-sent at the next worker's first minute
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    processes: list[Process] = []
    engine = create_engine(url)

    def worker(name: str, **settings: str) -> Process:
        process = Process(["worker"], env | settings, tmp_path / f"worker-{name}.log")
        processes.append(process)
        process.wait_for_log("scheduler started")  # then the consumer starts
        return process

    def mail(pec: str) -> tuple:
        with engine.connect() as conn:
            return conn.execute(
                text(
                    "SELECT m.delivered_at IS NOT NULL, j.status, j.attempts FROM mail_outbox m "
                    "JOIN jobs j ON j.key = 'mail:' || m.id WHERE m.to_address = :pec"
                ),
                {"pec": pec},
            ).one()

    try:
        migrate.upgrade(url)
        vats = [valid_vat(), valid_vat()]
        (first, first_pec), (second, second_pec) = (locked_account(url, vat) for vat in vats)
        serve = Process(["serve", "--port", str(port)], env, tmp_path / "serve.log")
        processes.append(serve)
        wait_healthy(base, serve)
        demo = sign_in(base, **DEMO)

        # 1. SIGTERM with the job waiting on the SMTP server: it finishes, nothing new is taken.
        a = worker("a", VARCO_SHUTDOWN_TIMEOUT="90")
        box.hold()
        upload(base, sign_in(base, first, "mailer-pw"), vats[0])  # locks the account: the e-mail
        assert box.held.wait(60), a.text()[-4000:]
        a.terminate()
        a.wait_for_log("stopping: no new jobs")
        late_invoice = upload(base, demo, DEMO_VAT)  # work for a worker: not for this one
        assert a.proc.poll() is None  # the job holds the shutdown
        box.release.set()
        assert a.exit_code() == 0, a.text()[-4000:]
        assert "worker stopped: every running job finished" in a.text()
        assert len(box.to(first_pec)) == 1 and mail(first_pec) == (True, "done", 1)
        with engine.connect() as conn:
            late = conn.execute(
                text(
                    "SELECT i.state, j.status, j.attempts FROM invoices i JOIN jobs j "
                    "ON j.key = 'process:' || i.id WHERE i.filename = :name AND i.direction = 'out'"
                ),
                {"name": late_invoice},
            ).one()
        assert tuple(late) == (1, "pending", 0)  # not taken by the stopping worker

        # 2. The next worker takes it; with a 1 s timeout its own job in flight is cut off.
        b = worker("b", VARCO_SHUTDOWN_TIMEOUT="1")
        deadline = time.monotonic() + 60
        while status(base, demo, late_invoice) != "Consegnata":
            assert time.monotonic() < deadline, b.text()[-4000:]
            time.sleep(0.2)
        box.hold()
        upload(base, sign_in(base, second, "mailer-pw"), vats[1])
        assert box.held.wait(60), b.text()[-4000:]
        b.terminate()
        assert b.exit_code(30) == 0, b.text()[-4000:]
        assert "cut off" in b.text() and "the reconciler runs them again" in b.text()
        assert mail(second_pec) == (False, "pending", 0)  # rolled back with the process: pending
        box.release.set()  # the cut-off sender is gone: its MAIL FROM leads to no message

        # 3. The next worker's reconciler sends the lost wake-up: the e-mail goes, once.
        c = worker("c")
        deadline = time.monotonic() + 60 + 45  # the scheduler's first minute, and some
        while mail(second_pec)[0] is not True:
            assert time.monotonic() < deadline, c.text()[-4000:]
            time.sleep(0.5)
        assert mail(second_pec) == (True, "done", 1)
        assert len(box.to(second_pec)) == 1 and len(box.messages) == 2
        for process in (c, serve):
            process.terminate()
            assert process.exit_code() == 0, process.text()[-4000:]
    finally:
        for process in processes:
            process.kill()
        engine.dispose()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
        next(urls, None)
