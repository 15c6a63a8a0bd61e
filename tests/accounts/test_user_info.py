"""§2.3 GET /auth/userInfo."""

from __future__ import annotations

from datetime import date

from tests.factories import bearer, make_account, sign_in


def test_user_info_has_every_field_nested(client):
    account = make_account(
        description="Rossi S.r.l.",
        fiscal_code="RSSMRA80A01H501U",
        pec="rossi@pec.example.it",
        max_space_kb=2048,
        expires_on=date(2027, 3, 31),
    )
    response = client.get("/auth/userInfo", headers=bearer(sign_in(client, account.username)))
    assert response.status_code == 200
    assert response.json() == {
        "username": account.username,
        "pec": "rossi@pec.example.it",
        "userDescription": "Rossi S.r.l.",
        "countryCode": "IT",
        "vatCode": account.vat_code,
        "fiscalCode": "RSSMRA80A01H501U",
        "accountStatus": {"expired": False, "expirationDate": "2027-03-31"},
        "usageStatus": {"usedSpaceKB": 0, "maxSpaceKB": 2048},
    }


def test_json_content_type_on_get_is_tolerated(client):
    account = make_account()
    headers = {**bearer(sign_in(client, account.username)), "Content-Type": "application/json"}
    assert client.get("/auth/userInfo", headers=headers).status_code == 200
