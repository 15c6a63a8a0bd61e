"""Backup and restore (docs/operations.md): `varco backup DEST` of a live embedded server under
upload load, `varco restore` into a fresh data dir, and a server started on it finds every invoice,
notification and file the backup holds, and finishes the work that was in flight. A damaged backup
is refused; `varco backup --verify` checks the stored files on SQLite and on PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from tests.conftest import BACKENDS, _postgres_database
from tests.factories import bearer, make_account, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from tests.live_server import CallbackReceiver, LiveServer, live_server
from tests.sdi.factories import invoice_file, valid_vat
from varco.cli import app as cli_app
from varco.core import migrate
from varco.core.db import Database

DEMO_VAT = "01234560017"  # demo-premium's
# Tier 0 reaches its annual limit at the first upload: the §8.4 e-mail, written to data_dir/mail
# (no SMTP server), is a file of the data dir for the backup to carry.
TIERS = {0: [60, 1], 1: [600, 10**6], 2: [3000, 10**6], 3: [6000, 10**6], 4: [12000, 10**6]}
TIERS |= {5: [18000, 10**6], 6: [30000, 10**6]}
ENV = {
    "VARCO_TIERS": json.dumps(TIERS),
    "VARCO_CALLBACK_TIMEOUT_SECONDS": "120",  # the held POSTs (below) must not time out
    "VARCO_TIER_LIMITS_ENABLED": "false",  # the uploads go as fast as they can
    "VARCO_STALE_JOB_AFTER": "1",  # the restored server's reconciler re-sends at its first minute
}


def varco(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env |= {"VARCO_DATA_DIR": str(data_dir), "VARCO_PROFILE": "demo", **ENV}
    command = [sys.executable, "-m", "varco.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Uploader(threading.Thread):
    """Uploads demo-premium's invoices one after the other until stopped; records each answer."""

    def __init__(self, server: LiveServer) -> None:
        super().__init__(daemon=True)
        self.server, self.token = server, server.sign_in()
        self.accepted: list[tuple[float, str]] = []  # (time.monotonic() of the answer, file name)
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(base_url=self.server.base, headers=bearer(self.token), timeout=60) as http:
                while not self.stop.is_set():
                    body = {"dataFile": base64.b64encode(invoice_file(supplier_vat=DEMO_VAT)).decode()}
                    answer = http.post("/services/invoice/upload", json=body)
                    assert answer.status_code == 200 and answer.json()["errorCode"] == "0000", answer.text
                    self.accepted.append((time.monotonic(), answer.json()["uploadFileName"]))
        except BaseException as exc:  # reported by the test
            self.error = exc

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 120
        while len(self.accepted) < count:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"{len(self.accepted)} uploads in 120 s"
            time.sleep(0.05)


class HoldingReceiver(CallbackReceiver):
    """A callback receiver that answers nothing until `release` is set: the server's worker threads
    wait on it, so the uploads meanwhile stay in flight (pending jobs in the backup)."""

    def __init__(self) -> None:
        self.held = 0
        super().__init__()

    def received(self, event_id: str) -> None:
        with self.lock:
            self.held += 1
        self.release.wait(120)


