"""A communication's ZIP is read within the archive_* settings: refused AR03, nothing stored (v2, v1)."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.comfin.support import SUPPLIER_VAT, b64, li_xml, sign, zip_of
from tests.factories import bearer, make_account, sign_in
from tests.fatturapa.archive_support import deflated, lying_zip, raw_zip
from varco.comfin.models import ComfinRequest
from varco.core.blobs import Blob
from varco.core.db import unit_of_work
from varco.invoices.models import UsageCounter

V1 = "/services/ClientRequest/CreateTransmissionRequest"


def post(client, token, data: bytes):
    body = {"comunicationType": "LI", "dataFile": b64(data)}
    return client.post("/api/v2/comfin", json=body, headers=bearer(token))


def refused_ar03(response) -> str:
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "AR03", response.text
    return response.json()["errorDescription"]


def stored(account_id: int) -> tuple[int, int, int]:
    """(requests, blobs, usage) of an account: what an accepted communication adds."""
    with unit_of_work() as session:
        return (
            session.scalar(select(func.count()).where(ComfinRequest.account_id == account_id)),
            session.scalar(select(func.count()).where(Blob.account_id == account_id)),
            session.scalar(select(func.count()).where(UsageCounter.account_id == account_id)),
        )


def test_lying_zip_is_refused_and_nothing_stored_v2(client):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    description = refused_ar03(post(client, token, lying_zip()))  # 1 GiB of zeros claiming 1,000 bytes
    assert "Incorrect file: the ZIP entry 'communication.p7m' inflates beyond the 1000 bytes" in description
    assert stored(account.id) == (0, 0, 0)


def test_lying_zip_is_refused_and_nothing_stored_v1(client):
    account = make_account(vat_code=SUPPLIER_VAT, password="pw-1")
    body = {
        "userName": account.username,
        "password": "pw-1",
        "comunicationType": "LI",
        "dataFile": b64(lying_zip()),
    }
    answer = client.post(V1, json=body)
    assert answer.status_code == 200
    assert answer.json()["errorCode"] == "AR03" and answer.json()["requestID"] == ""
    assert "inflates beyond the 1000 bytes" in answer.json()["errorDescription"]
    assert stored(account.id) == (0, 0, 0)


def test_each_archive_limit_is_a_setting(client, configure, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    li = sign(pkcs12, li_xml())
    three = zip_of({"a.p7m": li, "b.p7m": li, "c.p7m": li})
    configure(archive_max_entries=2)
    assert "more than 2 entries" in refused_ar03(post(client, token, three))
    configure(archive_max_entries=100, archive_max_entry_bytes=len(li) - 1)
    assert f"'a.p7m' is {len(li)} bytes inflated" in refused_ar03(post(client, token, three))
    configure(archive_max_entry_bytes=len(li), archive_max_total_bytes=2 * len(li))
    assert f"more than {2 * len(li)} bytes" in refused_ar03(post(client, token, three))
    assert stored(account.id) == (0, 0, 0)
    configure(archive_max_total_bytes=3 * len(li))
    assert post(client, token, three).status_code == 200  # every limit reached, none exceeded


def test_unsafe_or_encrypted_entries_are_refused(client, pkcs12):
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    li = sign(pkcs12, li_xml())
    assert "not a safe relative path" in refused_ar03(post(client, token, raw_zip(deflated("../a.p7m", li))))
    entry = deflated("a.p7m", li)
    encrypted = raw_zip(type(entry)(entry.name, bytes(12) + entry.raw, entry.crc, entry.size, flags=1))
    assert "'a.p7m' is encrypted" in refused_ar03(post(client, token, encrypted))
