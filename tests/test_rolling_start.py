"""A rolling start on the production topology: two `varco serve` and two `varco worker` started at
the same moment on PostgreSQL + Redis, on an empty database and on one with a migration pending.
Each process migrates (one at a time: core/migrate.py) and seeds the demo accounts (the same
lock); all four must run, and an upload must be carried to the SDI by the workers."""

from __future__ import annotations

import base64
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis
from alembic.script import ScriptDirectory

from tests.conftest import _postgres_database
from tests.live_server import free_port
from tests.sdi.factories import invoice_file
from varco.core import migrate

REDIS_URL = "redis://127.0.0.1:6379/0"
DEMO_VAT = "01234560017"  # demo-premium


def previous_revision() -> str:
    script = ScriptDirectory.from_config(migrate.alembic_config("sqlite://"))
    head = script.get_revision(script.get_current_head())
    assert isinstance(head.down_revision, str)
    return head.down_revision


@pytest.mark.parametrize("schema", ["empty", "pending"])
def test_four_processes_started_at_once_all_run(tmp_path: Path, schema: str) -> None:
    urls = _postgres_database(f"varco_rolling_{uuid.uuid4().hex[:8]}")
    url = next(urls)
    queue = f"varco-rolling-{uuid.uuid4().hex[:8]}"
    procs: list[tuple[subprocess.Popen, Path]] = []
    try:
        if schema == "pending":
            migrate.upgrade(url, previous_revision())
        env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
        env.update(
            VARCO_DATA_DIR=str(tmp_path / "data"),
            VARCO_DATABASE_URL=url,
            VARCO_REDIS_URL=REDIS_URL,
            VARCO_QUEUE_NAME=queue,
            VARCO_LIMITS_KEY_PREFIX=f"{queue}:limits:",
            VARCO_IP_LIMITS_ENABLED="false",
            VARCO_DEFAULT_TIER="6",
        )
        ports = [free_port(), free_port()]
        commands = [["serve", "--port", str(port)] for port in ports] + [["worker"], ["worker"]]
        for n, args in enumerate(commands):
            log = tmp_path / f"{args[0]}-{n}.log"
            with log.open("w") as out:
                procs.append(
                    (
                        subprocess.Popen(
                            [sys.executable, "-m", "varco.cli", *args], env=env, stdout=out, stderr=out
                        ),
                        log,
                    )
                )

        def logs() -> str:
            return "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for _, log in procs)

        def healthy(port: int) -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        deadline = time.monotonic() + 120
        while not all(healthy(port) for port in ports):
            assert all(p.poll() is None for p, _ in procs), f"a process died:\n{logs()}"
            assert time.monotonic() < deadline, f"not up in 120 s:\n{logs()}"
            time.sleep(0.2)
        assert migrate.current(url) == (
            ScriptDirectory.from_config(migrate.alembic_config(url)).get_current_head(),
        )

        # The workers run: an upload on one API process reaches the (simulated) SDI.
        base = f"http://127.0.0.1:{ports[1]}"
        token = httpx.post(
            f"{base}/auth/signin",
            data={"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"},
            timeout=30,
        ).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        content = invoice_file(supplier_vat=DEMO_VAT)
        upload = httpx.post(
            f"{base}/services/invoice/upload",
            json={"dataFile": base64.b64encode(content).decode()},
            headers=headers,
            timeout=30,
        )
        assert upload.json()["errorCode"] == "0000", upload.text
        name = upload.json()["uploadFileName"]

        def status() -> list[str]:
            answer = httpx.get(
                f"http://127.0.0.1:{ports[0]}/api/v2/invoices-out/detail",
                params={"filename": name},
                headers=headers,
            )
            return [line["status"] for line in answer.json().get("invoices", [])]

        while status() != ["Consegnata"]:
            assert time.monotonic() < deadline + 60, f"not delivered: {status()}\n{logs()}"
            time.sleep(0.2)
        assert all(p.poll() is None for p, _ in procs), f"a process died:\n{logs()}"
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
        next(urls, None)


def test_a_schema_newer_than_the_code_is_refused_untouched(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env["VARCO_DATA_DIR"] = str(tmp_path)
    upgrade = [sys.executable, "-m", "varco.cli", "db", "upgrade"]
    assert subprocess.run(upgrade, env=env, capture_output=True, timeout=120).returncode == 0
    with sqlite3.connect(tmp_path / "varco.sqlite3") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    refused = subprocess.run(upgrade, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert "schema revision 9999_from_the_future, which this varco does not have" in refused.stderr
    with sqlite3.connect(tmp_path / "varco.sqlite3") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            ("9999_from_the_future",)
        ]
