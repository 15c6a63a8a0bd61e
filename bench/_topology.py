"""Shared by the benches that run what ships: real `varco` processes, typical invoices uploaded
over HTTP from client threads, and the database read to see how far they got."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import httpx
import redis
from _server import free_port
from lxml import etree
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "sdi" / "fixtures" / "FPR12.xml"
VARCO = [sys.executable, "-m", "varco.cli"]
TRANSMITTER = "IT05555550028"  # varco's default VARCO_TRANSMITTER_ID
SUPPLIER_VAT = "01234560017"  # demo-premium
CUSTOMER_VAT = "01114601006"  # a valid VAT number of no account: the invoice leaves varco
CONSEGNATA = 7
POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"
REDIS_URL = "redis://127.0.0.1:6379/0"


def invoice(number: str) -> bytes:
    """The FPR12 sample (about 5.7 KB, every check passes), numbered `number`, from demo-premium to
    a customer no intermediary serves."""
    root = etree.fromstring(SAMPLE.read_bytes())
    for element in root.iter("Numero"):
        if element.getparent().tag == "DatiGeneraliDocumento":
            element.text = number
    supplier = root.find(".//CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdCodice")
    supplier.text = SUPPLIER_VAT
    next(root.iter("IdTrasmittente")).find("IdCodice").text = TRANSMITTER[2:]
    next(root.iter("CodiceDestinatario")).text = "XYZ1234"
    buyer = root.find(".//CessionarioCommittente/DatiAnagrafici")  # the sample's is demo-basic's VAT
    buyer.find("IdFiscaleIVA/IdCodice").text = buyer.find("CodiceFiscale").text = CUSTOMER_VAT
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def env_for(data_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    # The §8 limits are off explicitly: demo-premium is tier 1 (600 requests an hour), which a
    # bench's few hundred uploads per run, several runs in a row, would reach.
    env.update(
        VARCO_DATA_DIR=str(data_dir),
        VARCO_IP_LIMITS_ENABLED="false",
        VARCO_TIER_LIMITS_ENABLED="false",
        VARCO_DEFAULT_TIER="6",
    )
    env.update({f"VARCO_{k.upper()}": v for k, v in settings.items()})
    return env


@contextmanager
def process(
    args: list[str], env: dict[str, str], log: Path, ready_url: str | None = None, **tls: object
) -> Iterator[int]:
    """A `varco` process, until the block ends; with `ready_url`, started when that answers."""
    with log.open("w") as out:
        proc = subprocess.Popen([*VARCO, *args], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while ready_url is not None:
            if proc.poll() is not None:
                raise SystemExit(f"{args[0]} exited:\n{log.read_text()[-3000:]}")
            try:
                httpx.get(ready_url, timeout=2, **tls)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{args[0]} did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.1)
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def api(stack: ExitStack, env: dict[str, str], log: Path, *extra: str) -> tuple[str, int]:
    """`varco serve` on a free port until `stack` closes: its base URL and pid."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    pid = stack.enter_context(process(["serve", "--port", str(port), *extra], env, log, f"{base}/health"))
    return base, pid


class Postgres:
    """A database of its own for each topology run (127.0.0.1:5432, trust), dropped by `drop`."""

    def __init__(self) -> None:
        self.admin = create_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
        self.names: list[str] = []

    def new(self) -> str:
        name = f"varco_bench_{uuid.uuid4().hex[:8]}"
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        self.names.append(name)
        return f"{POSTGRES}/{name}"

    def drop(self) -> None:
        with self.admin.connect() as conn:
            for name in self.names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.admin.dispose()


def production_env(work: Path, database_url: str, queue: str) -> dict[str, str]:
    """PostgreSQL + Redis, with a queue name and limit keys of this run."""
    return env_for(
        work,
        database_url=database_url,
        redis_url=REDIS_URL,
        queue_name=queue,
        limits_key_prefix=f"{queue}:limits:",
    )


def drop_queue(queue: str) -> None:
    """Delete the Redis keys of a run's queue name (wake-ups, limits)."""
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"*{queue}*"):
        client.delete(key)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@cache
def _engine(database_url: str):  # noqa: ANN202 - one per database for the polls of a run
    return create_engine(database_url, pool_size=1)


