"""`read_zip`: entries, per-entry and total limits counted while inflating; unsafe ZIPs refused."""

from __future__ import annotations

import io
import tracemalloc
import zipfile

import pytest

from tests.fatturapa.archive_support import MIB, RawEntry, deflated, lying_zip, raw_zip, zeros
from varco.fatturapa import ArchiveLimits, FatturaPAError, read_zip

LIMITS = ArchiveLimits(max_entries=3, max_entry_bytes=1000, max_total_bytes=2500)


def zip_of(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def refusal(content: bytes, limits: ArchiveLimits = LIMITS) -> tuple[str, str]:
    with pytest.raises(FatturaPAError) as caught:
        read_zip(content, limits)
    return caught.value.finding.code, caught.value.finding.message


def test_files_come_back_in_order_folders_skipped_nested_archives_unopened():
    inner = zip_of({"x.xml": b"<x/>"})
    content = zip_of({"dir/": b"", "dir/a.xml": b"<a/>" * 10, "b.zip": inner}, zipfile.ZIP_STORED)
    assert read_zip(content, LIMITS) == [("dir/a.xml", b"<a/>" * 10), ("b.zip", inner)]
    assert read_zip(zip_of({}), LIMITS) == []


def test_limits_at_the_bound_are_accepted():
    content = zip_of({"a": b"a" * 1000, "b": b"b" * 1000, "c": b"c" * 500})
    assert [len(data) for _, data in read_zip(content, LIMITS)] == [1000, 1000, 500]


def test_too_many_entries():
    code, message = refusal(zip_of({f"{i}.xml": b"<a/>" for i in range(4)}))
    assert code == "0033" and "more than 3 entries" in message
    folders = zip_of({"a/": b"", "b/": b"", "c/": b"", "d.xml": b"<a/>"})  # folders count too
    assert "more than 3 entries" in refusal(folders)[1]


def test_entry_over_the_per_entry_limit():
    code, message = refusal(zip_of({"a.xml": b"a" * 1001}))
    assert code == "0033" and "'a.xml' is 1001 bytes inflated" in message and "1000 bytes" in message


def test_entries_over_the_total_limit():
    code, message = refusal(zip_of({"a": b"a" * 1000, "b": b"b" * 1000, "c": b"c" * 501}))
    assert code == "0033" and "more than 2500 bytes" in message


def test_a_lying_header_is_refused_after_one_chunk():
    """Both headers claim 1,000 bytes; the entry inflates to 1 GiB of zeros."""
    content = lying_zip(mib=1024, claimed=1000)
    assert len(content) < 2 * MIB
    tracemalloc.start()
    try:
        code, message = refusal(content, ArchiveLimits(100, 5 * MIB, 20 * MIB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == "0092" and "inflates beyond the 1000 bytes it declares" in message
    assert peak < 2 * MIB  # one chunk, not the gigabyte


def test_a_header_claiming_more_than_the_entry_holds():
    code, message = refusal(raw_zip(deflated("a.xml", b"<a/>", size=900)))
    assert code == "0092" and "inflates to 4 bytes, not 900" in message


def test_a_lie_under_the_limits_is_still_refused():
    content = raw_zip(zeros("a.xml", 1, claimed=1000))  # 1 MiB that claims 1,000 bytes
    assert "inflates beyond" in refusal(content, ArchiveLimits(100, 5 * MIB, 20 * MIB))[1]


@pytest.mark.parametrize(
    "name",
    [b"/etc/passwd", b"../up.xml", b"a/../../up.xml", b"a\\b.xml", b"C:evil.xml", b"c:/x.xml", b"a\0.xml"]
    + [b"a\x01.xml", b"a\n.xml", b"a\x7f.xml", b".."],
)
def test_unsafe_names_are_refused(name):
    code, message = refusal(raw_zip(deflated(name, b"<a/>")))
    assert code == "0092" and "not a safe relative path" in message


def test_safe_names_with_dots_are_accepted():
    content = raw_zip(deflated("a..b.xml", b"<a/>"), deflated("..x/.y.xml", b"<b/>"))
    assert [name for name, _ in read_zip(content, LIMITS)] == ["a..b.xml", "..x/.y.xml"]


def test_an_encrypted_entry_is_refused():
    entry = deflated("a.xml", b"<a/>")
    encrypted = RawEntry(entry.name, bytes(12) + entry.raw, entry.crc, entry.size, flags=0x1)
    code, message = refusal(raw_zip(encrypted))
    assert code == "0092" and "'a.xml' is encrypted" in message


def test_unsupported_compression_is_refused():
    bzip2 = zip_of({"a.xml": b"<a/>"}, zipfile.ZIP_BZIP2)
    assert "compression method 12" in refusal(bzip2)[1]


def test_duplicate_names_are_refused():
    content = raw_zip(deflated("a.xml", b"<a/>"), deflated("a.xml", b"<b/>"))
    assert "'a.xml' more than once" in refusal(content)[1]


def test_corrupt_zips_are_refused():
    entry = deflated("a.xml", b"<a/>" * 50)
    bad_crc = RawEntry(entry.name, entry.raw, entry.crc ^ 1, entry.size)
    assert "cannot be read" in refusal(raw_zip(bad_crc))[1]
    assert "cannot be read" in refusal(zip_of({"a.xml": b"<a/>"})[:-30])[1]


def test_entries_are_counted_before_zipfile_builds_one_object_each():
    content = zip_of({str(i): b"" for i in range(20_000)}, zipfile.ZIP_STORED)
    tracemalloc.start()
    try:
        assert "more than 3 entries" in refusal(content)[1]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MIB  # 20,000 ZipInfo objects would take several
