"""Sustained POST /services/invoice/upload throughput next to a bare FastAPI endpoint that decodes
the same JSON, in the same run; and the peak memory of a 5 MB upload.

    .venv/bin/python bench/upload.py [--seconds 3] [--rounds 5] [--threads 4] [--skip-memory | --memory-only]

Two upload rows, in alternating rounds with the bare endpoint:
- as shipped: `varco serve` as README command 1 starts it (embedded default, the worker in the
  process, every check on), typical invoices (the 5.7 KB FPR12 sample to a customer of no
  account); after each round the bench waits until its worker has carried every upload to 7
  Consegnata, so that no backlog runs into the next round.
- the synchronous stage alone (labelled so): the bare endpoint's server, without a worker, ~8 KB
  invoices sent with `skipExtraSchema` (their line amounts do not match the summary).
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import statistics
import sys
import tempfile
import threading
import tracemalloc
from contextlib import ExitStack
from pathlib import Path

import httpx
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import running_server, throughput  # noqa: E402
from _topology import api, env_for, invoice, wait_delivered  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "tests" / "fatturapa" / "cases" / "base" / "FPR12.xml"
_numbers = itertools.count(1)
_lock = threading.Lock()


def invoice_of_about(size: int, description_chars: int = 0) -> etree._Element:
    root = etree.fromstring(BASE.read_bytes())
    beni = root.find("FatturaElettronicaBody/DatiBeniServizi")
    line = beni.find("DettaglioLinee")
    if description_chars:  # NumeroLinea stops at 9999: big files need long lines
        line.find("Descrizione").text = "X" * description_chars
    while len(etree.tostring(root)) < size:
        copy = etree.fromstring(etree.tostring(line))
        beni.insert(beni.index(line) + 1, copy)
    for n, element in enumerate(beni.iterfind("DettaglioLinee"), start=1):
        element.find("NumeroLinea").text = str(n)
    return root


def with_number(root: etree._Element, number: str) -> bytes:
    root.find("FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/Numero").text = number
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="per endpoint and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-only", action="store_true")
    args = parser.parse_args()
    if not args.memory_only:
        throughput_run(args.seconds, args.threads, args.rounds)
    if not args.skip_memory:
        memory_of_big_upload()


def throughput_run(seconds: float, threads: int, rounds: int) -> None:
    template = invoice_of_about(8 * 1024)
    sample = base64.b64encode(with_number(template, "B0")).decode()
    work = Path(tempfile.mkdtemp(prefix="varco-bench-upload-"))
    shipped_db = f"sqlite:///{work / 'shipped' / 'varco.sqlite3'}"
    with running_server({"VARCO_DEFAULT_TIER": "6"}) as server, ExitStack() as stack:
        headers = _bench_user(server)
        shipped, shipped_pid = api(stack, env_for(work / "shipped"), work / "shipped.log")
        shipped_headers = _demo_user(shipped)
        done = {"bare": 0, "upload": 0, "shipped": 0}

        def bare(c: httpx.Client) -> None:
            assert c.post(f"{server.base}/bench/decode", json={"dataFile": sample}).status_code == 200
            done["bare"] += 1  # under the GIL; a lost increment would not matter here

        def upload(c: httpx.Client) -> None:
            with _lock:
                number = f"B{next(_numbers)}"
                data = base64.b64encode(with_number(template, number)).decode()
            body = {"dataFile": data, "skipExtraSchema": True}
            r = c.post(f"{server.base}/services/invoice/upload", json=body, headers=headers)
            assert r.json()["errorCode"] == "0000", r.text
            done["upload"] += 1

        def as_shipped(c: httpx.Client) -> None:
            with _lock:
                data = base64.b64encode(invoice(f"S{next(_numbers)}")).decode()
            r = c.post(f"{shipped}/services/invoice/upload", json={"dataFile": data}, headers=shipped_headers)
            assert r.json()["errorCode"] == "0000", r.text
            done["shipped"] += 1

        # This machine's speed drifts by ±20 % over minutes: short alternating rounds give ratios of
        # runs made under the same conditions; their median is the figure.
        # Server CPU per request (user + system, /proc/PID/stat): steadier than req/s on a shared machine.
        calls = {
            "bare": (bare, server.pid),
            "upload": (upload, server.pid),
            "shipped": (as_shipped, shipped_pid),
        }
        rates: dict[str, list[float]] = {name: [] for name in calls}
        cpu_s = dict.fromkeys(calls, 0.0)
        for _ in range(rounds):
            for name, (call, pid) in calls.items():
                before = _cpu_seconds(pid)
                rates[name].append(throughput(call, seconds=seconds, threads=threads))
                if name == "shipped":  # its worker's work is the upload's too, and must not spill over
                    wait_delivered(shipped_db, done["shipped"], "as shipped")
                cpu_s[name] += _cpu_seconds(pid) - before
        print(
            f"{threads} client threads, {rounds} rounds of {seconds:g} s each; as shipped: "
            f"{len(invoice('S0'))} bytes, synchronous stage alone: {len(with_number(template, 'B0'))} bytes"
        )
        print(f"{'endpoint':58} {'req/s (median)':>15} {'vs bare':>8} {'server CPU ms/req':>18}")
        labels = {
            "bare": "bare FastAPI JSON+base64 decode",
            "shipped": "upload, as shipped (worker, every check, to Consegnata)",
            "upload": "upload, synchronous stage alone (no worker, skipExtraSchema)",
        }
        for name in ("bare", "shipped", "upload"):
            ratios = [u / b for b, u in zip(rates["bare"], rates[name], strict=True)]
            print(
                f"{labels[name]:58} {statistics.median(rates[name]):15.1f} "
                f"{statistics.median(ratios):8.2f} {cpu_s[name] * 1000 / done[name]:18.2f}"
            )
            if name != "bare":
                print(f"  ratio per round: {' '.join(f'{r:.2f}' for r in ratios)}")


def _demo_user(base: str) -> dict[str, str]:
    form = {"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"}
    token = httpx.post(f"{base}/auth/signin", data=form, timeout=30).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def upload_body(root: etree._Element, number: str) -> bytes:
    """The JSON body of an upload of `root` numbered `number`, encoded once."""
    data = base64.b64encode(with_number(root, number)).decode()
    return json.dumps({"dataFile": data, "skipExtraSchema": True}).encode()


def memory_of_big_upload() -> None:
    """Peak memory of 5 MB uploads in a fresh server: VmHWM (peak RSS, which sees lxml's C memory)
    reset to the current RSS just before each upload (/proc/PID/clear_refs), and the tracemalloc
    peak (Python allocations only) of the same request handled in this process."""
    with running_server({"VARCO_DEFAULT_TIER": "6"}) as server:
        headers = _bench_user(server)
        headers["Content-Type"] = "application/json"
        big = invoice_of_about(5 * 1024 * 1024 - 200_000, description_chars=900)
        size = len(with_number(big, "BIG0"))
        for n, label in enumerate(("first upload of a fresh server", "second 5 MB upload"), start=1):
            body = upload_body(big, f"BIG{n}")
            if n == 1:
                print(f"5 MB upload: invoice of {size / 1e6:.2f} MB, {len(body) / 1e6:.2f} MB of JSON")
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
            before_rss, before_hwm = _vm_kb(server.pid, "VmRSS"), _vm_kb(server.pid, "VmHWM")
            url = f"{server.base}/services/invoice/upload"
            r = httpx.post(url, content=body, headers=headers, timeout=120)
            assert r.json()["errorCode"] == "0000", r.text[:300]
            growth = (_vm_kb(server.pid, "VmHWM") - before_hwm) / 1024
            after = (_vm_kb(server.pid, "VmRSS") - before_rss) / 1024
            print(f"  {label}: peak RSS +{growth:.1f} MB (RSS afterwards {after:+.1f} MB)")
        traced = _traced_peak_mb(server, headers, upload_body(big, "BIG3"))
        print(f"  in-process tracemalloc peak of one request: {traced:.1f} MB (Python objects only)")


def _traced_peak_mb(server, headers: dict[str, str], body: bytes) -> float:
    os.environ.update(server.env)  # the same database and settings as the server
    os.environ.pop("VARCO_DATABASE_URL", None)
    from fastapi.testclient import TestClient

    from varco.app import create_app

    with TestClient(create_app()) as client:
        small = invoice_of_about(8 * 1024)
        warm = {"dataFile": base64.b64encode(with_number(small, "W1")).decode(), "skipExtraSchema": True}
        r = client.post("/services/invoice/upload", json=warm, headers=headers)
        assert r.json()["errorCode"] == "0000", r.text
        tracemalloc.start()
        try:
            r = client.post("/services/invoice/upload", content=body, headers=headers)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert r.json()["errorCode"] == "0000", r.text[:300]
    return peak / 1024 / 1024


def _bench_user(server) -> dict[str, str]:
    server.cli(
        "users",
        "create",
        "bench-user",
        "--password",
        "bench-pw",
        "--vat-code",
        "01234560017",
        "--tier",
        "6",
        "--max-space-kb",
        "100000000",
    )
    form = {"grant_type": "password", "username": "bench-user", "password": "bench-pw"}
    token = httpx.post(f"{server.base}/auth/signin", data=form).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _vm_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


if __name__ == "__main__":
    main()
