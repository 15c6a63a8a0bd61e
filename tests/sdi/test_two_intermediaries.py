"""Two varco instances exchange an invoice through the simulated SDI, entirely over SOAP + mutual
TLS, as two accredited intermediaries do through the real one (docs/sdicoop.md, step by step):
real processes, the commands of the walkthrough, nothing shared but the network.

A uploads a PA invoice addressed to B's office code -> the SDI calls B's RiceviFatture -> B's
client has it (Ricevuta) -> the SDI sends A the RC (Consegnata) -> B's client accepts it (EC01) ->
B calls NotificaEsito, ES01 -> the SDI forwards the NE to A -> A's invoice is Accettata.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import _postgres_database
from tests.live_server import free_port
from tests.sdi.factories import invoice_file
from varco.core.db import Database

VARCO = [sys.executable, "-m", "varco.cli"]
A = {"name": "a", "transmitter": "IT01234560017", "code": "AAAAAAA"}
B = {"name": "b", "transmitter": "IT09876540015", "code": "BBBBBBB", "office": "UFBBBB"}
SUPPLIER_VAT, BUYER_VAT = "01234560017", "09876540015"  # demo-premium (on A), demo-basic (on B)
WAIT_SECONDS = 60


def run(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([*VARCO, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path, ready: Callable[[], bool]) -> Iterator[None]:
    with log.open("w") as out:
        proc = subprocess.Popen([*VARCO, *args], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while not ready():
            assert proc.poll() is None, f"{args[0]} exited with {proc.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"{args[0]} did not start:\n{log.read_text()}"
            time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def answers(url: str, **tls: Any) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            httpx.get(url, timeout=2, **tls)
            return True
        except httpx.HTTPError:
            return False

    return ready


def base_env(data_dir: Path, database: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARCO_")}
    env.update(VARCO_DATA_DIR=str(data_dir), VARCO_PROFILE="demo", VARCO_IP_LIMITS_ENABLED="false")
    if database:
        env["VARCO_DATABASE_URL"] = database
    return env


@contextmanager
def database_url(db: Database, name: str) -> Iterator[str | None]:
    """Each process its own database: SQLite in its data directory, or a PostgreSQL database of
    its own when the suite runs on PostgreSQL."""
    if not db.url.startswith("postgresql"):
        yield None
        return
    urls = _postgres_database(f"varco_e2e_{name}_{uuid.uuid4().hex[:8]}")
    try:
        yield next(urls)
    finally:
        next(urls, None)


def wait_for(what: str, probe: Callable[[], Any], logs: list[Path]) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {log.name}\n{log.read_text()[-4000:]}" for log in logs)
            raise AssertionError(f"{what}: not within {WAIT_SECONDS}s\n{tails}")
        time.sleep(0.2)


class Instance:
    def __init__(self, base: str) -> None:
        self.base = base

    def token(self, username: str) -> str:
        answer = httpx.post(
            f"{self.base}/auth/signin",
            data={"grant_type": "password", "username": username, "password": f"{username}-pw"},
            timeout=30,
        )
        answer.raise_for_status()
        return answer.json()["access_token"]

    def get(self, token: str, path: str, **params: str) -> httpx.Response:
        return httpx.get(f"{self.base}{path}", params=params, headers={"Authorization": f"Bearer {token}"})

    def post(self, token: str, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{self.base}{path}", json=body, headers={"Authorization": f"Bearer {token}"})


def statuses(instance: Instance, token: str, direction: str, filename: str) -> list[str]:
    answer = instance.get(token, f"/api/v2/invoices-{direction}/detail", filename=filename)
    return [line["status"] for line in answer.json()["invoices"]] if answer.status_code == 200 else []


def doc_types(instance: Instance, token: str, filename: str) -> list[str]:
    answer = instance.get(token, "/api/v2/invoices-out/notifications", filename=filename)
    return [n["docType"] for n in answer.json()["notifications"]]


def test_an_invoice_and_its_outcome_go_between_two_instances(tmp_path: Path, db: Database) -> None:
    pki = tmp_path / "pki"
    run("sdi", "make-test-pki", str(pki), "--intermediary", "a", "--intermediary", "b")
    sdi_port, ports = free_port(), {"a": (free_port(), free_port()), "b": (free_port(), free_port())}

    def endpoints(name: str) -> dict[str, str]:
        soap = f"https://127.0.0.1:{ports[name][1]}/sdicoop"
        return {
            "trasmissione_fatture_url": f"{soap}/TrasmissioneFatture",
            "ricezione_fatture_url": f"{soap}/RicezioneFatture",
        }

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
                "name": "a",
                "transmitter_ids": [A["transmitter"]],
                "recipient_codes": [A["code"]],
                **endpoints("a"),
            },
            {
                "name": "b",
                "transmitter_ids": [B["transmitter"]],
                "recipient_codes": [B["code"], B["office"]],
                **endpoints("b"),
            },
        ],
    }
    (tmp_path / "sdi.json").write_text(json.dumps(config))
    sdi_url = f"https://127.0.0.1:{sdi_port}"
    as_a = ssl.create_default_context(cafile=pki / "ca.crt.pem")  # A, as the SDI sees it
    as_a.load_cert_chain(pki / "a-client.crt.pem", pki / "a-client.key.pem")

    def instance_env(spec: dict[str, str]) -> dict[str, str]:
        name = spec["name"]
        return {
            **base_env(tmp_path / name, urls[name]),
            "VARCO_TRANSMITTER_ID": spec["transmitter"],
            "VARCO_RECIPIENT_CODE": spec["code"],
            "VARCO_SDI_CHANNEL": "sdicoop",
            "VARCO_SDICOOP_CERT": str(pki / f"{name}-client.crt.pem"),
            "VARCO_SDICOOP_KEY": str(pki / f"{name}-client.key.pem"),
            "VARCO_SDICOOP_CA": str(pki / "ca.crt.pem"),
            "VARCO_SDICOOP_RICEVI_FILE_URL": f"{sdi_url}/ricevi_file",
            "VARCO_SDICOOP_RICEVI_NOTIFICA_URL": f"{sdi_url}/ricevi_notifica",
            "VARCO_SDICOOP_TRASMISSIONE_FILE_URL": f"{sdi_url}/dati-fattura",
        }

    def serve(spec: dict[str, str]) -> list[str]:
        name = spec["name"]
        api, soap = ports[name]
        return [
            "serve",
            "--port",
            str(api),
            "--sdicoop-port",
            str(soap),
            "--ssl-certfile",
            str(pki / f"{name}-server.crt.pem"),
            "--ssl-keyfile",
            str(pki / f"{name}-server.key.pem"),
            "--ssl-ca-certs",
            str(pki / "ca.crt.pem"),
        ]

    logs = [tmp_path / "sdi.log", tmp_path / "a.log", tmp_path / "b.log"]
    with ExitStack() as stack:
        urls = {name: stack.enter_context(database_url(db, name)) for name in ("sdi", "a", "b")}
        stack.enter_context(
            process(
                ["sdi", "serve-sdicoop", "--config", str(tmp_path / "sdi.json"), "--port", str(sdi_port)],
                base_env(tmp_path / "sdi", urls["sdi"]),
                logs[0],
                answers(f"{sdi_url}/ricevi_file?wsdl", verify=as_a),
            )
        )
        for spec, log in ((A, logs[1]), (B, logs[2])):
            api = f"http://127.0.0.1:{ports[spec['name']][0]}/health"
            stack.enter_context(process(serve(spec), instance_env(spec), log, answers(api)))
        a = Instance(f"http://127.0.0.1:{ports['a'][0]}")
        b = Instance(f"http://127.0.0.1:{ports['b'][0]}")
        supplier, buyer = a.token("demo-premium"), b.token("demo-basic")

        # 1. A's client uploads a PA invoice for B's office code.
        content = invoice_file(
            "FPA12.xml",
            supplier_vat=SUPPLIER_VAT,
            client_vat=BUYER_VAT,
            codice_destinatario=B["office"],
            transmitter=A["transmitter"][2:],
        )
        upload = a.post(
            supplier, "/services/invoice/upload", {"dataFile": base64.b64encode(content).decode()}
        )
        assert upload.status_code == 200 and upload.json()["errorCode"] == "0000", upload.text
        filename = upload.json()["uploadFileName"]
        assert filename.startswith(A["transmitter"] + "_")

        # 2. The SDI hands it to B over RicezioneFatture: B's client has it.
        wait_for("received on B", lambda: statuses(b, buyer, "in", filename) == ["Ricevuta"], logs)
        received = b.get(buyer, "/api/v2/invoices-in/detail", filename=filename).json()
        # 3. ... and A has the RicevutaConsegna.
        wait_for("RC on A", lambda: statuses(a, supplier, "out", filename) == ["Consegnata"], logs)
        assert (
            received["idSdi"]
            == a.get(supplier, "/api/v2/invoices-out/detail", filename=filename).json()["idSdi"]
        )

        # 4. B's client accepts it; B sends the EC over SdIRiceviNotifica.
        esito = b.post(
            buyer,
            "/services/invoice/in/sendEsitoCommittente",
            {"filename": filename, "sdiId": received["idSdi"], "esito": "EC01"},
        )
        assert esito.status_code == 200 and esito.json()["errorCode"] == "0000", esito.text
        path = f"/services/invoice/in/sendEsitoCommittente/{esito.json()['esitoFileName']}"
        wait_for("ES01 on B", lambda: b.get(buyer, path).json().get("status") == "ACCEPTED", logs)

        # 5. The SDI forwards it to A as NE: Accettata.
        wait_for("NE on A", lambda: statuses(a, supplier, "out", filename) == ["Accettata"], logs)
        assert doc_types(a, supplier, filename) == ["RC", "NE"]
