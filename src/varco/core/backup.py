"""Backup and restore of the embedded default (docs/operations.md, Backup and restore; the check
of stored files, `varco backup --verify`, is core/file_check.py).

An embedded installation (VARCO_DATA_DIR) holds `varco.sqlite3`, the database, with every stored
file in it (`blobs` rows: invoices, notifications, packages...); `huey.sqlite3`, the queue of
wake-ups; and `mail/`, the outbox folder when there is no SMTP server. A backup is a directory:

    manifest.json   varco version, schema revision, created_at; the size and SHA-256 of the
                    database and of each file; rows per table and pending jobs
    varco.sqlite3   the database, by SQLite's online backup in one step: one read transaction,
                    a consistent snapshot while the server writes (WAL: writers do not wait)
    files/...       the data dir's other files (mail/*.eml), copied after the database, so every
                    file the copied database names is there

The queue is not copied: jobs are rows of the database (core/jobs.py); in the restored
installation the reconciler sends the wake-ups of the pending ones once they are
VARCO_STALE_JOB_AFTER old. The manifest is written last: a backup without one is unfinished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy.engine import make_url

from varco import __version__
from varco.core import migrate
from varco.settings import Settings

FORMAT = 1
MANIFEST = "manifest.json"
DATABASE = "varco.sqlite3"
FILES = "files"
_CHUNK = 1024 * 1024


class BackupError(Exception):
    """Why a backup or a restore cannot be made, in one line for the CLI."""


@dataclass(frozen=True)
class Installation:
    """Where an embedded installation keeps its data."""

    data_dir: Path
    database: Path

    @classmethod
    def of(cls, settings: Settings) -> Installation:
        url = make_url(settings.resolved_database_url)
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            raise BackupError(
                "backup DEST and restore are for the embedded default (SQLite): on PostgreSQL use "
                "pg_dump, then `varco backup --verify` (docs/operations.md, Backup and restore)"
            )
        return cls(settings.data_dir.resolve(), Path(str(url.database)).resolve())

    def copied(self, path: Path) -> bool:
        """Whether a file of the data dir goes into a backup as a file: not the database (copied
        its own way), its journals and lock, the queue, nor a mail message being written."""
        if path.parent == self.database.parent and path.name.startswith(self.database.name):
            return False
        if path.parent == self.data_dir and path.name.startswith("huey.sqlite3"):
            return False
        return path.suffix != ".part"


def backup(installation: Installation, dest: Path, now: datetime) -> dict[str, Any]:
    """Copy the installation to `dest` (new or empty) while it runs; returns the manifest."""
    dest = dest.resolve()
    if dest == installation.data_dir or installation.data_dir in dest.parents:
        raise BackupError(f"{dest} is inside the data directory {installation.data_dir}: back up elsewhere")
    if not installation.database.is_file():
        raise BackupError(f"no database at {installation.database}: nothing to back up")
    _refuse_non_empty(dest, "the backup goes into a new or empty directory")
    _make_dirs(dest)
    os.chmod(dest, 0o700)
    try:
        facts = _copy_database(installation.database, dest / DATABASE)
        files = list(_copy_files(installation, dest / FILES))
    except BaseException:  # disk full, interrupted...: no half backup left behind
        for child in dest.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
        raise
    size, sha256 = _digest(dest / DATABASE)
    manifest = {
        "format": FORMAT,
        "varco_version": __version__,
        "created_at": now.isoformat(),
        "schema_revision": facts["revision"],
        "database": {"path": DATABASE, "size": size, "sha256": sha256},
        "tables": facts["tables"],
        "pending_jobs": facts["pending_jobs"],
        "files": files,
    }
    _write(dest / MANIFEST, json.dumps(manifest, indent=2).encode() + b"\n")
    return manifest


def restore(src: Path, installation: Installation) -> dict[str, Any]:
    """Put the backup at `src` into the installation's (empty) data dir; returns its manifest.
    Everything is copied beside the data dir and checked against the manifest first: a damaged
    backup is refused and leaves nothing behind."""
    manifest = read_manifest(src)
    _refuse_unknown_schema(manifest)
    data_dir, database = installation.data_dir, installation.database
    _refuse_non_empty(data_dir, "restore goes into a new or empty data directory (move the old one aside)")
    inside = data_dir in database.parents
    if not inside and database.exists():
        raise BackupError(f"{database} exists: restore does not overwrite a database")
    staging = data_dir.parent / f".{data_dir.name}.restoring"
    database_copy = staging / database.relative_to(data_dir) if inside else Path(f"{database}.restoring")
    shutil.rmtree(staging, ignore_errors=True)  # what an interrupted restore left
    database_copy.unlink(missing_ok=True)
    try:
        _make_dirs(staging)
        root = src.resolve()
        _restore_file(root, root / DATABASE, database_copy, manifest["database"])
        _check_database(database_copy)
        for entry in manifest["files"]:
            _restore_file(root, root / FILES / entry["path"], staging / entry["path"], entry)
    except OSError as exc:  # e.g. entries `a` and `a/b`: one of them cannot be a file
        shutil.rmtree(staging, ignore_errors=True)
        database_copy.unlink(missing_ok=True)
        raise BackupError(f"the backup cannot be restored: {exc}; nothing was restored") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        database_copy.unlink(missing_ok=True)
        raise
    if data_dir.exists():
        data_dir.rmdir()  # empty, checked above
    os.rename(staging, data_dir)
    if not inside:
        _make_dirs(database.parent)
        os.rename(database_copy, database)
    return manifest


def read_manifest(src: Path) -> dict[str, Any]:
    """The backup's manifest, its entries checked for shape (paths stay inside the backup)."""
    path = src / MANIFEST
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise BackupError(f"{src} has no {MANIFEST}: not a varco backup, or an unfinished one") from None
    except (OSError, ValueError) as exc:
        raise BackupError(f"{path} cannot be read: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{path} is not a varco backup manifest of format {FORMAT}")
    try:
        if not all(isinstance(revision, str) for revision in manifest["schema_revision"]):
            raise ValueError("schema_revision")
        for field, kind in (
            ("created_at", str),
            ("varco_version", str),
            ("tables", dict),
            ("pending_jobs", int),
        ):
            if not isinstance(manifest[field], kind):
                raise ValueError(field)
        for entry in [manifest["database"], *manifest["files"]]:
            parts = PurePosixPath(entry["path"]).parts
            if not parts or parts[0] == "/" or ".." in parts or "\0" in entry["path"]:
                raise ValueError(f"path {entry['path']!r}")
            if type(entry["size"]) is not int or entry["size"] < 0 or len(entry["sha256"]) != 64:
                raise ValueError(f"size or sha256 of {entry['path']!r}")
    except (KeyError, TypeError, ValueError) as exc:
        raise BackupError(f"{path} is damaged: {exc}") from None
    return manifest