def read_backup(database: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """From the backup's own database: each outgoing invoice's file SHA-256, and its notifications'."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        invoices = dict(
            conn.execute(
                "SELECT i.filename, b.sha256 FROM invoices i JOIN blobs b ON b.id = i.blob_id "
                "WHERE i.direction = 'out'"
            )
        )
        notifications: dict[str, dict[str, str]] = {name: {} for name in invoices}
        for invoice, name, digest in conn.execute(
            "SELECT i.filename, n.filename, b.sha256 FROM notifications n JOIN invoices i "
            "ON i.id = n.invoice_id JOIN blobs b ON b.id = n.blob_id WHERE i.direction = 'out'"
        ):
            notifications[invoice][name] = digest
    return invoices, notifications


@dataclass
class Load:
    """What the first server was given: the mailer's upload and e-mail, demo-premium's uploads."""

    mailer: str
    mailer_invoice: str
    mail_file: Path
    before: set[str]  # answered before `varco backup` started
    every_upload: set[str]


def test_a_backup_under_load_restores_every_invoice_notification_and_file(tmp_path: Path) -> None:
    receiver = HoldingReceiver()
    try:
        load = back_up_under_load(tmp_path / "first", tmp_path / "backup", receiver)
    finally:
        receiver.close()
    invoices, notifications = check_backup(tmp_path / "backup", load)

    restored = tmp_path / "second" / "live-data"
    answer = varco(restored, "restore", str(tmp_path / "backup"))
    assert answer.returncode == 0, answer.stderr
    assert "every checksum verified" in answer.stdout
    assert f"invoices {len(invoices)}," in answer.stdout and f"{restored / 'mail'}: 1 files" in answer.stdout
    for path in [restored, *restored.rglob("*")]:
        assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path
    assert (restored / "mail" / load.mail_file.name).read_bytes() == load.mail_file.read_bytes()
    assert not list(tmp_path.joinpath("second").glob(".*restoring*"))

    with live_server(tmp_path / "second", **ENV) as server:
        check_restored(server, load, invoices, notifications)
        checked = varco(server.data_dir, "backup", "--verify")
        assert checked.returncode == 0, checked.stderr
        assert "every stored file matches" in checked.stdout


def back_up_under_load(where: Path, dest: Path, receiver: HoldingReceiver) -> Load:
    with live_server(where, **ENV) as server:
        mailer, mailer_invoice, mail_file = annual_lock_mail(server)
        # Both embedded worker threads end up waiting on callback POSTs: what is uploaded from
        # then on is in flight (accepted, not processed) when the backup is made.
        created = httpx.post(
            f"{server.base}/api/v2/callbacks", json={"url": receiver.url}, headers=bearer(server.sign_in())
        )
        assert created.status_code == 201, created.text
        uploader = Uploader(server)
        uploader.start()
        deadline = time.monotonic() + 60
        while receiver.held < 2:
            assert time.monotonic() < deadline, f"{receiver.held} POSTs held\n{server.log()[-3000:]}"
            time.sleep(0.05)
        uploader.wait_for(len(uploader.accepted) + 20)
        before = {name for _, name in uploader.accepted}
        started = time.monotonic()
        made = varco(server.data_dir, "backup", str(dest))
        finished = time.monotonic()
        assert made.returncode == 0, made.stderr
        uploader.wait_for(len(uploader.accepted) + 10)  # and the uploads go on after it
        uploader.stop.set()
        uploader.join(timeout=60)
        assert uploader.error is None, uploader.error
        during = [name for at, name in uploader.accepted if started < at < finished]
        assert during, "no upload was answered while `varco backup` ran"
        receiver.release.set()
    every_upload = {name for _, name in uploader.accepted} | {mailer_invoice}
    return Load(mailer, mailer_invoice, mail_file, before | {mailer_invoice}, every_upload)


def annual_lock_mail(server: LiveServer) -> tuple[str, str, Path]:
    """A mail file in the data dir: the annual-lock e-mail of a new tier-0 account, written to
    data_dir/mail (no SMTP server). Returns the account, its invoice and the file."""
    vat = valid_vat()
    mailer = f"mailer-{uuid.uuid4().hex[:8]}"
    created = varco(
        server.data_dir, "users", "create", mailer, "--password", "mailer-pw", "--tier", "0",
        "--vat-code", vat, "--pec", "mailer@pec.example.it",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    body = {"dataFile": base64.b64encode(invoice_file(supplier_vat=vat)).decode()}
    headers = bearer(server.sign_in(mailer, "mailer-pw"))
    answer = httpx.post(f"{server.base}/services/invoice/upload", json=body, headers=headers)
    assert answer.json()["errorCode"] == "0000", answer.text
    deadline = time.monotonic() + 60
    while not list((server.data_dir / "mail").glob("*.eml")):
        assert time.monotonic() < deadline, "no annual-lock e-mail written\n" + server.log()[-3000:]
        time.sleep(0.1)
    [mail_file] = (server.data_dir / "mail").glob("*.eml")
    return mailer, answer.json()["uploadFileName"], mail_file


def check_backup(dest: Path, load: Load) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The manifest against the backup's files and database; returns what the database holds."""
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["format"] == 1 and manifest["varco_version"] and manifest["created_at"]
    assert manifest["database"]["sha256"] == sha256((dest / "varco.sqlite3").read_bytes())
    assert manifest["schema_revision"] == list(migrate.current(f"sqlite:///{dest / 'varco.sqlite3'}"))
    assert [entry["path"] for entry in manifest["files"]] == [f"mail/{load.mail_file.name}"]
    assert manifest["files"][0]["sha256"] == sha256(load.mail_file.read_bytes())
    assert not (dest / "huey.sqlite3").exists()  # the queue is rebuilt from the job rows
    invoices, notifications = read_backup(dest / "varco.sqlite3")
    assert manifest["tables"]["invoices"] == len(invoices)
    assert manifest["pending_jobs"] >= 20  # the uploads in flight: their processing is to be done
    assert load.before <= set(invoices)  # everything answered before the backup is in it
    assert set(invoices) < load.every_upload  # a snapshot: later uploads are not
    assert sum(map(len, notifications.values())) > 0
    return invoices, notifications


def check_restored(
    server: LiveServer, load: Load, invoices: dict[str, str], notifications: dict[str, dict[str, str]]
) -> None:
    """Every invoice of the backup, with its file and notifications byte for byte; then the work
    that was in flight resumes without the queue: every invoice delivered."""
    tokens = {"demo-premium": server.sign_in(), load.mailer: server.sign_in(load.mailer, "mailer-pw")}

    def get(http: httpx.Client, path: str, name: str) -> httpx.Response:
        owner = load.mailer if name == load.mailer_invoice else "demo-premium"
        return http.get(path, params={"filename": name}, headers=bearer(tokens[owner]))

    with httpx.Client(base_url=server.base, timeout=60) as http:
        for name, digest in invoices.items():
            answer = get(http, "/api/v2/invoices-out/zip", name)
            assert answer.status_code == 200, answer.text
            with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
                files = {entry: sha256(archive.read(entry)) for entry in archive.namelist()}
            assert files[name] == digest
            # the backup's notifications (the work went on since: there may be more)
            assert notifications[name].items() <= files.items(), name
        waiting = set(invoices)
        deadline = time.monotonic() + 150  # the scheduler's first minute, and some
        while waiting:
            for name in sorted(waiting):
                if (
                    get(http, "/api/v2/invoices-out/detail", name).json()["invoices"][0]["status"]
                    == "Consegnata"
                ):
                    waiting.discard(name)
            assert time.monotonic() < deadline, f"not delivered: {waiting}\n{server.log()[-3000:]}"
            time.sleep(0.5 if waiting else 0)


@pytest.fixture
def small_backup(tmp_path: Path) -> tuple[Path, Path]:
    """A backup of a fresh installation with one mail file (made by the CLI, without a server)."""
    data_dir = tmp_path / "data"
    migrate.upgrade(f"sqlite:///{data_dir / 'varco.sqlite3'}")
    (data_dir / "mail").mkdir()
    (data_dir / "mail" / "20261123T080000Z-000001.eml").write_bytes(b"Subject: hello\n\nhello\n")
    dest = tmp_path / "backup"
    made = varco(data_dir, "backup", str(dest))
    assert made.returncode == 0, made.stderr
    return data_dir, dest


def flip_a_byte(path: Path, at: int | None = None) -> None:
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if at is None else at
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damaged", ["varco.sqlite3", "files/mail/20261123T080000Z-000001.eml"])
def test_a_damaged_backup_is_refused_and_nothing_restored(small_backup, tmp_path: Path, damaged: str) -> None:
    _, dest = small_backup
    flip_a_byte(dest / damaged)
    target = tmp_path / "restored"
    refused = varco(target, "restore", str(dest))
    assert refused.returncode == 2
    assert "does not match the manifest" in refused.stderr and "nothing was restored" in refused.stderr
    assert damaged.removeprefix("files/") in refused.stderr
    assert not target.exists() and not list(tmp_path.glob(".*restoring*"))


def test_backup_and_restore_refuse_what_is_not_empty(small_backup, tmp_path: Path) -> None:
    data_dir, dest = small_backup
    again = varco(data_dir, "backup", str(dest))
    assert again.returncode == 2 and "is not an empty directory" in again.stderr
    inside = varco(data_dir, "backup", str(data_dir / "backups"))
    assert inside.returncode == 2 and "inside the data directory" in inside.stderr
    onto = varco(data_dir, "restore", str(dest))  # the live data dir: never overwritten
    assert onto.returncode == 2 and "is not an empty directory" in onto.stderr
    assert varco(tmp_path / "x", "restore", str(tmp_path)).stderr.count("has no manifest.json") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    restored = varco(empty, "restore", str(dest))  # an empty directory is fine
    assert restored.returncode == 0, restored.stderr
    assert (empty / "mail" / "20261123T080000Z-000001.eml").read_bytes() == b"Subject: hello\n\nhello\n"


def _rewrite_manifest(dest: Path, change) -> None:
    manifest = json.loads((dest / "manifest.json").read_text())
    change(manifest)
    (dest / "manifest.json").write_text(json.dumps(manifest))


def _matching(manifest: dict, entry: dict, data: bytes) -> None:
    entry["size"], entry["sha256"] = len(data), sha256(data)


MAIL = "files/mail/20261123T080000Z-000001.eml"


def _link_database_to(target: str):
    def tamper(dest: Path, tmp_path: Path) -> None:
        (dest / "varco.sqlite3").unlink()
        (dest / "varco.sqlite3").symlink_to(target)

    return tamper


def _fifo_database(dest: Path, tmp_path: Path) -> None:
    (dest / "varco.sqlite3").unlink()
    os.mkfifo(dest / "varco.sqlite3")


def _mail_linked_outside(dest: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"a file of the machine, not of the backup")
    (dest / MAIL).unlink()
    (dest / MAIL).symlink_to(outside)
    _rewrite_manifest(dest, lambda m: _matching(m, m["files"][0], outside.read_bytes()))


def _mail_grown(dest: Path, tmp_path: Path) -> None:
    with (dest / MAIL).open("ab") as mail:
        mail.write(b"x" * 3_000_000)


def _mail_linked_inside(dest: Path, tmp_path: Path) -> None:
    """A link that stays inside the backup is refused too: every file of a backup is a file."""
    (dest / MAIL).unlink()
    (dest / MAIL).symlink_to(dest / "manifest.json")
    _rewrite_manifest(dest, lambda m: _matching(m, m["files"][0], b""))


def _files_folder_linked_outside(dest: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(dest / "files", elsewhere)
    shutil.rmtree(dest / "files")
    (dest / "files").symlink_to(elsewhere)


def _not_a_database(dest: Path, tmp_path: Path) -> None:
    garbage = b"not a database"
    (dest / "varco.sqlite3").write_bytes(garbage)
    _rewrite_manifest(dest, lambda m: _matching(m, m["database"], garbage))


def _truncated_database(dest: Path, tmp_path: Path) -> None:
    data = (dest / "varco.sqlite3").read_bytes()[:8192]
    (dest / "varco.sqlite3").write_bytes(data)
    _rewrite_manifest(dest, lambda m: _matching(m, m["database"], data))


def _file_and_folder_of_one_name(dest: Path, tmp_path: Path) -> None:
    (dest / "files" / "a").mkdir()
    (dest / "files" / "a" / "b").write_bytes(b"b")
    (dest / "files" / "x").write_bytes(b"x")

    def change(manifest: dict) -> None:
        manifest["files"] += [
            {"path": "a", "size": 1, "sha256": sha256(b"x")},
            {"path": "a/b", "size": 1, "sha256": sha256(b"b")},
        ]

    _rewrite_manifest(dest, change)


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (_link_database_to("/dev/zero"), "leads out of the backup"),  # would fill the disk
        (_fifo_database, "is not a regular file"),  # would hang
        (_mail_linked_outside, "leads out of the backup"),
        (_mail_linked_inside, "cannot be read from the backup"),
        (_files_folder_linked_outside, "leads out of the backup"),
        (_not_a_database, "is not a usable SQLite database"),
        (_truncated_database, "SQLite"),
        (_file_and_folder_of_one_name, "cannot be restored"),
        (lambda dest, _: _rewrite_manifest(dest, lambda m: m.pop("created_at")), "is damaged: 'created_at'"),
        (lambda dest, _: _rewrite_manifest(dest, lambda m: m["files"][0].update(path="a\0b")), "is damaged"),
        (lambda dest, _: _rewrite_manifest(dest, lambda m: m["files"][0].update(size=-2)), "is damaged"),
        (_mail_grown, "does not match the manifest"),  # read no further than the manifest says
    ],
)
def test_a_tampered_backup_is_refused_in_one_line_and_nothing_restored(
    small_backup, tmp_path: Path, tamper, says: str
) -> None:
    """The manifest's checksums find damage, not tampering: restore reads only regular files inside
    the backup, no more than the manifest's size, and checks the database before using it."""
    _, dest = small_backup
    tamper(dest, tmp_path)
    target = tmp_path / "restored"
    refused = varco(target, "restore", str(dest))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert says in refused.stderr and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1  # one line
    assert not target.exists() and not list(tmp_path.glob(".*restoring*"))


