"""`Idempotency-Key` on POST /api/v2/comfin: a blind retry creates one request (docs/upload.md)."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from tests.comfin.support import SUPPLIER_VAT, b64, li_xml, sign
from tests.factories import bearer, make_account, sign_in
from varco.comfin.models import ComfinRequest
from varco.core.db import unit_of_work


def test_a_communication_sent_twice_with_one_key_is_one_request(client, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    headers = bearer(sign_in(client, account.username)) | {"Idempotency-Key": str(uuid.uuid4())}
    body = {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))}
    first = client.post("/api/v2/comfin", json=body, headers=headers)
    again = client.post("/api/v2/comfin", json=body, headers=headers)
    assert first.status_code == again.status_code == 200, first.text
    assert again.json() == first.json()
    other = client.post("/api/v2/comfin", json={**body, "comunicationType": "DF"}, headers=headers)
    assert other.status_code == 409 and other.json()["errorCode"] == "0409"
    with unit_of_work() as session:
        count = select(func.count()).select_from(ComfinRequest).where(ComfinRequest.account_id == account.id)
        assert session.scalar(count) == 1