def delivered(database_url: str) -> int:
    """Sent invoices in 7 Consegnata (the RC recorded)."""
    with _engine(database_url).connect() as conn:
        query = text("SELECT count(*) FROM invoices WHERE direction = 'out' AND state = :state")
        return conn.execute(query, {"state": CONSEGNATA}).scalar() or 0


def sealed(database_url: str) -> int:
    """Preservation packages made (one per invoice sealed)."""
    with _engine(database_url).connect() as conn:
        return conn.execute(text("SELECT count(*) FROM preservation_packages")).scalar() or 0


def wait_delivered(database_url: str, count: int, label: str, limit_seconds: float = 900) -> float:
    """Wait until `count` invoices are Consegnata; returns the steady drain rate (invoices/s from
    the first one seen Consegnata to the last), which leaves a starting process's import time out."""
    deadline = time.monotonic() + limit_seconds
    first: tuple[float, int] | None = None
    while (done := delivered(database_url)) < count:
        if first is None and done > 0:
            first = (time.perf_counter(), done)
        if time.monotonic() > deadline:
            raise SystemExit(
                f"{label}: only {done} of {count} invoices Consegnata after {limit_seconds:.0f} s"
            )
        time.sleep(0.05)
    if first is None:
        return float("inf")
    return (count - first[1]) / max(time.perf_counter() - first[0], 1e-6)


def until_next_minute() -> float:
    """Seconds to the wall clock's next minute, when the servers' periodic work runs."""
    return 60 - time.time() % 60  # noqa: TID251 - the servers tick on the wall clock's minute


def clear_of_periodic_work(seconds: float) -> None:
    """Wait, if need be, so that the next `seconds` hold no minute boundary. The workers' periodic
    work (sealing, the reconciler...) runs once a minute, on the minute (core/scheduler.py): it
    would fall in one short timed window and not in the next, though every topology does the same
    amount of it, once a minute (sealing alone is ~1.5 ms of CPU per invoice sealed: bench/sealing.py)."""
    left = until_next_minute()
    if left < seconds:
        time.sleep(left + 3)  # past the minute's tick and its work


def health_rate(base: str, count: int, threads: int) -> float:
    """GET /health `count` times from `threads` keep-alive clients: requests per second."""
    left = [count]
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            while True:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                assert http.get("/health").status_code == 200

    return count / _in_threads(client, [()] * threads)


def sign_in(base: str) -> str:
    """demo-premium's access token (argon2: ~0.15 s of the server's CPU)."""
    return httpx.post(
        f"{base}/auth/signin",
        data={"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"},
        timeout=30,
    ).json()["access_token"]


@dataclass
class Uploads:
    """What the clients will send, ready before any timed window: a token and the request bodies
    (signing in and building hundreds of invoices would otherwise count as the server's time)."""

    token: str
    bodies: list[str]


def prepare(base: str, count: int) -> Uploads:
    """`count` distinct typical invoices as upload bodies, and a token to send them with."""
    bodies = [
        json.dumps({"dataFile": base64.b64encode(invoice(f"S{uuid.uuid4().int % 10**9}")).decode()})
        for _ in range(count)
    ]
    return Uploads(sign_in(base), bodies)


def upload_all(bases: list[str], count: int, threads: int, uploads: Uploads | None = None) -> float:
    """Upload `count` typical invoices (`uploads`, or prepared now) from `threads` clients spread
    over the API processes; returns the seconds the sending took."""
    uploads = uploads or prepare(bases[0], count)
    token, bodies = uploads.token, list(uploads.bodies)
    lock = threading.Lock()

    def client(base: str) -> None:
        with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
            while True:
                with lock:
                    if not bodies:
                        return
                    body = bodies.pop()
                answer = http.post(
                    f"{base}/services/invoice/upload",
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                assert answer.json()["errorCode"] == "0000", answer.text

    return _in_threads(client, [(bases[n % len(bases)],) for n in range(threads)])


def _in_threads(target: Callable[..., None], args: list[tuple[object, ...]]) -> float:
    """Run `target` once per argument tuple, each in a thread of its own: the seconds until all end."""
    start = time.perf_counter()
    threads = [threading.Thread(target=target, args=a) for a in args]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start
