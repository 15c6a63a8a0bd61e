"""Record the examples of the OpenAPI document from a real exchange (docs/openapi.md).

    .venv/bin/python scripts/record_openapi_examples.py [--output PATH]

A fresh embedded database in a temporary directory, the demo accounts, the real application
(every middleware, handler and job); one call per operation, in the order a client meets them:
sign in, upload a `varco demo invoice`, let the queue and the simulated SDI take it to Consegnata,
search it, read its notifications, receive an invoice, answer it, send a financial communication,
drive the SDI simulator, register a callback (a receiver on this machine gets the deliveries).
Each call must succeed (2xx). The request and response bodies, and the parameters sent, are written
to `src/varco/openapi_examples.json` (default), which `varco.openapi` puts into the document.

Before writing, values that must not be published are replaced (`sanitized`): tokens and callback
secrets by fake ones, request ids by one fixed id, the receiver's address by erp.example.com, and
base64 contents longer than a few lines are shortened with a visible marker. The clock is manual
(today, 08:00 UTC) so that one day's recordings agree.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "src" / "varco" / "openapi_examples.json"

FAKE_ACCESS_TOKEN = "EXAMPLE-access-token-not-a-real-one-0000000000"
FAKE_REFRESH_TOKEN = "EXAMPLE-refresh-token-not-a-real-one-000000000"
FAKE_SECRET = "vcs_EXAMPLE-signing-secret-not-a-real-one-00000"
REQUEST_ID = "[request 3f9a1c0d2b7e4a51]"
RECEIVER = "https://erp.example.com"
IDEMPOTENCY_KEY = "6f1c2a7e-3b9d-4e5f-8a1b-2c3d4e5f6a7b"
BASE64_KEPT = 96  # characters of a longer base64 value kept in an example
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_REQUEST_ID = re.compile(r"\[request [0-9a-f-]+\]")

# A regular VAT payment communication (IVP18) of demo-premium, signed with its demo identity.
LI_XML = """<?xml version="1.0" encoding="UTF-8"?>
<iv:Fornitura xmlns:iv="urn:www.agenziaentrate.gov.it:specificheTecniche:sco:ivp">
  <iv:Intestazione><iv:CodiceFornitura>IVP18</iv:CodiceFornitura></iv:Intestazione>
  <iv:Comunicazione identificativo="00001">
    <iv:Frontespizio>
      <iv:CodiceFiscale>{cf}</iv:CodiceFiscale>
      <iv:AnnoImposta>{year}</iv:AnnoImposta>
      <iv:PartitaIVA>{cf}</iv:PartitaIVA>
      <iv:FirmaDichiarazione>1</iv:FirmaDichiarazione>
    </iv:Frontespizio>
    <iv:DatiContabili>
      <iv:Modulo>
        <iv:NumeroModulo>1</iv:NumeroModulo>
        <iv:Mese>{month}</iv:Mese>
        <iv:TotaleOperazioniAttive>1000,00</iv:TotaleOperazioniAttive>
        <iv:IvaEsigibile>220,00</iv:IvaEsigibile>
        <iv:IvaDovuta>220,00</iv:IvaDovuta>
      </iv:Modulo>
    </iv:DatiContabili>
  </iv:Comunicazione>
</iv:Fornitura>
"""
OUTSIDE_SUPPLIER = "07111110032"  # an outside sender's VAT number (valid check digit)
NEW_CUSTOMER = "12345670017"  # a customer without an account when its invoice arrives


class _Receiver(BaseHTTPRequestHandler):
    """A callback endpoint on this machine (the demo profile allows loopback): answers 204."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _installation(workdir: Path) -> Iterator[Any]:
    """A fresh demo installation in `workdir`, run in this process on a manual clock."""
    os.environ.update(
        VARCO_DATA_DIR=str(workdir / "data"),
        VARCO_PROFILE="demo",
        VARCO_IP_LIMITS_ENABLED="false",  # several sign-ins in a minute from one address
    )
    for name in ("VARCO_DATABASE_URL", "VARCO_REDIS_URL"):
        os.environ.pop(name, None)
    from huey import SqliteHuey

    from varco import jobs_list
    from varco.accounts.demo import seed_demo_accounts
    from varco.core import migrate
    from varco.core.clock import ManualClock, SystemClock, use_clock
    from varco.core.db import Database, set_database, unit_of_work
    from varco.core.jobs import JobQueue, set_queue
    from varco.settings import get_settings

    get_settings.cache_clear()
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    today = SystemClock().now().date()
    clock = ManualClock(datetime.combine(today, time(8, 0), tzinfo=UTC))
    use_clock(clock)
    url = settings.database_url or f"sqlite:///{settings.data_dir / 'varco.sqlite3'}"
    migrate.upgrade(url)
    database = Database(url)
    set_database(database)
    queue = JobQueue(SqliteHuey("varco-openapi-examples", filename=str(workdir / "huey.sqlite3")))
    jobs_list.install()
    set_queue(queue)
    with unit_of_work() as session:
        seed_demo_accounts(session, settings, clock)
    try:
        yield queue
    finally:
        set_queue(None)
        set_database(None)
        database.dispose()


