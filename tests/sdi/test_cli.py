"""`varco sdi ...` through the real command line app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

from typer.testing import CliRunner

from tests.factories import make_account
from tests.sdi.factories import (
    invoice_file,
    received_by,
    send_invoice,
    state,
    supplier_account,
    unique_code,
    valid_vat,
)
from varco.cli import app
from varco.invoices.states import InvoiceState as S

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_scenario_set_list_clear(db, clock):
    code = unique_code()
    result = run("sdi", "scenario", "set", "--recipient-code", code, "--outcome", "MC", "--delay", "30s")
    assert result.exit_code == 0, result.output
    assert f"recipient code {code}\toutcome MC\tdelay 30s" in result.output
    assert run("sdi", "scenario", "set", "--filename", "IT1_X.xml", "--esito-outcome", "SE").exit_code == 0
    listed = run("sdi", "scenario", "list").output
    assert "simulated now 2026-11-23T08:00:00+00:00 (offset 0s)" in listed
    assert f"recipient code {code}" in listed and "filename IT1_X.xml\tesito SE" in listed
    assert run("sdi", "scenario", "clear", "--recipient-code", code).output.strip() == "1 rule(s) deleted"
    assert run("sdi", "scenario", "clear").output.strip() == "1 rule(s) deleted"
    assert "no rules" in run("sdi", "scenario", "list").output


def test_bad_scenario_is_one_line_and_exit_2(db, clock):
    result = run("sdi", "scenario", "set", "--recipient-code", "X", "--outcome", "LOST")
    assert result.exit_code == 2 and "error: invalid outcome 'LOST'" in result.output
    assert run("sdi", "advance", "soon").exit_code == 2


def test_advance_runs_what_became_due(db, clock, queue):
    code = unique_code()[:6]
    assert run("sdi", "scenario", "set", "--recipient-code", code, "--outcome", "DT").exit_code == 0
    account = supplier_account()
    sent = send_invoice(
        account, invoice_file("FPA12.xml", supplier_vat=account.vat_code, codice_destinatario=code)
    )
    queue.drain()
    result = run("sdi", "advance", "14d")
    assert result.exit_code == 0 and "simulated now 2026-12-07T08:00:00+00:00" in result.output
    assert state(sent.id) == S.CONSEGNATA
    result = run("sdi", "advance", "1d")
    assert state(sent.id) == S.DECORRENZA_TERMINI
    assert "step(s) run" in result.output


def test_inject_unroutable_redeliver(db, clock, tmp_path):
    vat = valid_vat()
    name = f"IT{valid_vat()}_{uuid.uuid4().hex[:5].upper()}.xml"
    path = tmp_path / name
    path.write_bytes(invoice_file(client_vat=vat))
    result = run("sdi", "inject", str(path))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"kept aside {name}") and vat in result.output
    assert name in run("sdi", "unroutable").output
    account = make_account(vat_code=vat)
    result = run("sdi", "redeliver")
    assert f"{name} delivered as invoice" in result.output
    assert [r.filename for r in received_by(account.id)] == [name]
    assert name not in run("sdi", "unroutable").output

    again = tmp_path / "copy.xml"
    again.write_bytes(invoice_file(client_vat=vat, transmitter=valid_vat(), progressivo="C1"))
    result = run("sdi", "inject", str(again))
    assert result.exit_code == 0 and f"to {account.username}" in result.output


def test_inject_discarded_file_exits_1(db, clock, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_bytes(invoice_file("00400_line_without_natura.xml", transmitter=valid_vat(), progressivo="B1"))
    result = run("sdi", "inject", str(path))
    assert result.exit_code == 1 and "00400" in result.output


def _varco(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "varco.cli", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_inject_in_a_fresh_process_queues_the_receipt_e_mail(tmp_path):
    """A real `varco sdi inject` process whose delivery queues a job (the e-mail receipt): the
    job handlers must be registered before the first commit, not from inside it."""
    env = {**os.environ, "VARCO_DATA_DIR": str(tmp_path), "VARCO_PROFILE": "demo"}
    env.pop("VARCO_DATABASE_URL", None)
    env.pop("VARCO_REDIS_URL", None)
    vat = valid_vat()
    made = _varco(env, "users", "create", "receiver", "--password", "pw-receiver-1", "--vat-code", vat)
    assert made.returncode == 0, made.stderr
    turn_on = (
        "from varco.accounts import service\n"
        "from varco.core.clock import current_clock\n"
        "from varco.core.db import unit_of_work\n"
        "from varco.mail import receipts\n"
        "with unit_of_work() as session:\n"
        "    account = service.get_by_username(session, 'receiver')\n"
        "    receipts.configure(\n"
        "        session, account, enabled=True, address='in@example.com', clock=current_clock()\n"
        "    )\n"
    )
    setup = subprocess.run(
        [sys.executable, "-c", turn_on], env=env, capture_output=True, text=True, timeout=120
    )
    assert setup.returncode == 0, setup.stderr
    path = tmp_path / f"IT{valid_vat()}_{uuid.uuid4().hex[:5].upper()}.xml"
    path.write_bytes(invoice_file(client_vat=vat))
    injected = _varco(env, "sdi", "inject", str(path))
    assert injected.returncode == 0, injected.stdout + injected.stderr
    assert "to receiver" in injected.stdout
    assert "Traceback" not in injected.stderr


def test_unmatched_lists_what_was_kept_aside(db, clock):
    from varco.core.db import unit_of_work
    from varco.sdi import inbound

    assert run("sdi", "unmatched").exit_code == 0
    name = f"IT01234567890_{uuid.uuid4().hex[:5]}_RC_001.xml"
    with unit_of_work() as session:
        inbound.unmatched(session, name, b"<x/>", None, "names no invoice of ours", clock)
    listed = run("sdi", "unmatched")
    assert (
        listed.exit_code == 0 and f"{name}\t" in listed.output and "names no invoice of ours" in listed.output
    )


def test_serve_sdicoop_names_what_its_configuration_lacks(db, tmp_path):
    assert run("sdi", "make-test-pki", str(tmp_path / "pki"), "--intermediary", "Bad Name").exit_code == 2
    made = run("sdi", "make-test-pki", str(tmp_path / "pki"), "--intermediary", "a")
    assert made.exit_code == 0 and (tmp_path / "pki" / "a-client.crt.pem").is_file()
    config = tmp_path / "sdi.json"
    server = {"certificate": "pki/sdi-server.crt.pem", "key": "pki/none.pem", "client_ca": "pki/ca.crt.pem"}
    client = {"certificate": "x", "key": "y", "ca_bundle": "z"}
    config.write_text(json.dumps({"server": server, "client": client, "intermediaries": []}))
    refused = run("sdi", "serve-sdicoop", "--config", str(config))
    assert refused.exit_code == 2 and "servertls key: no file at" in refused.output
    config.write_text('{"server": {}}')
    assert "Field required" in run("sdi", "serve-sdicoop", "--config", str(config)).output


def test_serve_with_an_sdicoop_port_needs_its_certificates(db):
    refused = run("serve", "--sdicoop-port", "8443")
    assert (
        refused.exit_code == 2
        and "--sdicoop-port needs --ssl-certfile or VARCO_SDICOOP_SERVER_CERT" in refused.output
    )
