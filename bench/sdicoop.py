"""SDICoop channel throughput end to end: invoices per second from upload to RC recorded.

.venv/bin/python bench/sdicoop.py [--invoices 300] [--threads 4]

What ships, twice in the same run, on the embedded default (SQLite, the worker in the process):
- baseline: `varco serve` as README command 1 starts it, with the in-process simulator;
- SOAP: the same `varco serve` with `VARCO_SDI_CHANNEL=sdicoop` and its SDICoop listener
  (`--sdicoop-port`, mutual TLS), and `varco sdi serve-sdicoop` as the SDI, a process of its own.

Each run uploads the same number of typical invoices (the FPR12 sample, every check on) through
`POST /services/invoice/upload` from `--threads` clients, after `WARM_UP` untimed ones, and the
clock stops when every one of them is 7 Consegnata, i.e. the RC has been recorded (read from the
server's SQLite file). The figure is invoices/s over that span; the target is SOAP ≥ 50 % of the
baseline.
"""

from __future__ import annotations

import argparse
import json
import ssl
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port  # noqa: E402
from _topology import (  # noqa: E402
    TRANSMITTER,
    VARCO,
    env_for,
    invoice,
    prepare,
    process,
    upload_all,
    wait_delivered,
)

WARM_UP = 30  # invoices through each server before the clock starts


def run(base: str, database: Path, count: int, threads: int, label: str) -> float:
    """Upload `count` invoices with `threads` clients; invoices/s until all are Consegnata. First
    `WARM_UP` invoices, untimed: XSDs loaded, statements compiled, the SOAP clients' WSDLs read and
    their TLS connections open, as in a server that has been running (each happens once)."""
    upload_all([base], WARM_UP, threads)
    wait_delivered(f"sqlite:///{database}", WARM_UP, f"{label} warming up", limit_seconds=600)
    uploads = prepare(base, count)
    start = time.perf_counter()
    uploaded = upload_all([base], count, threads, uploads)
    wait_delivered(f"sqlite:///{database}", WARM_UP + count, label, limit_seconds=600)
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
