"""Every §7.4 refusal code of the create call, with status and a specific message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.comfin.support import OTHER_VAT, SUPPLIER_VAT, b64, df_xml, li_xml, sign, tamper, zip_of
from tests.factories import bearer, make_account, make_basic, sign_in
from tests.fatturapa.ber_support import as_ber
from varco.accounts.models import DelegationStatus
from varco.core.db import unit_of_work
from varco.invoices.models import UsageCounter
from varco.settings import get_settings


def post(client, token, body):
    return client.post("/api/v2/comfin", json=body, headers=bearer(token))


def refused(response, code: str, status: int = 400) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["errorCode"] == code, body
    return body["errorDescription"]


def test_file_and_type_codes(client, pkcs12):
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    li = sign(pkcs12, li_xml())
    assert "missing" in refused(post(client, token, {"comunicationType": "LI"}), "AR01")
    assert "empty" in refused(post(client, token, {"comunicationType": "LI", "dataFile": ""}), "AR01")
    assert "base64" in refused(post(client, token, {"comunicationType": "LI", "dataFile": "@@@"}), "AR03")
    assert "XX" in refused(post(client, token, {"comunicationType": "XX", "dataFile": b64(li)}), "AR20")
    assert "not LI" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, df_xml()))}), "AR20"
    )
    assert "XSD" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml(year="1700")))}),
        "AR03",
    )
    assert "neither" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, b"<a/>"))}), "AR03"
    )
    assert "signature" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(li_xml())}), "AR21"
    )
    broken = tamper(li, b"<iv:Mese>9</iv:Mese>", b"<iv:Mese>8</iv:Mese>")
    assert "altered" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(broken)}), "AR08"
    )
    unsigned_in_zip = zip_of({"a.p7m": li, "b.xml": li_xml()})
    assert "b.xml" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(unsigned_in_zip)}), "AR21"
    )
    assert "no file" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": b64(zip_of({}))}), "AR01"
    )


def test_access_codes(client, pkcs12):
    premium = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, premium.username)
    stranger_li = b64(sign(pkcs12, li_xml(OTHER_VAT)))
    assert "neither you" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": stranger_li}), "AR09", 403
    )
    suspended = make_basic(premium, DelegationStatus.SUSPEND, vat_code=OTHER_VAT)
    assert "SUSPEND" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": stranger_li}), "AR02", 403
    )
    other = make_account()
    body = {"userId": other.username, "comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))}
    assert other.username in refused(post(client, token, body), "AR02", 403)
    assert suspended.username


def test_delegated_premium_sends_for_its_assignor(client, queue, pkcs12):
    premium = make_account(vat_code=SUPPLIER_VAT)
    assignor = make_basic(premium, vat_code=OTHER_VAT)
    token = sign_in(client, premium.username)
    body = {
        "userId": assignor.username,
        "comunicationType": "DF",
        "dataFile": b64(sign(pkcs12, df_xml(OTHER_VAT, client_vat=SUPPLIER_VAT))),
    }
    created = post(client, token, body)
    assert created.status_code == 200, created.text
    queue.drain()
    info = client.get(f"/api/v2/comfin/{created.json()['requestId']}", headers=bearer(token)).json()
    assert info["fileName"].startswith(f"IT{OTHER_VAT}_DF_")
    # §8.5: the delegated Premium pays
    with unit_of_work() as session:
        year = datetime(2026, 1, 1, tzinfo=UTC).year
        counter = session.query(UsageCounter).filter_by(account_id=premium.id, year=year).one()
        assert counter.count == 1


def test_annual_quota_is_ar10(client, pkcs12):
    limit = get_settings().tiers[0][1]
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    with unit_of_work() as session:
        session.add(UsageCounter(account_id=account.id, year=2026, count=limit))
    token = sign_in(client, account.username)
    response = post(client, token, {"comunicationType": "LI", "dataFile": b64(sign(pkcs12, li_xml()))})
    assert "limit" in refused(response, "AR10", 429).lower()
    assert timedelta(seconds=int(response.headers["Retry-After"])) > timedelta(0)


def test_an_unreadable_signature_is_ar08_not_a_server_error(client, pkcs12):
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    bogus = as_ber(sign(pkcs12, li_xml()), 1000, certificates_padding=b"\xa1\x00")  # an empty attr. cert.
    description = refused(post(client, token, {"comunicationType": "LI", "dataFile": b64(bogus)}), "AR08")
    assert "unreadable signature" in description


def test_a_file_over_the_size_limit_is_413_ar03_in_both_versions(client, configure):
    configure(max_upload_bytes=1000, max_file_body_bytes=100_000)  # the body passes, the file does not
    account = make_account(vat_code=SUPPLIER_VAT)
    token = sign_in(client, account.username)
    data_file = b64(b"x" * 5000)
    assert "at most 1000" in refused(
        post(client, token, {"comunicationType": "LI", "dataFile": data_file}), "AR03", status=413
    )
    v1 = client.post(
        "/services/ClientRequest/CreateTransmissionRequest",
        json={
            "userName": account.username,
            "password": "s3cret-pw",
            "comunicationType": "LI",
            "dataFile": data_file,
        },
    )
    assert v1.status_code == 413, v1.text
    assert v1.json()["errorCode"] == "AR03" and v1.json()["requestID"] == ""
