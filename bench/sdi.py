"""SDI simulator throughput: invoices per second drained to a final state by one worker.

.venv/bin/python bench/sdi.py [--invoices 1000]

Embedded default: SQLite database and SqliteHuey queue in a temporary data directory. Files are
accepted through the upload service first (not timed); then one worker (`JobQueue.drain()` in
this thread, what one huey worker thread does) runs every job until the queue is empty:
- "1 → 7": the service's asynchronous stage (state 1 → 3, hand-off to the channel), then the
  simulated SDI (checks, signed RC, 3 → 7), which a worker runs as a follow-on in the stage's
  transaction (core/jobs.py);
- "3 → 7": the simulated SDI alone, on invoices already sent;
- "3 → 8 (PA)": FPA12 files, RC then NE EC01 (two signed messages, two transitions);
- "1 → 8 (PA)": the same from state 1, service stage included.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "sdi" / "fixtures"
SUPPLIER_VAT = "01234560017"


def invoice(fixture: str) -> bytes:
    root = etree.fromstring((FIXTURES / fixture).read_bytes())
    for number in root.iter("Numero"):
        if number.getparent().tag == "DatiGeneraliDocumento":
            number.text = f"B{uuid.uuid4().int % 10**9}"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=1000)
    parser.add_argument("--fast-huey", action="store_true", help="SqliteHuey without fsync nor results")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="varco-bench-sdi-")
    os.environ.update(
        VARCO_DATA_DIR=data_dir,
        VARCO_IP_LIMITS_ENABLED="false",
        VARCO_TIER_LIMITS_ENABLED="false",
        VARCO_DEFAULT_TIER="6",
    )
    os.environ.pop("VARCO_DATABASE_URL", None)
    os.environ.pop("VARCO_REDIS_URL", None)

    from varco import jobs_list

    jobs_list.install()  # the jobs this process runs, as a worker does
    from varco.accounts import service as accounts
    from varco.core import migrate
    from varco.core.clock import current_clock
    from varco.core.db import get_database, unit_of_work
    from varco.core.jobs import get_queue
    from varco.invoices.models import Invoice
    from varco.invoices.service import Upload, accept_upload
    from varco.invoices.states import InvoiceState
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
    with unit_of_work() as session:
        account = accounts.create_account(
            session, accounts.NewAccount("bench", "bench-pw", vat_code=SUPPLIER_VAT), settings, clock
        )

    def accept(fixture: str, n: int) -> None:
        import base64

        for _ in range(n):
            with unit_of_work() as session:
                caller = accounts.get(session, account.id)
                upload = Upload(data_file=base64.b64encode(invoice(fixture)).decode(), signed_endpoint=False)
                accept_upload(session, caller, upload, settings, clock)

    def count(state: InvoiceState) -> int:
        from sqlalchemy import func, select

        with unit_of_work() as session:
            return session.scalar(select(func.count(Invoice.id)).where(Invoice.state == state)) or 0

    def timed(label: str, run: Callable[[], object], final: InvoiceState, expected: int) -> float:
        start, cpu = time.perf_counter(), time.process_time()
        run()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        reached = count(final)
        assert reached == expected, f"{label}: {reached} of {expected} reached {final.label}"
        rate = args.invoices / elapsed
        print(
            f"{label:28} {args.invoices:6d} invoices {elapsed:7.2f} s {rate:8.1f} invoices/s"
            f" ({rate / floor:.2f} of baseline; {args.invoices / cpu:6.1f} per CPU second)"
        )
        return rate

    n = args.invoices
    print(f"one worker, embedded SQLite + SqliteHuey in {data_dir}")
    floor, floor_cpu = _cpu_floor(clock)
    print(
        f"{'baseline: check + sign, no DB':28} {'':6} {'':8} {'':9} {floor:8.1f} invoices/s"
        f" (1.00 of baseline; {floor_cpu:6.1f} per CPU second)"
    )
    accept("FPR12.xml", n)
    timed("1 → 7 (FPR12)", queue.drain, InvoiceState.CONSEGNATA, n)

    # Stop after the service's stage: run only its jobs, then time the simulator's alone.
    accept("FPR12.xml", n)
    _drain_only(queue, "invoices.process")
    timed("3 → 7 (FPR12, SDI only)", queue.drain, InvoiceState.CONSEGNATA, 2 * n)

    accept("FPA12.xml", n)
    _drain_only(queue, "invoices.process")
    timed("3 → 8 (FPA12, SDI only)", queue.drain, InvoiceState.ACCETTATA, n)

    accept("FPA12.xml", n)
    timed("1 → 8 (FPA12)", queue.drain, InvoiceState.ACCETTATA, 2 * n)


def _cpu_floor(clock) -> tuple[float, float]:
    """Invoices/s of the SDI's CPU work alone (checks of the file, one signed RC): the ceiling.

    Wall clock and per CPU second of this process: on a shared machine the second moves less."""
    from datetime import UTC, datetime

    from varco import fatturapa
    from varco.core.db import unit_of_work
    from varco.sdi import messages
    from varco.sdi.simulator import signing

    content, at, n = invoice("FPR12.xml"), datetime(2026, 11, 23, tzinfo=UTC), 200
    with unit_of_work() as session:
        signing.sign(session, messages.decorrenza_termini("1", "IT1_1.xml", "warm-up", "1"), clock)
        start, cpu = time.perf_counter(), time.process_time()
        for i in range(n):
            fatturapa.check(content, fatturapa.CheckOptions(received_date=at.date()))  # the SDI's checks
            rc = messages.ricevuta_consegna(str(i), "IT1_1.xml", at, at, ("ABC1234", "B"), str(i))
            messages.parse(messages.serialize(signing.sign(session, rc, clock)))
        return n / (time.perf_counter() - start), n / (time.process_time() - cpu)


def _drain_only(queue, name: str) -> None:
    """Run the queued jobs called `name` outside a worker, so that the SDI's step they hand over
    becomes a job of its own instead of a follow-on in the same transaction; put the others'
    wake-ups back (they stay pending)."""
    from sqlalchemy import select

    from varco.core import jobs
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.core.models import JobRow

    while True:
        with unit_of_work() as session:
            ids = session.scalars(
                select(JobRow.id).where(JobRow.name == name, JobRow.status == "pending")
            ).all()
        if not ids:
            break
        for job_id in ids:
            with unit_of_work() as session:
                row = session.get_one(JobRow, job_id)
                jobs.registry().handler(row.name)(session, dict(row.args), current_clock())
                row.status = "done"
    queue.flush()  # stale wake-ups of the jobs just run; the SDI's jobs are re-sent below
    with unit_of_work() as session:
        pending = session.scalars(select(JobRow.id).where(JobRow.status == "pending")).all()
    for job_id in pending:
        queue.send(job_id)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
