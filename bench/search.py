"""Search latency, v2 list and detail, p50/p99 against the target (p99 < 50 ms), and query plans, on
the embedded SQLite default or on PostgreSQL.

Fills its own database with bulk inserts (PostgreSQL: COPY; SQLite: executemany, and no ANALYZE,
as `varco serve` leaves it), runs a real uvicorn server against it, measures sequential requests
(one keep-alive client), prints the plans of the statements a list runs, then drops the database.

    .venv/bin/python bench/search.py --database sqlite|postgres [--invoices 1000000] [--dense 100000]
        [--requests 300] [--keep | --reuse NAME]

Data: `--invoices` files over 2026, 40 % owned by a Premium user and its 200 delegators, 60 % by
1,000 other accounts; and one account (`bench-dense`) with `--dense` sent files inside one 10-day
window: its list's total is counted over that whole window. `--keep` keeps the database (SQLite:
the file; PostgreSQL: the database) and prints its name; `--reuse NAME` measures it again without
filling it. Nothing outside this repository is read.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import islice
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, insert, text
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import SERVER_CODE, free_port  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
YEAR_START = datetime(2026, 1, 1, tzinfo=UTC)
DENSE_START = datetime(2026, 6, 1, tzinfo=UTC)  # the dense account's files: [start, start + 10 days)
WINDOW = timedelta(days=10)
PASSWORD = "bench-pw"
DELEGATORS = 200  # basic users delegating the measured Premium user
OTHERS = 1000  # unrelated Premium accounts
DENSE_ID = DELEGATORS + 2 + OTHERS  # the account with every file in one window
TARGET_MS = 50.0  # p99 of every list
STATES = [3, 4, 5, 7, 7, 7, 7, 8, 9, 10]
INVOICE_COLUMNS = (
    "id direction filename sdi_id account_id uploaded_by_id charged_account_id format state blob_id "
    "content_sha256 is_signed signature skip_extra_schema codice_destinatario pec_destinatario "
    "sender_description sender_country sender_vat sender_fiscal_code receiver_description receiver_country "
    "receiver_vat receiver_fiscal_code sdi_errors pdd_available created_at updated_at sdi_received_at "
    "delivered_at outcome_deadline_at document_types"
).split()
BODY_COLUMNS = (
    "id invoice_id position document_type number invoice_date currency total_document total_vat net_payable"
).split()


# -- databases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    kind: str  # sqlite | postgres
    name: str  # the SQLite file or the PostgreSQL database
    url: str  # SQLAlchemy URL, as VARCO_DATABASE_URL

    @property
    def postgres(self) -> bool:
        return self.kind == "postgres"


@contextmanager
def bench_database(kind: str, keep: bool, reuse: str | None) -> Iterator[Target]:
    """A database of our own: created here (or `reuse`d), dropped afterwards unless kept."""
    if kind == "postgres":
        import psycopg

        name = reuse or f"varco_bench_search_{uuid.uuid4().hex[:8]}"
        if reuse is None:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
        target = Target(kind, name, f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
    else:
        if reuse is not None:
            name = str(Path(reuse).resolve())
            if not Path(name).exists():
                raise SystemExit(f"--reuse {reuse}: no such SQLite file")
        else:
            name = str(Path(tempfile.mkdtemp(prefix="varco-bench-search-")) / "varco.sqlite3")
        target = Target(kind, name, f"sqlite:///{name}")
    try:
        yield target
    finally:
        if keep or reuse is not None:
            print(f"\nkept database: --database {kind} --reuse {target.name}")
        elif target.postgres:
            import psycopg

            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{target.name}" WITH (FORCE)')
        else:
            shutil.rmtree(Path(target.name).parent, ignore_errors=True)


def create_accounts(url: str, postgres: bool) -> tuple[list[int], list[int]]:
    """The measured Premium user (id 1, with DELEGATORS basic delegators), OTHERS unrelated accounts and
    the dense account (DENSE_ID)."""
    from varco.accounts.models import Delegation
    from varco.core.db import Database
    from varco.core.security import hash_password

    db = Database(url)
    now = YEAR_START
    secret = hash_password(PASSWORD)
    with db.unit_of_work() as session:
        session.add(_account(1, "bench-premium", "premium", secret, now))
        session.add(_account(2, "bench-basic", "basic", secret, now))
        for i in range(3, DELEGATORS + 2):
            session.add(_account(i, f"bench-basic-{i}", "basic", "!", now))
        for i in range(DELEGATORS + 2, DENSE_ID):
            session.add(_account(i, f"bench-other-{i}", "premium", "!", now))
        session.add(_account(DENSE_ID, "bench-dense", "premium", secret, now))
        session.flush()
        for i in range(2, DELEGATORS + 2):
            session.add(
                Delegation(delegator_id=i, delegate_id=1, status="ACTIVE", created_at=now, updated_at=now)
            )
        if postgres:
            session.execute(_setval("accounts"))
    db.dispose()
    return [1, *range(2, DELEGATORS + 2)], list(range(DELEGATORS + 2, DENSE_ID))


def _account(i: int, username: str, kind: str, secret: str, now: datetime):
    from varco.accounts.models import Account

    return Account(
        id=i,
        username=username,
        password_hash=secret,
        kind=kind,
        description=username,
        country_code="IT",
        vat_code=f"{i:011d}",
        tier=6,
        max_space_kb=10**9,
        expires_on=date(2030, 1, 1),
        is_disabled=False,
        is_admin=False,
        created_at=now,
    )


def _setval(table: str):
    return text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")


# -- data ----------------------------------------------------------------------------------------


def rows(count: int, dense: int, group: list[int], others: list[int]) -> Iterator[tuple[dict, dict]]:
    """(invoice, body) values: `count` files over 2026 in time order (ids and creation times grow
    together, as in production), then `dense` sent files of DENSE_ID inside [DENSE_START, + 10 days)."""
    rng = random.Random(7)
    for i in range(1, count + 1):
        account = rng.choice(group) if rng.random() < 0.4 else rng.choice(others)
        direction = "out" if rng.random() < 0.7 else "in"
        created = YEAR_START + timedelta(seconds=i * 365 * 86400 // count + rng.randrange(600))
        yield _row(rng, i, account, direction, created)
    span = int(WINDOW.total_seconds() * 1_000_000) - 1
    for j in range(dense):
        created = DENSE_START + timedelta(microseconds=j * span // dense)
        yield _row(rng, count + 1 + j, DENSE_ID, "out", created)


def _row(rng: random.Random, i: int, account: int, direction: str, created: datetime) -> tuple[dict, dict]:
    updated = created + timedelta(hours=rng.randrange(72))
    state = rng.choice(STATES) if direction == "out" else 11
    kind = "TD04" if rng.random() < 0.05 else "TD01"  # 5 % credit notes
    own = f"{account:011d}"
    partner = f"{rng.randrange(1, 5000):011d}"
    sender, receiver = (own, partner) if direction == "out" else (partner, own)
    invoice = {
        "id": i,
        "direction": direction,
        "filename": f"IT05555550028_{i:08X}.xml" if direction == "out" else f"IT{partner}_{i:08X}.xml",
        "sdi_id": str(1_000_000_000 + i),
        "account_id": account,
        "uploaded_by_id": account if direction == "out" else None,
        "charged_account_id": account if direction == "out" else None,
        "format": "FPR12",
        "state": state,
        "blob_id": 1,
        "content_sha256": "0" * 64,
        "is_signed": False,
        "signature": None,
        "skip_extra_schema": False,
        "codice_destinatario": "ABC1234",
        "pec_destinatario": None,
        "sender_description": f"Company {sender}",
        "sender_country": "IT",
        "sender_vat": sender,
        "sender_fiscal_code": None,
        "receiver_description": f"Company {receiver}",
        "receiver_country": "IT",
        "receiver_vat": receiver,
        "receiver_fiscal_code": receiver,
        "sdi_errors": [],
        "pdd_available": state in (5, 7, 8, 9, 10, 11),
        "created_at": created,
        "updated_at": updated,
        "sdi_received_at": created,
        "delivered_at": None,
        "outcome_deadline_at": None,
        "document_types": kind,
    }
    total = Decimal(rng.randrange(1000, 1_000_000)) / 100
    body = {
        "id": i,
        "invoice_id": i,
        "position": 1,
        "document_type": kind,
        "number": f"N{i}",
        "invoice_date": (YEAR_START + timedelta(days=rng.randrange(365))).date(),
        "currency": "EUR",
        "total_document": total,
        "total_vat": round(total * 22 / 122, 2),
        "net_payable": total,
    }
    return invoice, body


def load(target: Target, count: int, dense: int, group: list[int], others: list[int]) -> float:
    """Bulk-insert the files and their bodies; `invoice_month_counts` is kept by its triggers."""
    started = time.perf_counter()
    data = rows(count, dense, group, others)
    if target.postgres:
        _copy(target, data)
    else:
        _executemany(target, data)
    return time.perf_counter() - started


def _copy(target: Target, data: Iterator[tuple[dict, dict]]) -> None:
    import psycopg

    dsn = target.url.replace("+psycopg", "")
    bodies = io.StringIO()
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO blobs (id, account_id, name, sha256, size, content, created_at) "
            "VALUES (1, NULL, 'shared.xml', repeat('0', 64), 5, 'bench', now())"
        )
        with conn.cursor() as cur:
            with cur.copy(f"COPY invoices ({', '.join(INVOICE_COLUMNS)}) FROM STDIN") as copy:
                while chunk := list(islice(data, 20_000)):
                    copy.write("".join(_copy_line(invoice, INVOICE_COLUMNS) for invoice, _ in chunk))
                    bodies.write("".join(_copy_line(body, BODY_COLUMNS) for _, body in chunk))
            with cur.copy(f"COPY invoice_bodies ({', '.join(BODY_COLUMNS)}) FROM STDIN") as copy:
                copy.write(bodies.getvalue())
            for table in ("invoices", "invoice_bodies", "blobs"):
                cur.execute(_setval(table).text)
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE invoices")
        conn.execute("VACUUM ANALYZE invoice_bodies")


def _copy_line(values: dict, columns: list[str]) -> str:
    def cell(value: object) -> str:
        if value is None:
            return r"\N"
        if isinstance(value, bool):
            return "t" if value else "f"
        if isinstance(value, datetime | date):
            return value.isoformat()
        if isinstance(value, list):
            return json.dumps(value)
        return str(value)

    return "\t".join(cell(values[c]) for c in columns) + "\n"


def _executemany(target: Target, data: Iterator[tuple[dict, dict]]) -> None:
    """Core inserts in chunks, one transaction; no ANALYZE (varco never runs it on SQLite)."""
    from varco.core.blobs import Blob
    from varco.invoices.models import Invoice, InvoiceBody

    engine = create_engine(target.url)
    with engine.begin() as conn:
        blob = {"id": 1, "account_id": None, "name": "shared.xml", "sha256": "0" * 64, "size": 5}
        conn.execute(insert(Blob.__table__), [{**blob, "content": b"bench", "created_at": YEAR_START}])
        while chunk := list(islice(data, 10_000)):
            conn.execute(insert(Invoice.__table__), [invoice for invoice, _ in chunk])
            conn.execute(insert(InvoiceBody.__table__), [body for _, body in chunk])
    engine.dispose()


def sample(target: Target, query: str, **params: object) -> list[Any]:
    engine = create_engine(target.url)
    with engine.connect() as conn:
        found = [row[0] for row in conn.execute(text(query), params)]
    engine.dispose()
    return found


# -- server and measurements ---------------------------------------------------------------------


@contextmanager
def server(url: str, freeze: bool) -> Iterator[str]:
    """The app as `varco serve` runs it: with `freeze`, the loaded app's objects are frozen out of
    the garbage collector (gc.freeze) as `serve` does; without, as before that change."""
    env = {
        **os.environ,
        "VARCO_DATABASE_URL": url,
        "VARCO_DATA_DIR": tempfile.mkdtemp(prefix="varco-bench-search-data-"),
        "VARCO_IP_LIMITS_ENABLED": "false",
        "VARCO_TIER_LIMITS_ENABLED": "false",
        "VARCO_DEMO_DATA": "false",
    }
    port = free_port()
    code = SERVER_CODE.replace("uvicorn.run(", "import gc\ngc.collect()\ngc.freeze()\nuvicorn.run(", 1)
    proc = subprocess.Popen([sys.executable, "-c", code if freeze else SERVER_CODE, str(port)], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(env["VARCO_DATA_DIR"], ignore_errors=True)


def token(base: str, username: str) -> dict[str, str]:
    form = {"grant_type": "password", "username": username, "password": PASSWORD}
    return {"Authorization": f"Bearer {httpx.post(f'{base}/auth/signin', data=form).json()['access_token']}"}


def percentiles(times: list[float]) -> tuple[float, float, float]:
    times = sorted(times)
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], statistics.fmean(times)


def latency(
    client: httpx.Client, request: Callable[[int], httpx.Request], n: int
) -> tuple[float, float, float]:
    """p50, p99 and mean in milliseconds of `n` sequential requests (after 20 warm-up requests)."""
    for i in range(20):
        client.send(request(i)).raise_for_status()
    times = []
    for i in range(n):
        started = time.perf_counter()
        response = client.send(request(i))
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text[:300]
    return percentiles(times)


def window_at(start: datetime) -> dict[str, str]:
    end = start + WINDOW - timedelta(milliseconds=1)
    return {"creationStartDate": start.isoformat(), "creationEndDate": end.isoformat()}


@dataclass(frozen=True)
class Window:
    query: dict[str, str]
    last_page_of_100: int  # 0 when empty


def windows(target: Target, group: list[int], n: int = 40) -> list[Window]:
    """`n` random 10-day windows of 2026 with the number of the group's sent files in each (so that a
    deep page is never past the last one, whatever the size of the data set)."""
    rng = random.Random(3)
    found = []
    members = ", ".join(str(i) for i in group)
    for _ in range(n):
        start = YEAR_START + timedelta(days=rng.randrange(365 - WINDOW.days))
        (total,) = sample(
            target,
            f"SELECT count(*) FROM invoices WHERE account_id IN ({members}) AND direction = 'out' "
            "AND created_at >= :start AND created_at < :end",
            start=_bound(target, start),
            end=_bound(target, start + WINDOW),
        )
        found.append(Window(window_at(start), math.ceil(total / 100)))
    return found


def _bound(target: Target, value: datetime) -> object:
    """A datetime as the column stores it (SQLite: UTC text, as varco's UTCDateTime binds it)."""
    return value if target.postgres else value.strftime("%Y-%m-%d %H:%M:%S.%f")


Scenario = tuple[str, bool, Callable[[int], httpx.Request]]  # title, is a list (target applies), request


def scenarios(
    client: httpx.Client, base: str, tokens: dict[str, dict], target: Target, group: list[int], dense: int
) -> list[Scenario]:
    premium, basic, dense_user = tokens["bench-premium"], tokens["bench-basic"], tokens["bench-dense"]
    picked = "FROM invoices WHERE account_id = 1 AND direction = 'out' ORDER BY id LIMIT 2000"
    out_ids = sample(target, f"SELECT id {picked}") or [1]
    filenames = sample(target, f"SELECT filename {picked}") or ["none.xml"]
    sdi_ids = sample(target, f"SELECT sdi_id {picked}") or ["0"]
    partner = (sample(target, "SELECT receiver_vat FROM invoices WHERE account_id = 1 LIMIT 1") or ["0"])[0]
    spans = windows(target, group)
    deep = [w for w in spans if w.last_page_of_100 > 0] or spans

    def get(path: str, headers: dict, **query: object) -> httpx.Request:
        return client.build_request("GET", f"{base}{path}", params=query, headers=headers)

    def span(i: int) -> dict[str, str]:
        return spans[i % len(spans)].query

    def deep_page(i: int) -> httpx.Request:
        w = deep[i % len(deep)]
        return get(
            "/api/v2/invoices-out", premium, **w.query, size=100, page=max(1, min(10, w.last_page_of_100))
        )

    listed: list[Scenario] = [
        (
            "v2 list, Premium + 200 delegators, 10 days, size 10",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i)),
        ),
        (
            "v2 list, same, size 100",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i), size=100),
        ),
        (
            "v2 list, same, status=Consegnata",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i), status="Consegnata"),
        ),
        (
            "v2 list, same, receiverVatcode",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i), receiverVatcode=partner),
        ),
        (
            "v2 list, same, documentType=TD04",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i), documentType="TD04"),
        ),
        ("v2 list, same, page 10 (or the last) of size 100", True, deep_page),
        (
            "v2 list, username = one delegator",
            True,
            lambda i: get("/api/v2/invoices-out", premium, **span(i), username="bench-basic"),
        ),
        ("v2 list, basic user (own only)", True, lambda i: get("/api/v2/invoices-in", basic, **span(i))),
    ]
    if dense:
        whole = window_at(DENSE_START)
        last = math.ceil(dense / 100)
        listed += [
            (
                f"v2 list, one account, {dense:,} files in the window, size 10",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole),
            ),
            (
                f"v2 list, same {dense:,}, size 100",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole, size=100),
            ),
            (
                f"v2 list, same {dense:,}, page {min(10, last)} of size 100",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole, size=100, page=min(10, last)),
            ),
            (
                f"v2 list, same {dense:,}, last page ({last:,}) of size 100",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole, size=100, page=last),
            ),
            (  # a column outside the search index: one customer's files of the window
                f"v2 list, same {dense:,}, receiverVatcode, size 10",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole, receiverVatcode=_partner(i)),
            ),
            (
                f"v2 list, same {dense:,}, receiverVatcode, size 100",
                True,
                lambda i: get(
                    "/api/v2/invoices-out", dense_user, **whole, receiverVatcode=_partner(i), size=100
                ),
            ),
            (  # every file of the window matches: the filter narrows nothing
                f"v2 list, same {dense:,}, senderVatcode (its own), size 10",
                True,
                lambda i: get("/api/v2/invoices-out", dense_user, **whole, senderVatcode=f"{DENSE_ID:011d}"),
            ),
        ]
    return [
        *listed,
        (
            "v2 detail by id",
            False,
            lambda i: get("/api/v2/invoices-out/detail", premium, id=out_ids[i % len(out_ids)]),
        ),
        (
            "v2 detail by filename",
            False,
            lambda i: get("/api/v2/invoices-out/detail", premium, filename=filenames[i % len(filenames)]),
        ),
        (
            "v2 detail by idSdi",
            False,
            lambda i: get("/api/v2/invoices-out/detail", premium, idSdi=sdi_ids[i % len(sdi_ids)]),
        ),
        (
            "v1 findByUsername, basic user, no dates",
            True,
            lambda i: get("/services/invoice/out/findByUsername", basic, username="bench-basic"),
        ),
        (
            "v1 findByUsername, Premium, no dates",
            True,
            lambda i: get("/services/invoice/out/findByUsername", premium),
        ),
    ]


