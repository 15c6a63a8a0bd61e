"""Sustained POST /services/invoice/upload throughput (valid ~8 KB invoices) next to a bare FastAPI
endpoint that decodes the same JSON, in the same run; and the peak memory of one 5 MB upload.

    .venv/bin/python bench/upload.py [--seconds 5] [--threads 4]
"""

from __future__ import annotations

import argparse
import base64
import itertools
import sys
import threading
from pathlib import Path

import httpx
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import running_server, throughput  # noqa: E402

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
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    template = invoice_of_about(8 * 1024)
    sample = base64.b64encode(with_number(template, "B0")).decode()
    # Line amounts do not match the summary after copying: skip the extra-schema rules, which the
    # asynchronous stage would report; the synchronous stage is what this bench measures.
    with running_server({"VARCO_DEFAULT_TIER": "6"}) as server:
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
        headers = {"Authorization": f"Bearer {token}"}

        memory_mb = peak_growth_mb(server, headers)  # first: VmHWM is a high-water mark

        def bare(c: httpx.Client) -> None:
            assert c.post(f"{server.base}/bench/decode", json={"dataFile": sample}).status_code == 200

        def upload(c: httpx.Client) -> None:
            with _lock:
                number = f"B{next(_numbers)}"
                data = base64.b64encode(with_number(template, number)).decode()
            body = {"dataFile": data, "skipExtraSchema": True}
            r = c.post(f"{server.base}/services/invoice/upload", json=body, headers=headers)
            assert r.json()["errorCode"] == "0000", r.text

        bare_rate = throughput(bare, seconds=args.seconds, threads=args.threads)
        upload_rate = throughput(upload, seconds=args.seconds, threads=args.threads)
        print(f"invoice size: {len(with_number(template, 'B0'))} bytes")
        print(f"{'endpoint':34} {'req/s':>9} {'vs bare':>8}")
        print(f"{'bare FastAPI JSON+base64 decode':34} {bare_rate:9.1f} {1.0:8.2f}")
        print(f"{'POST /services/invoice/upload':34} {upload_rate:9.1f} {upload_rate / bare_rate:8.2f}")
        print(f"peak RSS growth for one 5 MB upload: {memory_mb:.1f} MB")


def peak_growth_mb(server, headers: dict[str, str]) -> float:  # noqa: ANN001
    """VmHWM (peak RSS) of the server process before and after a 5 MB upload."""
    pid = server.pid
    before = _vm_hwm_kb(pid)
    big = invoice_of_about(5 * 1024 * 1024 - 200_000, description_chars=900)
    data = base64.b64encode(with_number(big, "BIG")).decode()
    r = httpx.post(
        f"{server.base}/services/invoice/upload",
        json={"dataFile": data, "skipExtraSchema": True},
        headers=headers,
        timeout=120,
    )
    assert r.json()["errorCode"] == "0000", r.text[:300]
    return (_vm_hwm_kb(pid) - before) / 1024


def _vm_hwm_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


if __name__ == "__main__":
    main()