class Exchange:
    """Calls through the application; what each operation was sent and answered, by operation."""

    def __init__(self, client: Any, settle: Callable[[], None]) -> None:
        self.client = client
        self.settle = settle  # a minute of the server's background work
        self.token = self.admin = ""  # demo-premium's and demo-admin's access tokens
        self.recorded: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, str] = {}  # real value -> fake value

    def call(
        self,
        method: str,
        template: str,
        *,
        token: str | None = None,
        path: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        json_body: Any = None,
        form: dict[str, str] | None = None,
    ) -> Any:
        """One call, which must succeed; its JSON answer (None for other media types)."""
        url = template.format(**(path or {}))
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        answer = self.client.request(method, url, params=query, headers=sent, json=json_body, data=form)
        if not 200 <= answer.status_code < 300:
            raise SystemExit(f"{method} {url}: {answer.status_code} {answer.text[:2000]}")
        media = answer.headers.get("content-type", "").split(";")[0]
        entry = self.recorded.setdefault(f"{method} {template}", {"parameters": {}, "responses": {}})
        for name, value in {**(path or {}), **(query or {}), **(headers or {})}.items():
            entry["parameters"].setdefault(name, value)
        if json_body is not None or form is not None:
            media_sent = "application/json" if form is None else "application/x-www-form-urlencoded"
            entry.setdefault("request", {"mediaType": media_sent, "body": form or json_body})
        body: Any = None
        if media == "application/json":
            body = answer.json()
        elif media.startswith("text/"):
            body = answer.text
        entry["responses"].setdefault(str(answer.status_code), {"mediaType": media, "body": body})
        return answer.json() if media == "application/json" else None

    def sign_in(self, username: str) -> str:
        form = {"grant_type": "password", "username": username, "password": f"{username}-pw"}
        issued = self.call("POST", "/auth/signin", form=form)
        self.secrets[issued["access_token"]] = FAKE_ACCESS_TOKEN
        self.secrets[issued["refresh_token"]] = FAKE_REFRESH_TOKEN
        return issued["access_token"]

    def keep_secret(self, answer: dict[str, Any]) -> None:
        """A callback secret, shown once: fake in the examples, its hint with it."""
        self.secrets[answer["secret"]] = FAKE_SECRET
        self.secrets[answer["secretHint"]] = FAKE_SECRET[-4:]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def record(workdir: Path) -> dict[str, Any]:
    """Every operation's exchange on a fresh installation in `workdir`, sanitized."""
    with _installation(workdir) as queue, _receiver() as receiver:
        from fastapi.testclient import TestClient

        from varco.app import create_app

        with TestClient(create_app(), raise_server_exceptions=True) as client:
            exchange = Exchange(client, _settler(queue))
            _run(exchange, receiver)
    return sanitized(exchange.recorded, exchange.secrets, receiver)


def _settler(queue: Any) -> Callable[[], None]:
    """What a running `varco serve` does in a minute: its worker runs the queued jobs (the simulated
    SDI answers at once), its scheduler the periodic work (preservation packages among it)."""
    from varco.core import jobs
    from varco.core.clock import current_clock

    def settle() -> None:
        queue.drain()
        current_clock().advance(timedelta(minutes=1))
        jobs.run_periodic()
        queue.drain()

    return settle


@dataclass(frozen=True)
class Files:
    """What the exchange sends: invoices, a signed one, a signed communication, two from outside."""

    invoice: bytes
    signed: bytes
    communication: bytes
    incoming: bytes  # from an outside sender to demo-premium
    stray: bytes  # from an outside sender to a customer without an account yet


