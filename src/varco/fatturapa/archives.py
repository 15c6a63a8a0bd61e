"""ZIP archives from untrusted senders, read within hard limits (a communication's ZIP, §2.7).

No size in a local or central header bounds the work: entries are inflated at most `CHUNK` bytes
at a time and the bytes produced are counted. Each entry is held to the size its central header
declares, and declared sizes to the limits, so inflation stops one chunk past a lie (a 1 GiB entry
that claims 1,000 bytes costs one chunk) and never passes a limit. Names must be safe relative
paths; encrypted entries and methods other than stored and deflate are refused; folders are
skipped; entries come back as bytes, never opened as archives themselves. Refusals are
`FatturaPAError`s, 0033 for a limit and 0092 for an unreadable or unsafe ZIP (as `check_sync`
reports a file too large or unreadable); callers map them to their own codes.
"""

from __future__ import annotations

import copy
import io
import re
import zipfile
import zlib
from dataclasses import dataclass

from varco.fatturapa.errors import FatturaPAError, refuse

CHUNK = 64 * 1024  # the most one read inflates at a time
_CENTRAL_RECORD = b"PK\x01\x02"  # every central directory record starts with it
_END_RECORD = b"PK\x05\x06"
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f\\]|^/|^[A-Za-z]:|(^|/)\.\.(/|$)")
_HINT = "Send a plain ZIP (stored or deflate, no password) of the files, under relative names."


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int  # central directory records, folders included
    max_entry_bytes: int  # inflated bytes of one entry
    max_total_bytes: int  # inflated bytes of all entries


def is_zip(content: bytes) -> bool:
    """A ZIP with entries, or an empty one (sniffed from the first bytes)."""
    return content.startswith((b"PK\x03\x04", _END_RECORD))


def read_zip(content: bytes, limits: ArchiveLimits) -> list[tuple[str, bytes]]:
    """(name, bytes) of every file in the ZIP, folders skipped; refuses as soon as a limit is exceeded."""
    # zipfile builds an object per central record before we can count them: count the records
    # first, in the central directory that ends where the end record (its size at +12) starts,
    # or anywhere before it when a ZIP64 locator (which zipfile would follow) precedes it.
    end = max(content.rfind(_END_RECORD), 0)
    size = int.from_bytes(content[end + 12 : end + 16], "little")
    start = 0 if content[end - 20 : end - 16] == b"PK\x06\x07" else max(end - size, 0)
    if content.count(_CENTRAL_RECORD, start, end) > limits.max_entries:
        raise _too_large(f"the ZIP holds more than {limits.max_entries} entries", limits)
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            infos = archive.infolist()
            if len(infos) > limits.max_entries:
                raise _too_large(f"the ZIP holds more than {limits.max_entries} entries", limits)
            names = [_checked(info) for info in infos]
            if len(set(names)) < len(names):
                duplicate = next(n for n in names if names.count(n) > 1)
                raise refuse("0092", f"the ZIP holds {duplicate!r} more than once", _HINT)
            entries: list[tuple[str, bytes]] = []
            total = 0
            for info, name in zip(infos, names, strict=True):
                if info.is_dir():
                    continue
                data = _inflate(archive, info, name, limits, limits.max_total_bytes - total)
                total += len(data)
                entries.append((name, data))
            return entries
    except FatturaPAError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise refuse("0092", f"the ZIP cannot be read: {exc}", _HINT) from None
    except (NotImplementedError, RuntimeError) as exc:  # features zipfile refuses (patched data...)
        raise refuse("0092", f"the ZIP uses an unsupported feature: {exc}", _HINT) from None


def _checked(info: zipfile.ZipInfo) -> str:
    name = info.orig_filename  # zipfile cuts `filename` at a NUL; the original keeps it
    if not name or _UNSAFE_NAME.search(name):
        raise refuse("0092", f"the ZIP entry name {name!r} is not a safe relative path", _HINT)
    if info.flag_bits & 0x41:  # bit 0: encrypted; bit 6: strong encryption
        raise refuse("0092", f"the ZIP entry {name!r} is encrypted", _HINT)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        method = info.compress_type
        raise refuse("0092", f"the ZIP entry {name!r} uses compression method {method}", _HINT)
    return name


def _inflate(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: ArchiveLimits, room: int
) -> bytes:
    declared = info.file_size  # a bound the entry is held to, never one we rely on
    if declared > limits.max_entry_bytes:
        raise _too_large(f"the ZIP entry {name!r} is {declared} bytes inflated", limits)
    if declared > room:
        raise _too_large(f"the ZIP inflates to more than {limits.max_total_bytes} bytes", limits)
    # zipfile stops at `file_size` and only then fails on the CRC: give it room past the declared
    # size, so that the excess reaches the count below and the lie is refused for what it is.
    unbounded = copy.copy(info)
    unbounded.file_size = declared + 2 * CHUNK
    chunks: list[bytes] = []
    produced = 0
    with archive.open(unbounded) as entry:
        while chunk := entry.read(CHUNK):
            produced += len(chunk)
            if produced > declared:
                raise refuse(
                    "0092", f"the ZIP entry {name!r} inflates beyond the {declared} bytes it declares", _HINT
                )
            chunks.append(chunk)
    if produced != declared:
        raise refuse("0092", f"the ZIP entry {name!r} inflates to {produced} bytes, not {declared}", _HINT)
    return b"".join(chunks)


def _too_large(what: str, limits: ArchiveLimits) -> FatturaPAError:
    return refuse(
        "0033",
        f"{what}; at most {limits.max_entries} entries of {limits.max_entry_bytes} bytes, "
        f"{limits.max_total_bytes} bytes in all, are accepted",
        "Split the files over several ZIPs, or send them one by one.",
    )
