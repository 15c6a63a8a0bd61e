"""`varco preservation verify` and `seal-pending`."""

from __future__ import annotations

from sqlalchemy import update
from typer.testing import CliRunner

from tests.search.factories import premium, received
from varco.cli import app
from varco.core.blobs import Blob
from varco.core.db import unit_of_work
from varco.invoices.models import Invoice
from varco.preservation.models import PreservationPackage

runner = CliRunner()


def sealed(invoice_id: int) -> bool:
    with unit_of_work() as session:
        return session.get(Invoice, invoice_id).pdd_available


def test_seal_pending_then_verify_then_tamper(client):
    owner = premium(client).account
    got = received(owner)
    while not sealed(got.id):  # other tests may have left more final invoices than one batch
        result = runner.invoke(app, ["preservation", "seal-pending"])
        assert result.exit_code == 0 and "sealed" in result.output and "sealed 0 " not in result.output
    result = runner.invoke(app, ["preservation", "verify", owner.username])
    assert result.exit_code == 0, result.output
    assert f"1 packages of {owner.username}: chain intact" in result.output
    with unit_of_work() as session:
        package = session.query(PreservationPackage).filter_by(invoice_id=got.id).one()
        session.execute(update(Blob).where(Blob.id == package.blob_id).values(content=b"changed"))
    result = runner.invoke(app, ["preservation", "verify", owner.username])
    assert result.exit_code == 1 and "SHA-256 of the ZIP differs" in result.output
    assert runner.invoke(app, ["preservation", "verify", "nobody-here"]).exit_code == 2