def _files() -> Files:
    from varco.accounts import service as accounts
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.invoices import signing
    from varco.invoices.examples import fresh_invoice
    from varco.settings import get_settings

    settings, now = get_settings(), current_clock().now()

    def invoice(transmitter: str, supplier: str, customer: str | None) -> bytes:
        return fresh_invoice(
            "FPR12", transmitter_id=transmitter, supplier_vat=supplier, customer_vat=customer, now=now
        )

    with unit_of_work() as session:
        premium = accounts.get_by_username(session, "demo-premium")
        identity = signing.identity_for(session, premium, "demo-credential", "demo")
        own = settings.transmitter_id
        li = LI_XML.format(cf=premium.fiscal_code, year=now.year, month=now.month).encode()
        return Files(
            invoice=invoice(own, premium.vat_code, None),
            signed=signing.sign_cades(invoice(own, premium.vat_code, None), identity),
            communication=signing.sign_cades(li, identity),
            incoming=invoice(f"IT{OUTSIDE_SUPPLIER}", OUTSIDE_SUPPLIER, premium.vat_code),
            stray=invoice(f"IT{OUTSIDE_SUPPLIER}", OUTSIDE_SUPPLIER, NEW_CUSTOMER),
        )


def _run(x: Exchange, receiver: str) -> None:
    files = _files()
    x.call("GET", "/health")
    x.call("GET", "/health/ready")
    x.token, x.admin = x.sign_in("demo-premium"), x.sign_in("demo-admin")
    x.call("GET", "/auth/userInfo", token=x.token)
    x.call("GET", "/api/v2/account/settings", token=x.token)
    x.call("PUT", "/api/v2/account/settings", token=x.token, json_body={"preflightSdiControls": False})
    hook = _callbacks(x, receiver)  # first: the deliveries then hold the events of everything below
    _multisellers(x)
    _simulator_rules(x)
    sent = _transmission(x, files)
    received = _inbound(x, files)
    _searches(x, sent, received["filename"])
    _esito(x, received)
    _communications(x, files)
    x.call("POST", "/api/v2/admin/sdi/advance", token=x.admin, json_body={"duration": "1h"})
    x.call("GET", "/api/v2/events", token=x.token, query={"limit": 5})
    x.settle()
    x.call("GET", "/api/v2/callbacks/{callback_id}/deliveries", token=x.token, path=hook, query={"limit": 3})
    x.call("DELETE", "/api/v2/callbacks/{callback_id}", token=x.token, path=hook)
    x.call("GET", "/api/v2/admin/audit", token=x.admin, query={"kind": "auth.signin", "page": 1, "size": 3})


def _callbacks(x: Exchange, receiver: str) -> dict[str, str]:
    """Register an endpoint (the receiver on this machine), test it, rotate its secret."""
    hook = x.call(
        "POST",
        "/api/v2/callbacks",
        token=x.token,
        json_body={
            "url": f"{receiver}/varco/events",
            "events": ["createInvoice", "updateInvoiceStatus", "updateUsage"],
            "description": "ERP: invoice states",
        },
    )
    x.keep_secret(hook)
    hook_id = {"callback_id": hook["id"]}
    x.call("GET", "/api/v2/callbacks", token=x.token)
    x.call("GET", "/api/v2/callbacks/{callback_id}", token=x.token, path=hook_id)
    x.call("POST", "/api/v2/callbacks/{callback_id}/test", token=x.token, path=hook_id)
    x.keep_secret(x.call("POST", "/api/v2/callbacks/{callback_id}/secret", token=x.token, path=hook_id))
    x.call("POST", "/api/v2/callbacks/{callback_id}/enable", token=x.token, path=hook_id)
    return hook_id


def _multisellers(x: Exchange) -> None:
    """demo-basic has delegated demo-premium: its list, detail and report."""
    wanted = {"countryCode": "IT", "status": "ACTIVE", "size": 10, "page": 1}
    assignor = x.call("GET", "/auth/multicedenti", token=x.token, query=wanted)["content"][0]
    x.call("GET", "/auth/multicedenti", token=x.token, query={"vatCode": assignor["vatCode"]})
    x.call("GET", "/auth/multicedenti/{id}", token=x.token, path={"id": assignor["id"]})
    x.call("POST", "/api/v2/report", token=x.token)  # 202: being prepared
    x.settle()
    x.call("POST", "/api/v2/report", token=x.token)
    x.call("POST", "/api/v2/multicedenti/report", token=x.token)