def test_restore_into_a_path_with_uri_characters(small_backup, tmp_path: Path) -> None:
    """The database check opens the staged copy by its URI: a `#` in the path is escaped."""
    _, dest = small_backup
    target = tmp_path / "odd#dir" / "data"
    restored = varco(target, "restore", str(dest))
    assert restored.returncode == 0, restored.stderr
    assert sorted(p.name for p in target.iterdir()) == ["mail", "varco.sqlite3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["backup", "data", "odd#dir"])


def test_backup_into_an_unwritable_place_says_so_in_one_line(small_backup, tmp_path: Path) -> None:
    data_dir, _ = small_backup
    refused = varco(data_dir, "backup", "/proc/self/backup")
    assert refused.returncode == 2 and refused.stderr.startswith("error: the backup could not be written")


# `varco backup --verify` on both databases, each test its own (fresh) database.
@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp_path / 'verify.sqlite3'}"])
    else:
        urls = _postgres_database(f"varco_verify_{uuid.uuid4().hex[:12]}")
    url = next(urls)
    migrate.upgrade(url)
    db = Database(url)
    yield db
    db.dispose()
    next(urls, None)


def test_verify_names_a_tampered_file_and_a_missing_one(client, queue, db, configure) -> None:
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    names = []
    for _ in range(2):
        answer = client.post(
            "/services/invoice/upload", json={"dataFile": b64(invoice_xml())}, headers=bearer(token)
        )
        assert answer.json()["errorCode"] == "0000", answer.text
        names.append(answer.json()["uploadFileName"])
    queue.drain()  # processed: notifications stored too
    configure(database_url=db.url)
    runner = CliRunner()
    passed = runner.invoke(cli_app, ["backup", "--verify"])
    assert passed.exit_code == 0, passed.output
    assert "every stored file matches" in passed.output

    engine = create_engine(db.url)
    try:
        with engine.begin() as conn:
            blob_id, content = conn.execute(
                text(
                    "SELECT b.id, b.content FROM invoices i JOIN blobs b ON b.id = i.blob_id "
                    "WHERE i.filename = :n"
                ),
                {"n": names[0]},
            ).one()
            tampered = bytearray(content)
            tampered[len(tampered) // 2] ^= 0x01
            conn.execute(
                text("UPDATE blobs SET content = :c WHERE id = :id"), {"c": bytes(tampered), "id": blob_id}
            )
        failed = runner.invoke(cli_app, ["backup", "--verify"])
        assert failed.exit_code == 1
        assert f"stored file {blob_id} ({names[0]}): SHA-256 {sha256(bytes(tampered))}" in failed.output
        assert "1 problems" in failed.output

        with engine.begin() as conn:  # a file that went missing under a row naming it
            if db.engine.dialect.name == "postgresql":  # (a plain SQLite connection checks no FK)
                conn.execute(text("SET LOCAL session_replication_role = replica"))  # no FK triggers
            notification_blob = conn.execute(
                text(
                    "SELECT n.blob_id FROM notifications n JOIN invoices i ON i.id = n.invoice_id "
                    "WHERE i.filename = :n ORDER BY n.id LIMIT 1"
                ),
                {"n": names[1]},
            ).scalar_one()
            conn.execute(text("DELETE FROM blobs WHERE id = :id"), {"id": notification_blob})
        failed = runner.invoke(cli_app, ["backup", "--verify"])
        assert failed.exit_code == 1
        assert "notifications.blob_id: 1 rows name a missing stored file" in failed.output
        assert "2 problems" in failed.output
    finally:
        engine.dispose()


def test_backup_dest_and_restore_refuse_postgresql(configure, tmp_path: Path) -> None:
    configure(database_url="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    runner = CliRunner()
    for args in (["backup", str(tmp_path / "b")], ["restore", str(tmp_path)]):
        refused = runner.invoke(cli_app, args)
        assert refused.exit_code == 2 and "pg_dump" in refused.output, refused.output
    both = runner.invoke(cli_app, ["backup", str(tmp_path / "b"), "--verify"])
    assert both.exit_code == 2 and "give DEST to make a backup, or --verify" in both.output
