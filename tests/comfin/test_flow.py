"""v2 happy paths: create → job → simulated SDI esito → info → preservation package."""

from __future__ import annotations

import base64
import io
import json
import zipfile

import pytest
from lxml import etree
from sqlalchemy import select

from tests.comfin.support import SUPPLIER_VAT, b64, df_xml, li_xml, sign, zip_of
from tests.factories import bearer, make_account, sign_in
from varco.comfin import xsd
from varco.comfin.models import ComfinRequest
from varco.core.blobs import Blob
from varco.core.db import unit_of_work


def send(client, token, kind: str, data: bytes, user_id: str | None = None):
    body = {"comunicationType": kind, "dataFile": b64(data)}
    if user_id is not None:
        body["userId"] = user_id
    return client.post("/api/v2/comfin", json=body, headers=bearer(token))


@pytest.mark.parametrize("kind", ["LI", "DF"])
def test_signed_communication_is_sent_answered_and_preserved(client, queue, pkcs12, kind):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    xml = li_xml() if kind == "LI" else df_xml()
    created = send(client, token, kind, sign(pkcs12, xml), user_id=account.username)
    assert created.status_code == 200, created.text
    request_id = created.json()["requestId"]
    assert 8 <= len(request_id) <= 16

    pending = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert pending["result"] == "SF01"
    assert pending["elaboratedResult"] is None and pending["pddAvailable"] is False
    assert pending["fileName"].startswith(f"IT{SUPPLIER_VAT}_{kind}_") and pending["fileName"].endswith(
        ".xml"
    )
    with unit_of_work() as session:  # the stored file carries the request's name, not a placeholder
        blob_name = session.scalar(
            select(Blob.name)
            .join(ComfinRequest, ComfinRequest.blob_id == Blob.id)
            .where(ComfinRequest.request_id == request_id)
        )
    assert blob_name == pending["fileName"]

    queue.drain()
    info = client.get(f"/api/v2/comfin/{request_id}", headers=bearer(token)).json()
    assert info["result"] == "SF02"
    assert info["elaboratedResult"] == "ES01"
    assert info["status"] == "PROCESSED"
    assert info["fileId"] and info["fileId"].isdigit()
    assert info["receiptTimestamp"] == "2026-11-23 09:00:00"  # 08:00 UTC in Rome
    assert info["pddAvailable"] is True
    esito = etree.fromstring(base64.b64decode(info["notifyResult"]))
    assert xsd.errors(esito, "ESITO") == []
    assert esito.findtext("Esito") == "ES01" and esito.findtext("NomeFile") == info["fileName"]

    pdd = client.get(f"/api/v2/comfin/{request_id}/pdd", headers=bearer(token))
    assert pdd.status_code == 200
    assert pdd.headers["content-type"] == "application/zip"
    assert pdd.headers["accept-ranges"] == "bytes"
    stem = info["fileName"].removesuffix(".xml")
    assert pdd.headers["content-disposition"] == f"attachment; filename={stem}.conservazione.zip"
    with zipfile.ZipFile(io.BytesIO(pdd.content)) as archive:
        index = json.loads(archive.read("index.json"))
        assert index["communication"]["requestId"] == request_id
        assert [f["role"] for f in index["files"]] == ["communication", "notification"]
        assert archive.read(f"{info['fileName']}.p7m").startswith(b"\x30")  # the signed file as sent


def test_zip_of_several_signed_files_is_one_request(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    bundle = zip_of({"a.xml.p7m": sign(pkcs12, li_xml()), "b.xml.p7m": sign(pkcs12, li_xml(year="2025"))})
    created = send(client, token, "LI", bundle)
    assert created.status_code == 200, created.text
    queue.drain()
    info = client.get(f"/api/v2/comfin/{created.json()['requestId']}", headers=bearer(token)).json()
    assert info["fileName"].endswith(".zip")
    assert (info["result"], info["elaboratedResult"], info["pddAvailable"]) == ("SF02", "ES01", True)


def test_another_users_request_is_404(client, queue, pkcs12):
    owner = make_account(vat_code=SUPPLIER_VAT)
    request_id = send(client, sign_in(client, owner.username), "LI", sign(pkcs12, li_xml())).json()[
        "requestId"
    ]
    stranger = sign_in(client, make_account().username)
    assert client.get(f"/api/v2/comfin/{request_id}", headers=bearer(stranger)).status_code == 404
    assert client.get(f"/api/v2/comfin/{request_id}/pdd", headers=bearer(stranger)).status_code == 404
    assert client.get("/api/v2/comfin/nope", headers=bearer(stranger)).status_code == 404


def test_pdd_is_404_until_the_package_exists(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    request_id = send(client, token, "DF", sign(pkcs12, df_xml())).json()["requestId"]
    assert client.get(f"/api/v2/comfin/{request_id}/pdd", headers=bearer(token)).status_code == 404