def _simulator_rules(x: Exchange) -> None:
    scenario = {"recipientCode": "0000000", "outcome": "RC", "delay": "30s"}
    x.call("POST", "/api/v2/admin/sdi/scenarios", token=x.admin, json_body=scenario)
    x.call("GET", "/api/v2/admin/sdi/scenarios", token=x.admin)
    x.call("DELETE", "/api/v2/admin/sdi/scenarios", token=x.admin, query={"recipientCode": "0000000"})


def _transmission(x: Exchange, files: Files) -> str:
    """Upload an invoice and a signed one; the queue and the simulated SDI take them to Consegnata."""
    sent = x.call(
        "POST",
        "/services/invoice/upload",
        token=x.token,
        headers={"Idempotency-Key": IDEMPOTENCY_KEY},
        json_body={"dataFile": b64(files.invoice), "skipExtraSchema": False, "dryRun": False},
    )
    signed = {"dataFile": b64(files.signed), "skipExtraSchema": False, "dryRun": False}
    x.call("POST", "/services/invoice/uploadSigned", token=x.token, json_body=signed)
    x.settle()
    return sent["uploadFileName"]


def _inbound(x: Exchange, files: Files) -> dict[str, Any]:
    """An invoice from an outside sender to demo-premium; another to a customer without an account,
    kept aside until the account exists."""
    from varco.accounts import service as accounts
    from varco.core.clock import current_clock
    from varco.core.db import unit_of_work
    from varco.settings import get_settings

    received = x.call(
        "POST", "/api/v2/admin/sdi/inject", token=x.admin, json_body={"file": b64(files.incoming)}
    )
    x.call("POST", "/api/v2/admin/sdi/inject", token=x.admin, json_body={"file": b64(files.stray)})
    x.call("GET", "/api/v2/admin/sdi/unroutable", token=x.admin)
    customer = accounts.NewAccount(
        username="new-customer",
        password="new-customer-pw",
        description="Nuovo Cliente S.r.l.",
        vat_code=NEW_CUSTOMER,
        fiscal_code=NEW_CUSTOMER,
    )
    with unit_of_work() as session:  # what an operator does with `varco accounts create`
        accounts.create_account(session, customer, get_settings(), current_clock())
    x.call("POST", "/api/v2/admin/sdi/redeliver", token=x.admin)
    x.settle()
    return received


