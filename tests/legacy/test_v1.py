"""§9 version-1 communication calls: credentials in the body, same data as version 2."""

from __future__ import annotations

from tests.comfin.support import OTHER_VAT, SUPPLIER_VAT, b64, li_xml, sign
from tests.factories import bearer, make_account, sign_in

V1 = "/services/ClientRequest"


def test_v1_create_info_pdd_match_v2(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT, password="pw-1")
    creds = {"userName": account.username, "password": "pw-1"}
    body = {
        **creds,
        "userID": account.username,
        "comunicationType": "LI",
        "dataFile": b64(sign(pkcs12, li_xml())),
    }
    created = client.post(f"{V1}/CreateTransmissionRequest", json=body)
    assert created.status_code == 200
    assert created.json()["errorCode"] == "" and created.json()["errorDescription"] == ""
    request_id = created.json()["requestID"]
    queue.drain()
    v1 = client.post(f"{V1}/GetTransmissionInfoRequest", json={**creds, "requestID": request_id}).json()
    v2 = client.get(
        f"/api/v2/comfin/{request_id}", headers=bearer(sign_in(client, account.username, "pw-1"))
    ).json()
    assert "status" not in v1 and v1["error"] == "Processed"
    assert v1["fileID"] == v2["fileId"]
    for field in (
        "result",
        "notifyResult",
        "elaboratedResult",
        "receiptTimestamp",
        "fileName",
        "pddAvailable",
    ):
        assert v1[field] == v2[field], field
    pdd = client.post(f"{V1}/pdd", json={**creds, "requestID": request_id})
    assert pdd.status_code == 200 and pdd.headers["content-type"] == "application/zip"
    part = client.post(f"{V1}/pdd", json={**creds, "requestID": request_id}, headers={"Range": "bytes=0-3"})
    assert part.status_code == 206 and part.content == pdd.content[:4]


def test_v1_errors_are_codes_in_the_body(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT, password="pw-1")
    creds = {"userName": account.username, "password": "pw-1"}
    wrong = client.post(
        f"{V1}/CreateTransmissionRequest",
        json={"userName": account.username, "password": "nope", "comunicationType": "LI", "dataFile": "x"},
    )
    assert wrong.status_code == 200
    assert wrong.json()["errorCode"] == "AR02" and wrong.json()["requestID"] == ""
    stranger = {**creds, "comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml(OTHER_VAT)))}
    assert client.post(f"{V1}/CreateTransmissionRequest", json=stranger).json()["errorCode"] == "AR09"
    info = client.post(
        f"{V1}/GetTransmissionInfoRequest", json={"userName": account.username, "password": "x"}
    )
    assert info.json()["result"] == "AR02"
    assert client.post(f"{V1}/GetTransmissionInfoRequest", json=creds).json()["result"] == "AR04"
    assert (
        client.post(
            f"{V1}/pdd", json={"userName": account.username, "password": "x", "requestID": "a"}
        ).status_code
        == 401
    )
    body = {**creds, "comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))}
    request_id = client.post(f"{V1}/CreateTransmissionRequest", json=body).json()["requestID"]
    assert client.post(f"{V1}/pdd", json={**creds, "requestID": request_id}).status_code == 404  # not yet


def test_v1_accepts_a_bearer_instead_of_body_credentials(client, queue, pkcs12):
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    body = {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))}
    created = client.post(f"{V1}/CreateTransmissionRequest", json=body, headers=bearer(token))
    assert created.json()["errorCode"] == "" and created.json()["requestID"]
