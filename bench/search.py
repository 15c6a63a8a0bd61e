"""Search latency on 1,000,000 invoices in PostgreSQL: v2 list and detail, p50/p99, and query plans.

Creates its own database on 127.0.0.1:5432 (user postgres, trust), loads it with COPY, runs a real
uvicorn server against it, measures sequential requests (one keep-alive client), prints EXPLAIN
ANALYZE of the queries the list relies on, and drops the database.

    .venv/bin/python bench/search.py [--invoices 1000000] [--requests 300] [--keep]
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
from sqlalchemy import select
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import SERVER_CODE, free_port  # noqa: E402

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
YEAR_START = datetime(2026, 1, 1, tzinfo=UTC)
PASSWORD = "bench-pw"
DELEGATORS = 200  # basic users delegating the measured Premium user
OTHERS = 1000  # unrelated Premium accounts
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
)


# -- database ----------------------------------------------------------------------------------


@contextmanager
def bench_database(keep: bool, reuse: str | None = None) -> Iterator[str]:
    name = reuse or f"varco_bench_search_{uuid.uuid4().hex[:8]}"
    if reuse is None:
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        if not keep:
            with psycopg.connect(ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            print(f"kept database {name}")


def create_accounts(url: str) -> tuple[list[int], list[int]]:
    """The measured Premium user (id 1, with DELEGATORS basic delegators), and OTHERS unrelated accounts."""
    from varco.accounts.models import Account, Delegation
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
        for i in range(DELEGATORS + 2, DELEGATORS + 2 + OTHERS):
            session.add(_account(i, f"bench-other-{i}", "premium", "!", now))
        session.flush()
        for i in range(2, DELEGATORS + 2):
            session.add(
                Delegation(delegator_id=i, delegate_id=1, status="ACTIVE", created_at=now, updated_at=now)
            )
        session.execute(_setval("accounts"))
        ids = list(session.scalars(select(Account.id).order_by(Account.id)))
    db.dispose()
    group = [1, *range(2, DELEGATORS + 2)]
    return group, [i for i in ids if i not in group]


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
    from sqlalchemy import text

    return text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")


def load_invoices(dsn: str, count: int, group: list[int], others: list[int]) -> float:
    """COPY `count` invoices over 2026 (40 % to the measured group, 60 % to the others), one body each.

    `invoice_month_counts` is filled by its statement trigger on `invoices` (one aggregate per COPY)."""
    kinds = random.Random(11)
    types = ["TD04" if kinds.random() < 0.05 else "TD01" for _ in range(count + 1)]  # 5 % credit notes
    rng = random.Random(7)
    started = time.perf_counter()
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO blobs (id, account_id, name, sha256, size, content, created_at) "
            "VALUES (1, NULL, 'shared.xml', repeat('0', 64), 5, 'bench', now())"
        )
        with conn.cursor() as cur:
            with cur.copy(f"COPY invoices ({', '.join(INVOICE_COLUMNS)}) FROM STDIN") as copy:
                for chunk in _chunks(count, lambda i: _invoice_row(i, count, rng, group, others, types[i])):
                    copy.write(chunk)
            rng = random.Random(11)
            with cur.copy(f"COPY invoice_bodies ({', '.join(BODY_COLUMNS.split())}) FROM STDIN") as copy:
                for chunk in _chunks(count, lambda i: _body_row(i, rng, types[i])):
                    copy.write(chunk)
            for table in ("invoices", "invoice_bodies", "blobs"):
                cur.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
                )
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE invoices")
        conn.execute("VACUUM ANALYZE invoice_bodies")
    return time.perf_counter() - started


def _chunks(count: int, row: Callable[[int], str], size: int = 20_000) -> Iterator[str]:
    buffer = io.StringIO()
    for i in range(1, count + 1):
        buffer.write(row(i))
        if i % size == 0:
            yield buffer.getvalue()
            buffer = io.StringIO()
    if buffer.tell():
        yield buffer.getvalue()


def _invoice_row(
    i: int, count: int, rng: random.Random, group: list[int], others: list[int], kind: str
) -> str:
    account = rng.choice(group) if rng.random() < 0.4 else rng.choice(others)
    direction = "out" if rng.random() < 0.7 else "in"
    # Rows arrive in time order, as in production (ids and creation times grow together).
    created = YEAR_START + timedelta(seconds=i * 365 * 86400 // count + rng.randrange(600))
    updated = created + timedelta(hours=rng.randrange(72))
    state = rng.choice(STATES) if direction == "out" else 11
    own = f"{account:011d}"
    partner = f"{rng.randrange(1, 5000):011d}"
    sender, receiver = (own, partner) if direction == "out" else (partner, own)
    values = [
        i,
        direction,
        f"IT05555550028_{i:08X}.xml" if direction == "out" else f"IT{partner}_{i:08X}.xml",
        str(1_000_000_000 + i),
        account,
        account if direction == "out" else None,
        account if direction == "out" else None,
        "FPR12",
        state,
        1,
        "0" * 64,
        "f",
        None,
        "f",
        "ABC1234",
        None,
        f"Company {sender}",
        "IT",
        sender,
        None,
        f"Company {receiver}",
        "IT",
        receiver,
        receiver,
        "[]",
        "t" if state in (5, 7, 8, 9, 10, 11) else "f",
        created.isoformat(),
        updated.isoformat(),
        created.isoformat(),
        None,
        None,
        kind,
    ]
    return "\t".join(r"\N" if v is None else str(v) for v in values) + "\n"


def _body_row(i: int, rng: random.Random, kind: str) -> str:
    total = rng.randrange(1000, 1_000_000) / 100
    vat = round(total * 22 / 122, 2)
    day = (YEAR_START + timedelta(days=rng.randrange(365))).date()
    values = [i, i, 1, kind, f"N{i}", day.isoformat(), "EUR", f"{total:.2f}", f"{vat:.2f}", f"{total:.2f}"]
    return "\t".join(str(v) for v in values) + "\n"


# -- server and measurements ---------------------------------------------------------------------


@contextmanager
def server(url: str, freeze: bool) -> Iterator[str]:
    """The app as `varco serve` runs it: with `freeze`, the loaded app's objects are frozen out of
    the garbage collector (gc.freeze) as `serve` does; without, as before that change."""
    env = {
        **os.environ,
        "VARCO_DATABASE_URL": url,
        "VARCO_DATA_DIR": tempfile.mkdtemp(prefix="varco-bench-search-"),
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


def token(base: str, username: str) -> dict[str, str]:
    form = {"grant_type": "password", "username": username, "password": PASSWORD}
    return {"Authorization": f"Bearer {httpx.post(f'{base}/auth/signin', data=form).json()['access_token']}"}


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
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], statistics.fmean(times)


def window(rng: random.Random, days: int = 10) -> dict[str, str]:
    start = YEAR_START + timedelta(days=rng.randrange(365 - days))
    end = start + timedelta(days=days) - timedelta(milliseconds=1)
    return {"creationStartDate": start.isoformat(), "creationEndDate": end.isoformat()}


def scenarios(
    client: httpx.Client, base: str, premium: dict, basic: dict, dsn: str
) -> list[tuple[str, Callable]]:
    rng = random.Random(3)
    with psycopg.connect(dsn) as conn:
        sample = "FROM invoices WHERE account_id = 1 AND direction = 'out' ORDER BY random() LIMIT 2000"
        out_ids = [r[0] for r in conn.execute(f"SELECT id {sample}")]
        filenames = [r[0] for r in conn.execute(f"SELECT filename {sample}")]
        sdi_ids = [r[0] for r in conn.execute(f"SELECT sdi_id {sample}")]
        partner = conn.execute(
            "SELECT receiver_vat FROM invoices WHERE account_id = 1 AND direction = 'out' LIMIT 1"
        ).fetchone()[0]

    def get(path: str, headers: dict, **query: object) -> httpx.Request:
        return client.build_request("GET", f"{base}{path}", params=query, headers=headers)

    return [
        (
            "v2 list, Premium + 200 delegators, 10 days, size 10",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng)),
        ),
        ("v2 list, same, size 100", lambda i: get("/api/v2/invoices-out", premium, **window(rng), size=100)),
        (
            "v2 list, same, status=Consegnata",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng), status="Consegnata"),
        ),
        (
            "v2 list, same, receiverVatcode",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng, 10), receiverVatcode=partner),
        ),
        (
            "v2 list, same, documentType=TD04",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng), documentType="TD04"),
        ),
        (
            "v2 list, same, page 10 of size 100",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng), size=100, page=10),
        ),
        (
            "v2 list, username = one delegator",
            lambda i: get("/api/v2/invoices-out", premium, **window(rng), username="bench-basic"),
        ),
        ("v2 list, basic user (own only)", lambda i: get("/api/v2/invoices-in", basic, **window(rng))),
        ("v2 detail by id", lambda i: get("/api/v2/invoices-out/detail", premium, id=out_ids[i % 2000])),
        (
            "v2 detail by filename",
            lambda i: get("/api/v2/invoices-out/detail", premium, filename=filenames[i % 2000]),
        ),
        (
            "v2 detail by idSdi",
            lambda i: get("/api/v2/invoices-out/detail", premium, idSdi=sdi_ids[i % 2000]),
        ),
        (
            "v1 findByUsername, basic user, no dates",
            lambda i: get("/services/invoice/out/findByUsername", basic, username="bench-basic"),
        ),
        (
            "v1 findByUsername, Premium, no dates",
            lambda i: get("/services/invoice/out/findByUsername", premium),
        ),
    ]


def in_process(url: str, n: int) -> None:
    """The same list and detail without HTTP and authentication: service + database + JSON encoding."""
    from varco.accounts.models import Account
    from varco.core.db import Database
    from varco.search import service
    from varco.search.params import Filters

    db = Database(url)
    rng = random.Random(5)
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        sample = "FROM invoices WHERE account_id = 1 AND direction = 'out' ORDER BY random() LIMIT 1000"
        filenames = [r[0] for r in conn.execute(f"SELECT filename {sample}")]

    def listing(size: int, page: int = 1, days: int | None = 10, **extra: object) -> Callable[[], object]:
        def run() -> object:
            start = YEAR_START + timedelta(days=rng.randrange(355))
            window = {"created_from": start, "created_to": start + timedelta(days=days)} if days else {}
            filters = Filters(**window, **extra)
            with db.unit_of_work() as session:
                found = service.search(
                    session, session.get(Account, 1), "out", filters, service.Paging(page, size), None
                )
                return found.model_dump_json()

        return run

    def detail(by_name: bool) -> Callable[[], object]:
        def run() -> object:
            with db.unit_of_work() as session:
                if by_name:
                    ref = service.Ref(filename=filenames[rng.randrange(len(filenames))])
                else:
                    ref = service.Ref(invoice_id=rng.randrange(1, 400_000))
                try:
                    invoice = service.find(session, session.get(Account, 1), "out", ref)
                    return service.detail(session, invoice, False).model_dump_json()
                except service.InvoiceNotFound:
                    return None

        return run

    print(f"\n{'in-process (service + database + JSON, no HTTP)':55} {'p50 ms':>8} {'p99 ms':>8}")
    for title, run in (
        ("list, Premium + 200 delegators, 10 days, size 10", listing(10)),
        ("list, same, size 100", listing(100)),
        ("list, same, status=Consegnata", listing(10, state=7)),
        ("list, same, documentType=TD04", listing(10, document_type="TD04")),
        ("list, same, page 10 of size 100", listing(100, page=10)),
        ("v1 list, Premium + 200 delegators, no dates", listing(10, days=None)),
        ("detail by id", detail(False)),
        ("detail by filename", detail(True)),
    ):
        for _ in range(20):
            run()
        times = []
        for _ in range(n):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        print(f"{title:55} {times[len(times) // 2]:8.1f} {times[min(n - 1, int(n * 0.99))]:8.1f}")
    with db.unit_of_work() as session:
        start = YEAR_START + timedelta(days=200)
        filters = Filters(created_from=start, created_to=start + timedelta(days=10))
        page = service.search(session, session.get(Account, 1), "out", filters, service.Paging(1, 100), None)
        times = []
        for _ in range(n):
            started = time.perf_counter()
            body = page.model_dump_json()
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        title = f"JSON encoding of one size-100 page ({len(body)} bytes)"
        print(f"{title:55} {times[n // 2]:8.2f}")
    db.dispose()


def explain(url: str) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of every statement the service runs for a list or a detail: the
    statements are captured as the repository builds them and replayed with their parameters."""
    from sqlalchemy import event

    from varco.accounts.models import Account
    from varco.core.db import Database
    from varco.search import service
    from varco.search.params import Filters

    db = Database(url)
    start = datetime(2026, 6, 1, tzinfo=UTC)
    window = {"created_from": start, "created_to": start + timedelta(days=10)}
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        filename = conn.execute(
            "SELECT filename FROM invoices WHERE account_id = 1 AND direction = 'out' LIMIT 1"
        ).fetchone()[0]

    def lister(filters: Filters, page: int, size: int) -> Callable[[Session], object]:
        paging = service.Paging(page, size)
        return lambda s: service.search(s, s.get(Account, 1), "out", filters, paging, None)

    cases: dict[str, Callable[[Session], object]] = {
        "v2 list, Premium + delegators, 10 days, size 10": lister(Filters(**window), 1, 10),
        "v2 list, documentType TD04": lister(Filters(**window, document_type="TD04"), 1, 10),
        "v2 list, page 10 of size 100": lister(Filters(**window), 10, 100),
        "v1 list, Premium + delegators, no dates": lister(Filters(), 1, 10),
        "v2 detail by filename": lambda s: service.detail(
            s, service.find(s, s.get(Account, 1), "out", service.Ref(filename=filename)), False
        ),
    }
    captured: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _many) -> None:
        captured.append((statement, parameters))

    for title, run in cases.items():
        with db.unit_of_work() as session:
            session.get(Account, 1)
            event.listen(db.engine, "before_cursor_execute", capture)
            try:
                run(session)
            finally:
                event.remove(db.engine, "before_cursor_execute", capture)
            statements = [(sql, p) for sql, p in captured if "invoice" in sql and "EXPLAIN" not in sql]
            captured.clear()
            cursor = session.connection().connection.dbapi_connection.cursor()
            for sql, parameters in statements:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", parameters)
                print(f"\n-- {title}: {' '.join(sql.split())[:160]}")
                for (line,) in cursor.fetchall():
                    print(line[:200])
    db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--keep", action="store_true", help="do not drop the database afterwards")
    parser.add_argument("--reuse", help="measure a database kept by an earlier --keep run (no load)")
    parser.add_argument("--no-gc-freeze", action="store_true", help="serve without gc.freeze() (as before)")
    args = parser.parse_args()
    from varco.core import migrate

    with bench_database(args.keep or bool(args.reuse), args.reuse) as name:
        dsn = f"postgresql://postgres@127.0.0.1:5432/{name}"
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        if not args.reuse:
            migrate.upgrade(url)
            group, others = create_accounts(url)
            seconds = load_invoices(dsn, args.invoices, group, others)
            print(f"loaded {args.invoices:,} invoices (+ bodies) with COPY in {seconds:.1f} s")
        with psycopg.connect(dsn) as conn:
            size = conn.execute("SELECT pg_size_pretty(pg_total_relation_size('invoices'))").fetchone()[0]
            rows = conn.execute("SELECT count(*) FROM invoices").fetchone()[0]
        print(f"invoices: {rows:,} rows, {size} with indexes")
        with server(url, not args.no_gc_freeze) as base, httpx.Client(timeout=60) as client:
            premium, basic = token(base, "bench-premium"), token(base, "bench-basic")
            health = latency(client, lambda i: client.build_request("GET", f"{base}/health"), args.requests)
            print(f"\n{'scenario':55} {'p50 ms':>8} {'p99 ms':>8} {'mean':>8}")
            print(f"{'GET /health (baseline)':55} {health[0]:8.1f} {health[1]:8.1f} {health[2]:8.1f}")
            results = {}
            for title, request in scenarios(client, base, premium, basic, dsn):
                p50, p99, mean = latency(client, request, args.requests)
                results[title] = (p50, p99)
                print(f"{title:55} {p50:8.1f} {p99:8.1f} {mean:8.1f}")
            sample = client.send(scenarios(client, base, premium, basic, dsn)[0][1](0)).json()
            print(f"\nsample page: totalElements={sample['totalElements']} totalPages={sample['totalPages']}")
        if not args.no_gc_freeze:
            import varco.app  # noqa: F401 - the whole app loaded, then frozen, as in the server

            gc.collect()
            gc.freeze()
        in_process(url, args.requests)
        explain(url)
        worst = max(p99 for p99 in (r[1] for r in results.values()))
        print(f"\nworst p99 {worst:.1f} ms (target < 50 ms): {'met' if worst < 50 else 'NOT met'}")
        print(json.dumps({k: {"p50": round(v[0], 1), "p99": round(v[1], 1)} for k, v in results.items()}))


if __name__ == "__main__":
    main()