def in_process(target: Target, n: int, dense: int) -> None:
    """The same lists without HTTP and authentication: service + database + JSON encoding."""
    from varco.accounts.models import Account
    from varco.core.db import Database
    from varco.search import service
    from varco.search.params import Filters

    db = Database(target.url)
    rng = random.Random(5)

    def listing(
        size: int, page: int = 1, days: int | None = 10, account: int = 1, **extra: object
    ) -> Callable[[], object]:
        def run() -> object:
            if account == DENSE_ID:
                start = DENSE_START
            else:
                start = YEAR_START + timedelta(days=rng.randrange(365 - WINDOW.days))
            window = {"created_from": start, "created_to": start + WINDOW} if days else {}
            filters = Filters(**window, **extra)
            with db.unit_of_work() as session:
                try:
                    found = service.search(
                        session,
                        session.get(Account, account),
                        "out",
                        filters,
                        service.Paging(page, size),
                        None,
                    )
                except service.SearchInputError:  # past the last page of a sparse window
                    return None
                return found.model_dump_json()

        return run

    cases = [
        ("list, Premium + 200 delegators, 10 days, size 10", listing(10)),
        ("list, same, size 100", listing(100)),
        ("list, same, status=Consegnata", listing(10, state=7)),
        ("list, same, documentType=TD04", listing(10, document_type="TD04")),
        ("v1 list, Premium + 200 delegators, no dates", listing(10, days=None)),
    ]
    if dense:
        cases += [
            (f"list, one account, {dense:,} in the window, size 10", listing(10, account=DENSE_ID)),
            (f"list, same {dense:,}, size 100", listing(100, account=DENSE_ID)),
        ]
    print(f"\n{'in-process (service + database + JSON, no HTTP)':62} {'p50 ms':>8} {'p99 ms':>8}")
    for title, run in cases:
        for _ in range(20):
            run()
        times = []
        for _ in range(n):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
        p50, p99, _ = percentiles(times)
        print(f"{title:62} {p50:8.1f} {p99:8.1f}")
    db.dispose()


