"""The package file: a deterministic ZIP of the invoice, its notifications and `index.json`."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

INDEX_NAME = "index.json"
FORMAT = "varco-pdd/1"


@dataclass(frozen=True)
class PackedFile:
    name: str
    content: bytes
    role: str  # invoice | notification
    type: str | None = None  # notification type (RC, NS, ...)


@dataclass(frozen=True)
class PackageSpec:
    sequence: int
    version: int
    sealed_at: datetime
    previous_sha256: str | None
    subject: dict[str, Any]  # the invoice and its taxpayer, as the index records them
    files: list[PackedFile] = field(default_factory=list)


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def index_of(spec: PackageSpec) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "sequence": spec.sequence,
        "version": spec.version,
        "sealedAt": spec.sealed_at.isoformat(timespec="milliseconds"),
        **spec.subject,
        "files": [
            {
                "name": f.name,
                "role": f.role,
                "type": f.type,
                "size": len(f.content),
                "sha256": sha256(f.content),
            }
            for f in spec.files
        ],
        # The chain: SHA-256 of the whole previous package ZIP of the same account (null for the first).
        "previousPackageSha256": spec.previous_sha256,
    }


def build(spec: PackageSpec) -> bytes:
    """The ZIP bytes; the same spec always gives the same bytes (fixed timestamps and order)."""
    stamp = spec.sealed_at.timetuple()[:6]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        entries = [(f.name, f.content) for f in spec.files]
        index = json.dumps(index_of(spec), indent=2, ensure_ascii=False).encode()
        for name, content in [*entries, (INDEX_NAME, index)]:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def read_index(content: bytes) -> dict[str, Any]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return json.loads(archive.read(INDEX_NAME))


def check_files(content: bytes) -> list[str]:
    """Problems found inside one package: files whose SHA-256 differs from the index, or missing."""
    problems = []
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        index = json.loads(archive.read(INDEX_NAME))
        names = set(archive.namelist())
        for entry in index["files"]:
            if entry["name"] not in names:
                problems.append(f"{entry['name']}: missing")
            elif sha256(archive.read(entry["name"])) != entry["sha256"]:
                problems.append(f"{entry['name']}: SHA-256 differs from the index")
    return problems