def _refuse_unknown_schema(manifest: dict[str, Any]) -> None:
    script = ScriptDirectory.from_config(migrate.alembic_config("sqlite://"))
    for revision in manifest.get("schema_revision") or []:
        try:
            script.get_revision(revision)
        except CommandError:
            raise BackupError(
                f"the backup is at schema revision {revision}, which this varco does not have: restore it "
                f"with varco {manifest.get('varco_version')} or newer"
            ) from None


def _copy_database(source: Path, target: Path) -> dict[str, Any]:
    """SQLite's online backup, then what the manifest says of the copy."""
    with closing(sqlite3.connect(source, timeout=30)) as live, closing(_connect_new(target)) as copy:
        # pages=-1: the whole database in one step, i.e. one read transaction of a consistent
        # snapshot. In steps, every write of the server in between would restart the copy.
        live.backup(copy, pages=-1)
        copy.execute("PRAGMA journal_mode=DELETE")  # one file, which reading it later leaves unchanged
        checked = copy.execute("PRAGMA quick_check").fetchall()
        if checked != [("ok",)]:
            raise BackupError(f"the copy of {source} fails SQLite's check: {checked[:3]}")
        listed = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
        names = [row[0] for row in copy.execute(listed)]
        tables = {name: copy.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}
        revision = []
        if "alembic_version" in tables:
            revision = sorted(row[0] for row in copy.execute("SELECT version_num FROM alembic_version"))
        pending = 0
        if "jobs" in tables:
            pending = copy.execute("SELECT count(*) FROM jobs WHERE status = 'pending'").fetchone()[0]
    _fsync(target)
    return {"revision": revision, "tables": tables, "pending_jobs": pending}