def _partner(i: int) -> str:
    """A customer's VAT number as `_row` draws them (1 to 4999): a few tens of files each."""
    return f"{1 + (i * 37) % 4999:011d}"


def explain(target: Target, dense: int) -> None:
    """The plan of every statement the service runs for a list (PostgreSQL: EXPLAIN (ANALYZE,
    BUFFERS); SQLite: EXPLAIN QUERY PLAN and the statement's time): the statements are captured as
    the repository builds them and replayed with their parameters."""
    from sqlalchemy import event

    from varco.accounts.models import Account
    from varco.core.db import Database
    from varco.search import service
    from varco.search.params import Filters

    db = Database(target.url)
    start = datetime(2026, 6, 1, tzinfo=UTC)
    window = {"created_from": start, "created_to": start + WINDOW}

    def lister(filters: Filters, page: int, size: int, account: int = 1) -> Callable[[Session], object]:
        paging = service.Paging(page, size)
        return lambda s: service.search(s, s.get(Account, account), "out", filters, paging, None)

    cases: dict[str, Callable[[Session], object]] = {
        "v2 list, Premium + delegators, 10 days, size 10": lister(Filters(**window), 1, 10),
        "v2 list, documentType TD04": lister(Filters(**window, document_type="TD04"), 1, 10),
        "v1 list, Premium + delegators, no dates": lister(Filters(), 1, 10),
    }
    if dense:
        cases[f"v2 list, one account, {dense:,} in the window, size 100"] = lister(
            Filters(**window), 1, 100, DENSE_ID
        )
        cases[f"v2 list, same {dense:,}, receiverVatcode, size 10"] = lister(
            Filters(**window, receiver_vat=_partner(1)), 1, 10, DENSE_ID
        )
    captured: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _many) -> None:
        captured.append((statement, parameters))

    for title, run in cases.items():
        with db.unit_of_work() as session:
            session.get(Account, 1)
            event.listen(db.engine, "before_cursor_execute", capture)
            try:
                run(session)
            except service.SearchInputError:
                pass
            finally:
                event.remove(db.engine, "before_cursor_execute", capture)
            statements = [(sql, p) for sql, p in captured if "invoice" in sql and "EXPLAIN" not in sql]
            captured.clear()
            cursor = session.connection().connection.dbapi_connection.cursor()
            for sql, parameters in statements:
                print(f"\n-- {title}: {' '.join(sql.split())[:160]}")
                if target.postgres:
                    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", parameters)
                    lines = [line for (line,) in cursor.fetchall()]
                else:
                    cursor.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)
                    lines = _tree(cursor.fetchall())
                    started = time.perf_counter()
                    cursor.execute(sql, parameters).fetchall()
                    lines.append(f"({(time.perf_counter() - started) * 1000:.2f} ms)")
                for line in lines:
                    print(line[:200])
    db.dispose()


