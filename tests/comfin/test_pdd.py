"""Preservation packages of communications: one chain per account, tampering found, Range downloads."""

from __future__ import annotations

from sqlalchemy import update
from typer.testing import CliRunner

from tests.comfin.support import SUPPLIER_VAT, b64, df_xml, li_xml, sign
from tests.factories import bearer, make_account, sign_in
from varco.cli import app
from varco.core.blobs import Blob
from varco.core.db import unit_of_work
from varco.preservation.models import PreservationPackage

runner = CliRunner()


def sent(client, queue, pkcs12, token, kind="LI") -> str:
    xml = li_xml() if kind == "LI" else df_xml()
    body = {"comunicationType": kind, "dataFile": b64(sign(pkcs12, xml))}
    request_id = client.post("/api/v2/comfin", json=body, headers=bearer(token)).json()["requestId"]
    queue.drain()
    return request_id


def test_chain_links_packages_and_verify_finds_a_tampered_one(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    sent(client, queue, pkcs12, token, "LI")
    sent(client, queue, pkcs12, token, "DF")
    with unit_of_work() as session:
        chain = session.query(PreservationPackage).filter_by(account_id=account.id).order_by("sequence").all()
        assert [p.sequence for p in chain] == [1, 2]
        assert chain[0].previous_sha256 is None and chain[1].previous_sha256 == chain[0].sha256
        first_blob = chain[0].blob_id
    result = runner.invoke(app, ["pdd", "verify", account.username])
    assert result.exit_code == 0, result.output
    assert "2 packages" in result.output and "chain intact" in result.output
    with unit_of_work() as session:
        session.execute(update(Blob).where(Blob.id == first_blob).values(content=b"tampered"))
    result = runner.invoke(app, ["pdd", "verify", account.username])
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith("package 1 ")


def test_range_requests(client, queue, pkcs12):
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    request_id = sent(client, queue, pkcs12, token)
    url = f"/api/v2/comfin/{request_id}/pdd"
    whole = client.get(url, headers=bearer(token)).content
    size = len(whole)
    part = client.get(url, headers={**bearer(token), "Range": "bytes=0-9"})
    assert part.status_code == 206 and part.content == whole[:10]
    assert part.headers["content-range"] == f"bytes 0-9/{size}"
    tail = client.get(url, headers={**bearer(token), "Range": "bytes=-5"})
    assert tail.status_code == 206 and tail.content == whole[-5:]
    rest = client.get(url, headers={**bearer(token), "Range": "bytes=10-"})
    assert rest.status_code == 206 and whole[:10] + rest.content == whole
    beyond = client.get(url, headers={**bearer(token), "Range": f"bytes={size}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{size}"
    junk = client.get(url, headers={**bearer(token), "Range": "lines=1-2"})
    assert junk.status_code == 200 and junk.content == whole
