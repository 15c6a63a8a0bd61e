"""What a delegation's state allows (§1 Access, §5.8) and who pays for a transmission (§8.5), over HTTP."""

from __future__ import annotations

import pytest

from tests.accounts.delegation_support import delegate, payer_of, set_status
from tests.factories import bearer, make_account, make_basic, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.accounts.models import DelegationStatus
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.limits import annual

S = DelegationStatus
# Valid Italian VAT numbers for the accounts of a chain (the invoice's supplier is the taxpayer).
VATS = ["12345670017", "05555550028", "07111110032", "09876540015"]


def signin_form(client, username: str):
    return client.post(
        "/auth/signin", data={"grant_type": "password", "username": username, "password": "s3cret-pw"}
    )


def upload(client, token, supplier_vat: str = SUPPLIER_VAT):
    body = {"dataFile": b64(invoice_xml(supplier_vat=supplier_vat))}
    return client.post("/services/invoice/upload", json=body, headers=bearer(token))


def used(account) -> int:
    with unit_of_work() as session:
        return annual.used_transmissions(session, account.id, current_clock().now().year)


@pytest.mark.parametrize("status", [S.PENDING, S.SUSPEND, S.INACTIVE])
def test_a_basic_user_without_an_active_delegation_cannot_sign_in(client, status):
    basic = make_basic(delegate_to=make_account(), status=status)
    response = signin_form(client, basic.username)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert "active delegation" in response.json()["error_description"]


def test_a_basic_user_with_an_active_delegation_signs_in(client):
    basic = make_basic(delegate_to=make_account())
    assert sign_in(client, basic.username)["userName"] == basic.username


def test_suspending_stops_the_basic_users_tokens_and_resuming_restores_them(client):
    premium = make_account(vat_code="12345670017")
    basic = make_basic(vat_code=SUPPLIER_VAT)
    link = delegate(basic, premium)
    token = sign_in(client, basic.username)
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 200
    set_status(link.id, S.SUSPEND)
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 401
    assert upload(client, token).status_code == 401  # nor transmit
    assert signin_form(client, basic.username).status_code == 400
    set_status(link.id, S.ACTIVE)
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 200
    assert upload(client, token).json()["errorCode"] == "0000"


def test_a_revoked_delegation_stops_the_premium_transmitting_for_the_assignor(client):
    premium = make_account(vat_code="12345670017")
    basic = make_basic(vat_code=SUPPLIER_VAT)
    link = delegate(basic, premium)
    token = sign_in(client, premium.username)
    assert upload(client, token).json()["errorCode"] == "0000"
    set_status(link.id, S.INACTIVE)
    refused = upload(client, token).json()
    assert refused["errorCode"] == "0093" and "INACTIVE" in refused["errorDescription"]


# §8.5 attribution -------------------------------------------------------------------------------------


def test_premium_sending_for_its_own_taxpayer_pays_itself(client):
    premium = make_account(vat_code=SUPPLIER_VAT)
    assert upload(client, sign_in(client, premium.username)).json()["errorCode"] == "0000"
    assert used(premium) == 1
    assert payer_of(premium) == premium.username


def test_basic_user_token_counts_against_the_delegated_premium(client):
    premium = make_account(vat_code="12345670017")
    basic = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT)
    assert upload(client, sign_in(client, basic.username)).json()["errorCode"] == "0000"
    assert (used(premium), used(basic)) == (1, 0)


def test_premium_delegating_a_second_premium_counts_against_the_second(client):
    first = make_account(vat_code=SUPPLIER_VAT)
    second = make_account(vat_code="12345670017")
    delegate(first, second)
    assert upload(client, sign_in(client, first.username)).json()["errorCode"] == "0000"
    assert (used(second), used(first)) == (1, 0)


def test_a_three_hop_chain_counts_against_the_final_premium_and_stops_at_a_broken_link(client):
    basic = make_basic(vat_code=SUPPLIER_VAT)
    p1, p2, p3 = (make_account(vat_code=vat) for vat in VATS[:3])
    delegate(basic, p1)
    delegate(p1, p2)
    p2_to_p3 = delegate(p2, p3)
    assert upload(client, sign_in(client, basic.username)).json()["errorCode"] == "0000"  # basic's token
    assert upload(client, sign_in(client, p1.username)).json()["errorCode"] == "0000"  # p1 for basic
    assert upload(client, sign_in(client, p1.username), VATS[0]).json()["errorCode"] == "0000"  # p1's own
    assert [used(a) for a in (basic, p1, p2, p3)] == [0, 0, 0, 3]
    set_status(p2_to_p3.id, S.SUSPEND)
    assert upload(client, sign_in(client, basic.username)).json()["errorCode"] == "0000"
    assert [used(a) for a in (basic, p1, p2, p3)] == [0, 0, 1, 3]
