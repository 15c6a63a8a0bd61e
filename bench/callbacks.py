"""Callback throughput: events delivered per second to a local receiver by one worker.

.venv/bin/python bench/callbacks.py [--events 2000]

Embedded default: SQLite database and SqliteHuey queue in a temporary data directory, one
account with one endpoint on a local receiver (http.server in a thread that checks every
signature). Events are recorded through `events.service.record` (not timed: the write path is
measured separately below); then one worker (`JobQueue.drain()` in this thread, what one huey
worker thread does) runs every delivery job until the queue is empty. Baseline: the same number of
signed POSTs of the same bodies with the same HTTP client, no database, no queue.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Receiver:
    def __init__(self) -> None:
        self.secret = b""
        self.count = 0
        self.bad = 0
        lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fields = dict(p.split("=", 1) for p in self.headers["Varco-Signature"].split(","))
                expected = hmac.new(receiver.secret, f"{fields['t']}.".encode() + body, hashlib.sha256)
                with lock:
                    receiver.count += 1
                    receiver.bad += not hmac.compare_digest(expected.hexdigest(), fields["v1"])
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--fast-huey", action="store_true", help="SqliteHuey without fsync nor results")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="varco-bench-callbacks-")
    os.environ.update(VARCO_DATA_DIR=data_dir, VARCO_TIER_LIMITS_ENABLED="false")
    os.environ.pop("VARCO_DATABASE_URL", None)
    os.environ.pop("VARCO_REDIS_URL", None)

    from varco import jobs_list

    jobs_list.install()  # the jobs this process runs, as a worker does
    from varco.accounts import service as accounts
    from varco.callbacks import service as callbacks
    from varco.callbacks import signing
    from varco.callbacks.sender import _client
    from varco.core import migrate
    from varco.core.clock import current_clock
    from varco.core.db import get_database, unit_of_work
    from varco.core.jobs import get_queue
    from varco.events import service as events
    from varco.settings import get_settings

    settings = get_settings()
    migrate.upgrade(get_database().url)
    queue = get_queue()
    if args.fast_huey:
        from huey import SqliteHuey

        from varco.core.jobs import JobQueue, set_queue

        queue = JobQueue(
            SqliteHuey("varco", filename=f"{data_dir}/huey-fast.sqlite3", fsync=False, results=False)
        )
        set_queue(queue)
    clock = current_clock()
    receiver = Receiver()
    with unit_of_work() as session:
        new = accounts.NewAccount("bench", "bench-pw", vat_code="01234560017")
        account = accounts.create_account(session, new, settings, clock)
        quiet = accounts.create_account(session, accounts.NewAccount("quiet", "pw"), settings, clock)
        _, secret = callbacks.register(
            session, account, callbacks.NewCallback(url=receiver.url), settings, clock
        )
    receiver.secret = secret.encode()

    def record(account_id: int, n: int, batch: int = 1) -> float:
        """Events/s written, `batch` per transaction (as the domain writes them: one per change)."""
        start = time.perf_counter()
        for first in range(0, n, batch):
            with unit_of_work() as session:
                for i in range(first, min(first + batch, n)):
                    payload = {"invoiceId": i, "filename": f"IT05555550028_{i:05d}.xml", "status": 3}
                    subject = f"IT05555550028_{i // 2:05d}.xml"  # two events per invoice
                    events.record(session, account_id, "updateInvoiceStatus", payload, clock.now(), subject)
        return n / (time.perf_counter() - start)

    n = args.events
    huey = "SqliteHuey, no fsync, no results" if args.fast_huey else "SqliteHuey (default)"
    print(f"one worker, embedded SQLite + {huey} in {data_dir}; {n} events, 2 per invoice")
    without = record(quiet.id, n)
    with_endpoint = record(account.id, n)
    print(f"{'record, no endpoint':34} {without:8.1f} events/s (one transaction each)")
    ratio = with_endpoint / without
    print(f"{'record + fan-out to 1 endpoint':34} {with_endpoint:8.1f} events/s ({ratio:.2f} of that)")

    start = time.perf_counter()
    queue.drain(limit=10 * n)
    elapsed = time.perf_counter() - start
    assert receiver.count == n and receiver.bad == 0, (receiver.count, receiver.bad)
    rate = n / elapsed

    body = b'{"eventId":"0123456789abcdef0123456789abcdef","type":"updateInvoiceStatus","data":{}}' * 3
    start = time.perf_counter()
    for i in range(n):
        headers = {
            "Content-Type": "application/json",
            signing.SIGNATURE_HEADER: signing.header(secret, clock.now(), body),
            signing.EVENT_ID_HEADER: str(i),
        }
        _client.post(receiver.url, content=body, headers=headers).raise_for_status()
    raw = n / (time.perf_counter() - start)
    print(f"{'baseline: signed POSTs, no DB/queue':34} {raw:8.1f} events/s")
    print(f"{'delivered by one worker':34} {rate:8.1f} events/s ({rate / raw:.2f} of baseline)")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