def _tree(plan: list[tuple]) -> list[str]:
    """EXPLAIN QUERY PLAN rows (id, parent, _, detail) indented as the sqlite3 shell shows them."""
    depth: dict[int, int] = {0: -1}
    lines = []
    for node, parent, _, detail in plan:
        depth[node] = depth.get(parent, -1) + 1
        lines.append(f"{'  ' * depth[node]}{detail}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--invoices", type=int, default=1_000_000, help="files spread over 2026")
    parser.add_argument("--dense", type=int, default=100_000, help="files of one account in one window")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--keep", action="store_true", help="do not drop the database afterwards")
    parser.add_argument("--reuse", help="measure a database kept by an earlier --keep run (no load)")
    parser.add_argument("--no-gc-freeze", action="store_true", help="serve without gc.freeze() (as before)")
    parser.add_argument("--no-explain", action="store_true", help="skip the in-process runs and the plans")
    args = parser.parse_args()
    from varco.core import migrate

    group, others = [1, *range(2, DELEGATORS + 2)], list(range(DELEGATORS + 2, DENSE_ID))
    with bench_database(args.database, args.keep, args.reuse) as target:
        if not args.reuse:
            migrate.upgrade(target.url)
            group, others = create_accounts(target.url, target.postgres)
            seconds = load(target, args.invoices, args.dense, group, others)
            print(f"loaded {args.invoices:,} + {args.dense:,} invoices (+ bodies) in {seconds:.1f} s")
        (rows_count,) = sample(target, "SELECT count(*) FROM invoices")
        (dense,) = sample(target, "SELECT count(*) FROM invoices WHERE account_id = :a", a=DENSE_ID)
        print(f"{args.database}: invoices {rows_count:,} rows, {dense:,} of them in the dense account")
        results: dict[str, tuple[float, float]] = {}
        with server(target.url, not args.no_gc_freeze) as base, httpx.Client(timeout=60) as client:
            tokens = {u: token(base, u) for u in ("bench-premium", "bench-basic", "bench-dense")}
            health = latency(client, lambda i: client.build_request("GET", f"{base}/health"), args.requests)
            print(f"\n{'scenario':62} {'p50 ms':>8} {'p99 ms':>8} {'mean':>8}  p99 < {TARGET_MS:.0f} ms")
            print(f"{'GET /health (baseline)':62} {health[0]:8.1f} {health[1]:8.1f} {health[2]:8.1f}")
            for title, is_list, request in scenarios(client, base, tokens, target, group, dense):
                p50, p99, mean = latency(client, request, args.requests)
                results[title] = (p50, p99)
                verdict = ("met" if p99 < TARGET_MS else "NOT met") if is_list else ""
                print(f"{title:62} {p50:8.1f} {p99:8.1f} {mean:8.1f}  {verdict}")
        if not args.no_explain:
            if not args.no_gc_freeze:
                import varco.app  # noqa: F401 - the whole app loaded, then frozen, as in the server

                gc.collect()
                gc.freeze()
            in_process(target, args.requests, dense)
            explain(target, dense)
        lists = {t: r for t, r in results.items() if "list" in t or "find" in t}
        worst_title, (_, worst) = max(lists.items(), key=lambda item: item[1][1])
        verdict = "met" if worst < TARGET_MS else "NOT met"
        print(f"\n{args.database}: worst list p99 {worst:.1f} ms ({worst_title})")
        print(f"target: p99 < {TARGET_MS:.0f} ms for every list: {verdict}")
        print(json.dumps({k: {"p50": round(v[0], 1), "p99": round(v[1], 1)} for k, v in results.items()}))


if __name__ == "__main__":
    main()
