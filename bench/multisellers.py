"""Multiseller list, detail and report with many assignors, next to a bare FastAPI GET and
GET /auth/userInfo in the same run; and the report job's time in the worker.

    .venv/bin/python bench/multisellers.py [--assignors 1000] [--invoices 20] [--seconds 4] [--threads 4]

One uvicorn process on embedded SQLite. The data (assignors, their invoice files, one notification
per file) is written straight into the server's database by this process; the report job is run
here with `jobs.run_job`, exactly as a worker runs it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import insert, select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import running_server, throughput  # noqa: E402

NOW = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


def populate(assignors: int, invoices: int) -> None:
    """Assignors delegating bench-premium (through the life cycle), files and notifications in bulk."""
    from varco.accounts import delegations
    from varco.accounts.models import Account, DelegationStatus
    from varco.core import blobs
    from varco.core.clock import ManualClock
    from varco.core.db import unit_of_work
    from varco.invoices.models import Invoice, Notification

    clock = ManualClock(NOW)
    with unit_of_work() as session:
        premium = session.scalar(select(Account).where(Account.username == "bench-premium"))
        session.execute(
            insert(Account),
            [
                {
                    "username": f"bench-assignor-{i}",
                    "password_hash": "!",
                    "kind": "basic",
                    "description": f"Assignor {i} S.r.l.",
                    "country_code": "IT",
                    "vat_code": f"{i:011d}",
                    "tier": 0,
                    "max_space_kb": 1_048_576,
                    "expires_on": (NOW + timedelta(days=365)).date(),
                    "is_disabled": False,
                    "is_admin": False,
                    "created_at": NOW,
                }
                for i in range(assignors)
            ],
        )
        accounts = session.scalars(select(Account).where(Account.username.like("bench-assignor-%"))).all()
        for n, account in enumerate(accounts):
            status = DelegationStatus.SUSPEND if n % 10 == 0 else DelegationStatus.ACTIVE
            delegations.create(session, account, premium, status, clock, actor="bench")
    with unit_of_work() as session:
        for n, account in enumerate(accounts):
            blob = blobs.store(session, f"a{n}.xml", b"x" * 8000, account.id, NOW)
            rows = [
                {
                    "direction": "out" if k % 3 else "in",
                    "filename": f"IT05555550028_{n:05d}{k:04d}.xml",
                    "account_id": account.id,
                    "format": "FPR12",
                    "state": 3 if k % 3 else 11,
                    "blob_id": blob.id,
                    "content_sha256": blob.sha256,
                    "sdi_errors": [],
                    "created_at": NOW - timedelta(days=40 * k),
                    "updated_at": NOW,
                }
                for k in range(invoices)
            ]
            ids = session.scalars(insert(Invoice).returning(Invoice.id), rows).all()
            session.execute(
                insert(Notification),
                [
                    {
                        "invoice_id": invoice_id,
                        "type": "RC",
                        "filename": f"N{invoice_id}_RC_001.xml",
                        "blob_id": blob.id,
                        "notification_date": NOW,
                        "created_at": NOW,
                    }
                    for invoice_id in ids
                ],
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assignors", type=int, default=1000)
    parser.add_argument("--invoices", type=int, default=20, help="invoice files per assignor")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    with running_server({"VARCO_TIER_LIMITS_ENABLED": "false"}) as server:  # measure the endpoints, not §8.3
        base = server.base
        server.cli("users", "create", "bench-premium", "--password", "bench-pw", "--vat-code", "01234560017")
        os.environ["VARCO_DATA_DIR"] = server.env["VARCO_DATA_DIR"]  # this process writes the same DB
        os.environ.pop("VARCO_DATABASE_URL", None)
        started = time.perf_counter()
        populate(args.assignors, args.invoices)
        print(
            f"populated {args.assignors} assignors, {args.assignors * args.invoices} files and as many "
            f"notifications in {time.perf_counter() - started:.1f} s"
        )
        form = {"grant_type": "password", "username": "bench-premium", "password": "bench-pw"}
        headers = {
            "Authorization": f"Bearer {httpx.post(f'{base}/auth/signin', data=form).json()['access_token']}"
        }
        first_id = httpx.get(f"{base}/auth/multicedenti", headers=headers).json()["content"][0]["id"]
        last_page = max(1, -(-args.assignors // 100))

        def get(path: str):
            def call(c: httpx.Client) -> None:
                response = c.get(f"{base}{path}", headers=headers)
                assert response.status_code == 200, (path, response.status_code, response.text[:200])

            return call

        rates = {
            "bare FastAPI GET": get("/bench/bare"),
            "GET /auth/userInfo": get("/auth/userInfo"),
            "GET /auth/multicedenti (page 1 of 10)": get("/auth/multicedenti"),
            f"GET /auth/multicedenti?size=100&page={last_page}": get(
                f"/auth/multicedenti?size=100&page={last_page}"
            ),
            "GET /auth/multicedenti?status=SUSPEND": get("/auth/multicedenti?status=SUSPEND"),
            "GET /auth/multicedenti/{id}": get(f"/auth/multicedenti/{first_id}"),
        }
        measured = {
            name: throughput(call, seconds=args.seconds, threads=args.threads) for name, call in rates.items()
        }

        from varco import jobs_list
        from varco.core import jobs
        from varco.core.db import unit_of_work
        from varco.core.models import JobRow

        jobs_list.install()  # the jobs this process runs, as a worker does
        first = httpx.post(f"{base}/api/v2/report", headers=headers)
        assert first.status_code == 202, first.text
        with unit_of_work() as session:
            job_id = session.scalar(select(JobRow.id).where(JobRow.name == "multiseller_report"))
        started = time.perf_counter()
        assert jobs.run_job(job_id) == "done"
        job_seconds = time.perf_counter() - started
        ready = httpx.post(f"{base}/api/v2/report", headers=headers)
        assert ready.status_code == 200 and len(ready.json()["report"][0]["list"]) == args.assignors

        def served(c: httpx.Client) -> None:
            assert c.post(f"{base}/api/v2/report", headers=headers).status_code == 200

        measured["POST /api/v2/report (ready, 200)"] = throughput(
            served, seconds=args.seconds, threads=args.threads
        )

    baseline = measured["bare FastAPI GET"]
    print(f"{'endpoint':48} {'req/s':>8} {'vs bare':>8}")
    for name, rate in measured.items():
        print(f"{name:48} {rate:8.1f} {rate / baseline:8.2f}")
    print(
        f"report job for {args.assignors} assignors / {args.assignors * args.invoices} files: "
        f"{job_seconds * 1000:.0f} ms; body {len(ready.content) / 1024:.0f} KB"
    )


if __name__ == "__main__":
    main()