def _copy_files(installation: Installation, target: Path) -> Iterator[dict[str, Any]]:
    for path in _files(installation):
        relative = path.relative_to(installation.data_dir).as_posix()
        try:
            size, sha256 = _copy(path, target / relative)
        except FileNotFoundError:  # removed since the listing
            continue
        yield {"path": relative, "size": size, "sha256": sha256}


def _connect_new(path: Path) -> sqlite3.Connection:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.chmod(path, 0o600)
    return sqlite3.connect(path)


def _files(installation: Installation) -> Iterator[Path]:
    for folder, dirs, names in os.walk(installation.data_dir):  # symbolic links not followed
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink() and installation.copied(path):
                yield path


def _restore_file(root: Path, source: Path, target: Path, entry: dict[str, Any]) -> None:
    """Copy one file of the backup at `root`: a regular file inside it (no link out of it, no
    device or pipe), read no further than one byte past the manifest's size."""
    name = entry["path"]
    try:
        if root not in source.resolve().parents:
            raise BackupError(f"{name} leads out of the backup (a symbolic link): nothing was restored")
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise BackupError(f"{name} is missing from the backup: nothing was restored") from None
    except OSError as exc:  # ELOOP: the file itself is a symbolic link
        raise BackupError(
            f"{name} cannot be read from the backup ({exc.strerror}): nothing was restored"
        ) from None
    with os.fdopen(fd, "rb") as reader:
        status = os.fstat(reader.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise BackupError(f"{name} is not a regular file in the backup: nothing was restored")
        if not _opened_inside(root, reader.fileno()):  # a folder swapped for a link since the check
            raise BackupError(f"{name} leads out of the backup (a symbolic link): nothing was restored")
        if status.st_size != entry["size"]:
            raise BackupError(
                f"{name} does not match the manifest ({status.st_size} bytes; the manifest says "
                f"{entry['size']} bytes): the backup is damaged, nothing was restored"
            )
        try:
            size, sha256 = _copy_from(reader, target, limit=entry["size"] + 1)
        except FileExistsError:
            raise BackupError(f"{name} is twice in the manifest: the backup is damaged") from None
    if (size, sha256) != (entry["size"], entry["sha256"]):
        raise BackupError(
            f"{name} does not match the manifest ({size} bytes, SHA-256 {sha256}; the manifest says "
            f"{entry['size']} bytes, {entry['sha256']}): the backup is damaged, nothing was restored"
        )


def _opened_inside(root: Path, fd: int) -> bool:
    """Is the file open as `fd` inside `root`? (Linux names it in /proc; elsewhere the check made
    before opening stands alone.)"""
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return True
    return root in opened.parents


def _copy(source: Path, target: Path) -> tuple[int, str]:
    """Copy a file, owner-only, returning its size and SHA-256 as read."""
    with source.open("rb") as reader:
        return _copy_from(reader, target)


def _copy_from(reader: BinaryIO, target: Path, limit: int | None = None) -> tuple[int, str]:
    """Copy what `reader` holds (at most `limit` bytes) into a new owner-only file; its size and SHA-256."""
    digest, size = hashlib.sha256(), 0
    _make_dirs(target.parent)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "wb") as writer:
        while chunk := reader.read(_CHUNK if limit is None else min(_CHUNK, limit - size)):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
        writer.flush()
        os.fsync(writer.fileno())
    return size, digest.hexdigest()


def _check_database(path: Path) -> None:
    """The manifest's checksum proves the copy is the file the backup holds, not that the file is a
    database (a manifest can be rewritten): SQLite's own check, before it is put in place."""
    try:
        # as_uri: a `#` or `?` in the path would otherwise name another file; immutable: no -wal or
        # -shm files left beside the copy
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)) as copy:
            checked = copy.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise BackupError(
            f"the backup's database is not a usable SQLite database ({exc}): nothing was restored"
        ) from None
    if checked != [("ok",)]:
        raise BackupError(f"the backup's database fails SQLite's check ({checked[:3]}): nothing was restored")


def _digest(path: Path) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as reader:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _write(path: Path, data: bytes) -> None:
    """Write a whole file at once: under a temporary name, then renamed."""
    partial = path.with_name(path.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as writer:
        writer.write(data)
        writer.flush()
        os.fsync(writer.fileno())
    os.replace(partial, path)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _refuse_non_empty(path: Path, why: str) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise BackupError(f"{path} is not an empty directory: {why}")


def _make_dirs(path: Path) -> None:
    """Create `path` and its missing parents owner-only (0700), whatever the umask."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)
