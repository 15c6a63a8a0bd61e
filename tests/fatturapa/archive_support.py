"""ZIPs written by hand, so that their headers may lie: names, sizes, flags, methods as given."""

from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class RawEntry:
    name: bytes
    raw: bytes  # the entry's data as stored (deflated when method is 8)
    crc: int
    size: int  # the inflated size both headers declare
    method: int = 8
    flags: int = 0


def deflated(name: str | bytes, data: bytes, *, size: int | None = None) -> RawEntry:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = compressor.compress(data) + compressor.flush()
    encoded = name.encode() if isinstance(name, str) else name
    return RawEntry(encoded, raw, zlib.crc32(data), len(data) if size is None else size)


def zeros(name: str, mib: int, *, claimed: int) -> RawEntry:
    """`mib` MiB of zeros as one real deflate stream, built in bounded memory (~1 KB per MiB).

    A full flush leaves the compressor as it started, so every MiB compresses to the same bytes.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    raw = piece * mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # the final, empty block
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(bytes(MIB), crc)
    return RawEntry(name.encode(), raw, crc, claimed)


def raw_zip(*entries: RawEntry) -> bytes:
    """A ZIP whose local and central headers both say what each entry says."""
    body, central = b"", b""
    for e in entries:
        fields = (e.flags, e.method, 0, 0x21, e.crc, len(e.raw), e.size, len(e.name))
        central += struct.pack("<IHH", 0x02014B50, 20, 20) + struct.pack("<4H3IH", *fields)
        central += struct.pack("<4H2I", 0, 0, 0, 0, 0, len(body)) + e.name
        body += struct.pack("<IH", 0x04034B50, 20) + struct.pack("<4H3IH", *fields) + b"\0\0" + e.name + e.raw
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return body + central + end


@functools.cache  # ~0.5 s of CRC per GiB, the same bytes every time
def lying_zip(mib: int = 1024, claimed: int = 1000) -> bytes:
    """One entry of `mib` MiB of zeros (~1 MB compressed per GiB) whose headers claim `claimed` bytes."""
    return raw_zip(zeros("communication.p7m", mib, claimed=claimed))
