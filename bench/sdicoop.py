"""SDICoop channel throughput end to end: invoices per second from upload to RC recorded.

.venv/bin/python bench/sdicoop.py [--invoices 300] [--threads 4]

What ships, twice in the same run, on the embedded default (SQLite, the worker in the process):
- baseline: `varco serve` as README command 1 starts it, with the in-process simulator;
- SOAP: the same `varco serve` with `VARCO_SDI_CHANNEL=sdicoop` and its SDICoop listener
  (`--sdicoop-port`, mutual TLS), and `varco sdi serve-sdicoop` as the SDI, a process of its own.

Each run uploads the same number of typical invoices (the FPR12 sample, every check on) through
`POST /services/invoice/upload` from `--threads` clients, and the clock stops when every one of
them is 7 Consegnata, i.e. the RC has been recorded (read from the server's SQLite file). The
figure is invoices/s over that span; the target is SOAP ≥ 50 % of the baseline.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "sdi" / "fixtures" / "FPR12.xml"
VARCO = [sys.executable, "-m", "varco.cli"]
TRANSMITTER = "IT05555550028"  # varco's default VARCO_TRANSMITTER_ID
SUPPLIER_VAT = "01234560017"  # demo-premium
CONSEGNATA = 7


def invoice(number: str) -> bytes:
    """The sample, numbered `number`, from demo-premium to a customer no intermediary serves."""
    root = etree.fromstring(SAMPLE.read_bytes())
    for element in root.iter("Numero"):
        if element.getparent().tag == "DatiGeneraliDocumento":
            element.text = number
    supplier = root.find(".//CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdCodice")
    supplier.text = SUPPLIER_VAT
    next(root.iter("IdTrasmittente")).find("IdCodice").text = TRANSMITTER[2:]
    next(root.iter("CodiceDestinatario")).text = "XYZ1234"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def env_for(data_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env.update(VARCO_DATA_DIR=str(data_dir), VARCO_IP_LIMITS_ENABLED="false", VARCO_DEFAULT_TIER="6")
    env.update({f"VARCO_{k.upper()}": v for k, v in settings.items()})
    return env


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path, ready_url: str, **tls: object) -> Iterator[int]:
    with log.open("w") as out:
        proc = subprocess.Popen([*VARCO, *args], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{args[0]} exited:\n{log.read_text()[-3000:]}")
            try:
                httpx.get(ready_url, timeout=2, **tls)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{args[0]} did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.1)
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def delivered(database: Path) -> int:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as conn:
        row = conn.execute(
            "SELECT count(*) FROM invoices WHERE direction = 'out' AND state = ?", (CONSEGNATA,)
        )
        return row.fetchone()[0]


def run(base: str, database: Path, count: int, threads: int, label: str) -> float:
    """Upload `count` invoices with `threads` clients; invoices/s until all are Consegnata."""
    token = httpx.post(
        f"{base}/auth/signin",
        data={"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"},
        timeout=30,
    ).json()["access_token"]
    bodies = [
        json.dumps({"dataFile": base64.b64encode(invoice(f"S{uuid.uuid4().int % 10**9}")).decode()})
        for _ in range(count)
    ]
    lock = threading.Lock()

    def upload() -> None:
        with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as client:
            while True:
                with lock:
                    if not bodies:
                        return
                    body = bodies.pop()
                answer = client.post(
                    f"{base}/services/invoice/upload",
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                assert answer.json()["errorCode"] == "0000", answer.text

    start = time.perf_counter()
    clients = [threading.Thread(target=upload) for _ in range(threads)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    uploaded = time.perf_counter() - start
    deadline = time.monotonic() + 600
    while (done := delivered(database)) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"{label}: only {done} of {count} invoices Consegnata after 600 s")
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    print(f"{label:44} {count / elapsed:8.1f} inv/s  ({count} in {elapsed:.1f} s, uploads {uploaded:.1f} s)")
    return count / elapsed


def baseline(work: Path, count: int, threads: int) -> float:
    port = free_port()
    env = env_for(work / "baseline")
    with process(
        ["serve", "--port", str(port)], env, work / "baseline.log", f"http://127.0.0.1:{port}/health"
    ):
        return run(
            f"http://127.0.0.1:{port}",
            work / "baseline" / "varco.sqlite3",
            count,
            threads,
            "in-process simulator",
        )


def soap(work: Path, count: int, threads: int) -> float:
    pki = work / "pki"
    subprocess.run(
        [*VARCO, "sdi", "make-test-pki", str(pki), "--intermediary", "varco"], check=True, capture_output=True
    )
    sdi_port, api_port, soap_port = free_port(), free_port(), free_port()
    listener = f"https://127.0.0.1:{soap_port}/sdicoop"
    config = {
        "server": {
            "certificate": "pki/sdi-server.crt.pem",
            "key": "pki/sdi-server.key.pem",
            "client_ca": "pki/ca.crt.pem",
        },
        "client": {
            "certificate": "pki/sdi-client.crt.pem",
            "key": "pki/sdi-client.key.pem",
            "ca_bundle": "pki/ca.crt.pem",
        },
        "intermediaries": [
            {
                "name": "varco",
                "transmitter_ids": [TRANSMITTER],
                "trasmissione_fatture_url": f"{listener}/TrasmissioneFatture",
                "ricezione_fatture_url": f"{listener}/RicezioneFatture",
            }
        ],
    }
    (work / "sdi.json").write_text(json.dumps(config))
    sdi = f"https://127.0.0.1:{sdi_port}"
    as_varco = ssl.create_default_context(cafile=pki / "ca.crt.pem")
    as_varco.load_cert_chain(pki / "varco-client.crt.pem", pki / "varco-client.key.pem")
    env = env_for(
        work / "soap",
        sdi_channel="sdicoop",
        sdicoop_cert=str(pki / "varco-client.crt.pem"),
        sdicoop_key=str(pki / "varco-client.key.pem"),
        sdicoop_ca=str(pki / "ca.crt.pem"),
        sdicoop_ricevi_file_url=f"{sdi}/ricevi_file",
        sdicoop_ricevi_notifica_url=f"{sdi}/ricevi_notifica",
        sdicoop_trasmissione_file_url=f"{sdi}/dati-fattura",
    )
    serve = ["serve", "--port", str(api_port), "--sdicoop-port", str(soap_port)]
    serve += [
        "--ssl-certfile",
        str(pki / "varco-server.crt.pem"),
        "--ssl-keyfile",
        str(pki / "varco-server.key.pem"),
    ]
    serve += ["--ssl-ca-certs", str(pki / "ca.crt.pem")]
    with ExitStack() as stack:
        sim = ["sdi", "serve-sdicoop", "--config", str(work / "sdi.json"), "--port", str(sdi_port)]
        stack.enter_context(
            process(sim, env_for(work / "sdi"), work / "sdi.log", f"{sdi}/ricevi_file?wsdl", verify=as_varco)
        )
        stack.enter_context(process(serve, env, work / "soap.log", f"http://127.0.0.1:{api_port}/health"))
        return run(
            f"http://127.0.0.1:{api_port}",
            work / "soap" / "varco.sqlite3",
            count,
            threads,
            "SDICoop (SOAP + mutual TLS, SDI in its process)",
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invoices", type=int, default=300)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="varco-bench-sdicoop-"))
    print(
        f"{args.invoices} typical invoices ({len(invoice('S1'))} bytes), {args.threads} upload clients, "
        "upload -> RC recorded"
    )
    base = baseline(work, args.invoices, args.threads)
    over_soap = soap(work, args.invoices, args.threads)
    ratio = over_soap / base
    print(
        f"SDICoop / in-process simulator: {ratio:.2f} "
        f"(target >= 0.50: {'met' if ratio >= 0.5 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
