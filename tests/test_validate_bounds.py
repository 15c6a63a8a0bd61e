"""`varco validate` reads at most the contract's 5 MB and one byte, and never hangs or tracebacks."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

from typer.testing import CliRunner

from varco.cli import app
from varco.fatturapa import CheckOptions

MAX_BYTES = CheckOptions().max_bytes  # §8.1: 5 MB
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["validate", *args])


def run_process(tmp_path: Path, *args: str) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in KiB) of `varco validate` in its own process."""
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "varco.cli", "validate", *args],
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_cap_memory,  # a regression must not take the machine's memory with it
        )
    deadline = threading.Timer(120, proc.kill)  # a hang fails the test; no timing is asserted
    deadline.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)  # the rusage of this child alone
    finally:
        deadline.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out.read_text(), err.read_text(), usage.ru_maxrss


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_dev_zero_is_refused_as_too_large_in_bounded_memory(tmp_path):
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    code, _, _, baseline_kb = run_process(tmp_path, str(empty))
    assert code == 1
    code, stdout, stderr, peak_kb = run_process(tmp_path, "/dev/zero")
    assert code == 1, stderr
    assert stdout.splitlines() == [
        f"/dev/zero: 0033 The file is larger than {MAX_BYTES} bytes; the maximum is {MAX_BYTES} bytes"
        " (Reduce the file (e.g. move attachments out of the invoice) below the limit.)",
        "/dev/zero: REFUSED",
    ]
    assert "Traceback" not in stderr
    assert peak_kb - baseline_kb < 40 * 1024  # 5 MB read, then dropped


def test_a_file_one_byte_over_the_limit_is_0033(tmp_path):
    at_limit, over = tmp_path / "at.xml", tmp_path / "over.xml"
    at_limit.write_bytes(b" " * MAX_BYTES)
    over.write_bytes(b" " * (MAX_BYTES + 1))
    result = run(str(at_limit), str(over))
    assert result.exit_code == 1
    assert f"{at_limit}: FATRSM401 " in result.stdout  # read whole: blank, not too large
    assert f"{over}: 0033 The file is larger than {MAX_BYTES} bytes" in result.stdout


def test_a_fifo_without_writer_is_a_usage_error_not_a_hang(tmp_path):
    fifo = tmp_path / "invoice.xml"
    os.mkfifo(fifo)
    result = run(str(fifo))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {fifo}: is a FIFO with nothing written to it"


def test_directory_and_missing_file_are_usage_errors(tmp_path):
    assert run(str(tmp_path)).stderr.strip() == f"error: {tmp_path}: is a directory"
    missing = tmp_path / "nope.xml"
    result = run(str(missing))
    assert result.exit_code == 2 and result.stderr.strip() == f"error: {missing}: no such file"