def _esito(x: Exchange, received: dict[str, Any]) -> None:
    """The customer outcome on the received invoice."""
    x.call(
        "POST",
        "/services/invoice/in/sendEsitoCommittente",
        token=x.token,
        headers={"Idempotency-Key": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"},
        json_body={
            "filename": received["filename"],
            "sdiId": received["sdiId"],
            "esito": "EC01",
            "descrizione": "Fattura accettata",
            "messageId": "",
        },
    )
    x.settle()
    invoice = {"filename": received["filename"]}
    x.call("GET", "/services/invoice/in/sendEsitoCommittente/{filename}", token=x.token, path=invoice)


def _communications(x: Exchange, files: Files) -> None:
    """A financial communication through version 2, another through version 1."""
    created = x.call(
        "POST",
        "/api/v2/comfin",
        token=x.token,
        headers={"Idempotency-Key": "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"},
        json_body={"userId": "demo-premium", "comunicationType": "LI", "dataFile": b64(files.communication)},
    )
    x.settle()
    request_id = {"requestId": created["requestId"]}
    x.call("GET", "/api/v2/comfin/{requestId}", token=x.token, path=request_id)
    x.call("GET", "/api/v2/comfin/{requestId}/pdd", token=x.token, path=request_id)
    credentials = {"userName": "demo-premium", "password": "demo-premium-pw"}
    create = {
        **credentials,
        "userID": "demo-premium",
        "comunicationType": "LI",
        "dataFile": b64(files.communication),
    }
    v1 = x.call("POST", "/services/ClientRequest/CreateTransmissionRequest", json_body=create)
    x.settle()
    asked = {**credentials, "requestID": v1["requestID"]}
    x.call("POST", "/services/ClientRequest/GetTransmissionInfoRequest", json_body=asked)
    x.call("POST", "/services/ClientRequest/pdd", json_body=asked)


def _searches(x: Exchange, out_name: str, in_name: str) -> None:
    """Version 2 and version 1 read paths on the invoice sent (out) and the one received (in)."""
    from varco.core.clock import current_clock

    today = current_clock().now().date()
    window = {
        "creationStartDate": f"{today - timedelta(days=1)}T00:00:00+01:00",
        "creationEndDate": f"{today}T23:59:59+01:00",
    }
    for direction, name in (("out", out_name), ("in", in_name)):
        base = f"/api/v2/invoices-{direction}"
        found = x.call("GET", base, token=x.token, query={**window, "page": 1, "size": 10})
        record = next(r for r in found["content"] if r["filename"] == name)
        by_id = {"id": record["id"]}
        detail_query: dict[str, Any] = {**by_id, "includeFile": True, "includePdf": False}
        if direction == "in":
            detail_query["includeUnsignedFile"] = True
        x.call("GET", f"{base}/detail", token=x.token, query=detail_query)
        x.call("GET", f"{base}/detail", token=x.token, query={"filename": name})
        x.call("GET", f"{base}/detail", token=x.token, query={"idSdi": record["idSdi"]})
        x.call("GET", f"{base}/zip", token=x.token, query={"filename": name})
        x.call("GET", f"{base}/pdd", token=x.token, query={"idSdi": record["idSdi"]})
        listed = x.call("GET", f"{base}/notifications", token=x.token, query=by_id)
        first = listed["notifications"][0]["filename"]
        x.call("GET", f"{base}/notifications/detail", token=x.token, query={"filename": first})
        job = x.call(
            "POST",
            f"{base}/download",
            token=x.token,
            json_body={"ids": [str(record["id"])], "downloadTypes": ["XML", "NOTIFICATIONS"]},
        )
        x.settle()
        x.call("GET", "/api/v2/download/{jobId}", token=x.token, path={"jobId": job["jobId"]})
        _version_1(x, direction, record, first)


def _version_1(x: Exchange, direction: str, record: dict[str, Any], notification: str) -> None:
    base, notes = f"/services/invoice/{direction}", f"/services/notification/{direction}"
    name, invoice_id = record["filename"], {"invoiceId": record["id"]}
    x.call(
        "GET",
        f"{base}/findByUsername",
        token=x.token,
        query={
            "username": record["username"],
            "page": 1,
            "size": 10,
            "vatcodeSender": record["sender"]["vatCode"],
        },
    )
    files = {"includeFile": False, "includePdf": False}
    x.call("GET", f"{base}/getByFilename", token=x.token, query={"filename": name, **files})
    x.call("GET", f"{base}/getByIdSdi", token=x.token, query={"idSdi": record["idSdi"], **files})
    x.call("GET", f"{base}/getZipByFilename", token=x.token, query={"filename": name})
    x.call("GET", f"{base}/pdd", token=x.token, query={"invoiceFilename": name})
    x.call("GET", f"{base}/{{invoiceId}}", token=x.token, path=invoice_id, query=files)
    if direction == "in":
        x.call(
            "GET",
            f"{base}/getInvoiceWithUnsignedFile",
            token=x.token,
            query={"filename": name, "includeFile": True},
        )
    x.call("GET", f"{notes}/getByFilename", token=x.token, query={"filename": notification})
    x.call("GET", f"{notes}/getByInvoiceFilename", token=x.token, query={"invoiceFilename": name})
    x.call("GET", f"{notes}/{{invoiceId}}", token=x.token, path=invoice_id)


def sanitized(recorded: dict[str, Any], secrets: dict[str, str], receiver: str) -> dict[str, Any]:
    """The recording with nothing real left to leak and nothing too long to read."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        if not isinstance(value, str):
            return value
        if value in secrets:
            return secrets[value]
        for real, fake in secrets.items():
            if len(real) > 8:
                value = value.replace(real, fake)
        value = _REQUEST_ID.sub(REQUEST_ID, value.replace(receiver, RECEIVER))
        if len(value) > 2 * BASE64_KEPT and _BASE64.fullmatch(value):
            value = f"{value[:BASE64_KEPT]}…[base64 shortened: {len(value)} characters in full]"
        return value

    return {key: clean(recorded[key]) for key in sorted(recorded)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default: {OUTPUT}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="varco-openapi-") as workdir:
        examples = record(Path(workdir))
    args.output.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(examples)} operations recorded in {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
