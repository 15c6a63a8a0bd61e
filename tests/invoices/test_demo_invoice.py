"""`varco demo invoice`: a fresh invoice from an account that passes every check, as upload and the
simulated SDI apply them (to Consegnata), in each format, signed on request."""

from __future__ import annotations

import base64

import pytest
from typer.testing import CliRunner

from tests.factories import bearer, make_account, sign_in
from tests.sdi.factories import state
from varco.accounts.models import Account
from varco.cli import app
from varco.core.db import unit_of_work
from varco.invoices import signing
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceState as S

runner = CliRunner()
VAT = "01234560017"


def generate(*args: str) -> bytes:
    result = runner.invoke(app, ["demo", "invoice", *args])
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


@pytest.mark.parametrize("fmt", ["FPR12", "FPA12", "FSM10", "TD17"])
def test_each_format_is_accepted_and_delivered(client, queue, fmt):
    account = make_account(vat_code=VAT)
    token = sign_in(client, account.username)
    first, second = (
        generate("--account", account.username, "--format", fmt),
        generate("--account", account.username, "--format", fmt),
    )
    assert first != second  # numbered anew each time
    names = []
    for content in (first, second):
        body = {"dataFile": base64.b64encode(content).decode()}
        answer = client.post("/services/invoice/upload", json=body, headers=bearer(token)).json()
        assert answer["errorCode"] == "0000", answer
        names.append(answer["uploadFileName"])
    queue.drain()
    with unit_of_work() as session:
        mine = (Invoice.account_id == account.id, Invoice.direction == "out")
        ids = [session.query(Invoice.id).filter(Invoice.filename == name, *mine).scalar() for name in names]
    # delivered (a PA invoice goes on to 8: the simulated office accepts it by default)
    assert {state(invoice_id) for invoice_id in ids} <= {S.CONSEGNATA, S.ACCETTATA}, (fmt, names)


def test_signed_for_upload_signed(client, queue, demo_pkcs12, clock):
    account = make_account(vat_code=VAT)
    with unit_of_work() as session:
        signing.set_identity(
            session, session.get_one(Account, account.id), "cred", "dom", demo_pkcs12, "p12-pw", clock.now()
        )
    p7m = generate("--account", account.username, "--sign", "--credential", "cred", "--domain", "dom")
    assert p7m.startswith(b"\x30")  # DER, not XML
    body = {"dataFile": base64.b64encode(p7m).decode()}
    token = sign_in(client, account.username)
    answer = client.post("/services/invoice/uploadSigned", json=body, headers=bearer(token)).json()
    assert answer["errorCode"] == "0000" and answer["uploadFileName"].endswith(".xml.p7m"), answer
    without = runner.invoke(
        app, ["demo", "invoice", "--account", account.username, "--sign", "--domain", "x"]
    )
    assert without.exit_code == 2 and "error:" in without.output


def test_bad_input_is_one_line_and_exit_2():
    for args, words in (
        (["--to", "123"], "VAT number"),
        (["--format", "FPR11"], "--format"),
        (["--account", "nobody-at-all"], "no account"),
    ):
        result = runner.invoke(app, ["demo", "invoice", *args])
        assert result.exit_code == 2 and words in result.output, result.output


def test_to_does_not_apply_to_a_self_billing_invoice():
    result = runner.invoke(app, ["demo", "invoice", "--format", "TD17", "--to", VAT])
    assert result.exit_code != 0 and "--to does not apply to TD17" in result.output
