"""GET /auth/multicedenti and /auth/multicedenti/{id} (§2.4, §2.5, §4.1): fields, filters, pages, tenancy."""

from __future__ import annotations

import re

import pytest

from tests.accounts.delegation_support import delegate
from tests.factories import bearer, make_account, make_basic, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.accounts.models import DelegationStatus
from varco.core import blobs
from varco.core.db import unit_of_work

S = DelegationStatus
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")


def listing(client, token, **params):
    return client.get("/auth/multicedenti", params=params, headers=bearer(token))


@pytest.fixture
def premium(client):
    account = make_account(vat_code="12345670017")
    return account, sign_in(client, account.username)


def test_the_page_lists_the_callers_assignors_with_every_field(client, premium):
    account, token = premium
    make_basic(delegate_to=account, description="Rossi S.r.l.", vat_code="09876540015")
    make_basic(delegate_to=account, status=S.PENDING, description="Bianchi S.p.A.")
    body = listing(client, token).json()
    assert {k: v for k, v in body.items() if k != "content"} == {
        "first": True,
        "last": True,
        "number": 1,
        "numberOfElements": 2,
        "size": 10,
        "totalElements": None,
        "totalPages": 1,
    }
    assert [(m["description"], m["status"]) for m in body["content"]] == [
        ("Rossi S.r.l.", "ACTIVE"),
        ("Bianchi S.p.A.", "PENDING"),
    ]
    one = body["content"][0]
    assert set(one) == {
        "id",
        "description",
        "countryCode",
        "vatCode",
        "creationDate",
        "status",
        "usedSpaceKB",
    }
    assert isinstance(one["id"], str) and one["id"].isdigit()
    assert (one["countryCode"], one["vatCode"], one["usedSpaceKB"]) == ("IT", "09876540015", 0)
    # 08:00 UTC in November is 09:00 in Italy (shared decisions: milliseconds and offset)
    assert one["creationDate"] == "2026-11-23T09:00:00.000+01:00" and DATE.match(one["creationDate"])


def test_used_space_comes_from_the_assignors_stored_files(client, premium):
    account, token = premium
    assignor = make_basic(delegate_to=account, vat_code=SUPPLIER_VAT)
    sent = client.post(
        "/services/invoice/upload", json={"dataFile": b64(invoice_xml())}, headers=bearer(token)
    )
    assert sent.json()["errorCode"] == "0000"
    with unit_of_work() as session:
        stored = blobs.used_bytes(session, assignor.id)
    assert stored > 0
    [item] = listing(client, token).json()["content"]
    assert item["usedSpaceKB"] == -(-stored // 1024)
    assert client.get(f"/auth/multicedenti/{item['id']}", headers=bearer(token)).json() == item


def test_filters_by_country_vat_and_status(client, premium):
    account, token = premium
    german = make_basic(delegate_to=account, country_code="DE", vat_code="811907980")
    italian = make_basic(delegate_to=account, vat_code="07111110032", status=S.SUSPEND)
    make_basic(delegate_to=account, vat_code="05555550028", status=S.PENDING)

    def descriptions(**params) -> list[str]:
        response = listing(client, token, **params)
        assert response.status_code == 200, response.text
        return [m["description"] for m in response.json()["content"]]

    assert descriptions(countryCode="de") == [german.description]
    assert descriptions(vatCode="07111110032") == [italian.description]
    assert descriptions(status="suspend") == [italian.description]
    assert descriptions(countryCode="IT", status="ACTIVE") == []
    assert len(descriptions(countryCode="", vatCode="", status="", page="", size="")) == 3  # empty = absent


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"size": "0"}, "size must be an integer between 1 and 100: got 0"),
        ({"size": "101"}, "size must be an integer between 1 and 100: got 101"),
        ({"size": "ten"}, "size must be an integer between 1 and 100: got 'ten'"),
        ({"page": "0"}, "page must be an integer 1 or more: got 0"),
        ({"page": "1.5"}, "page must be an integer 1 or more: got '1.5'"),
        ({"page": "4", "size": "2"}, "page 4 is out of range: there are 3 pages of 2"),
        ({"status": "ENABLED"}, "status must be one of ACTIVE, SUSPEND, INACTIVE, PENDING"),
        ({"countryCode": "ITA"}, "countryCode must be two letters"),
        ({"vatCode": "IT 123"}, "vatCode must be 1-28 letters or digits"),
    ],
)
def test_bad_values_are_400_with_a_clear_message(client, premium, params, fragment):
    account, token = premium
    for _ in range(5 if "page" in params else 0):
        make_basic(delegate_to=account)
    response = listing(client, token, **params)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "0002"
    assert fragment in response.json()["errorDescription"]


def test_pages_run_from_1_to_total_pages(client, premium):
    account, token = premium
    made = [make_basic(delegate_to=account, description=f"Assignor {i}") for i in range(5)]
    pages = [listing(client, token, size=2, page=n).json() for n in (1, 2, 3)]
    assert [[m["description"] for m in p["content"]] for p in pages] == [
        [made[0].description, made[1].description],
        [made[2].description, made[3].description],
        [made[4].description],
    ]
    assert [(p["first"], p["last"], p["number"], p["numberOfElements"]) for p in pages] == [
        (True, False, 1, 2),
        (False, False, 2, 2),
        (False, True, 3, 1),
    ]
    assert {(p["size"], p["totalPages"], p["totalElements"]) for p in pages} == {(2, 3, None)}


def test_default_size_is_10_and_the_maximum_100(client, premium):
    account, token = premium
    for _ in range(12):
        make_basic(delegate_to=account)
    default = listing(client, token).json()
    assert (default["numberOfElements"], default["size"], default["totalPages"]) == (10, 10, 2)
    largest = listing(client, token, size=100).json()
    assert (largest["numberOfElements"], largest["totalPages"], largest["last"]) == (12, 1, True)


def test_no_assignors_is_an_empty_first_page_and_page_2_does_not_exist(client, premium):
    _, token = premium
    empty = listing(client, token).json()
    assert empty == {
        "content": [],
        "first": True,
        "last": True,
        "number": 1,
        "numberOfElements": 0,
        "size": 10,
        "totalElements": None,
        "totalPages": 0,
    }
    response = listing(client, token, page=2)
    assert response.status_code == 400
    assert "nothing was found" in response.json()["errorDescription"]


def test_detail_by_id_and_other_users_ids_are_not_found(client, premium):
    account, token = premium
    mine = delegate(make_basic(description="Verdi S.n.c."), account, S.SUSPEND)
    other_premium = make_account()
    theirs = delegate(make_basic(), other_premium)
    response = client.get(f"/auth/multicedenti/{mine.id}", headers=bearer(token))
    assert response.status_code == 200
    assert response.json()["description"] == "Verdi S.n.c." and response.json()["status"] == "SUSPEND"
    for missing in (theirs.id, 999_999_999):
        response = client.get(f"/auth/multicedenti/{missing}", headers=bearer(token))
        assert response.status_code == 404, response.text
        assert f"no multiseller with id {missing}" in response.json()["errorDescription"]
    bad = client.get("/auth/multicedenti/abc", headers=bearer(token))
    assert bad.status_code == 400 and "must be an integer" in bad.json()["errorDescription"]


def test_two_premium_users_see_only_their_own_assignors(client):
    first, second = make_account(), make_account()
    mine = make_basic(delegate_to=first, description="Of the first")
    theirs = make_basic(delegate_to=second, description="Of the second")
    for account, assignor in ((first, mine), (second, theirs)):
        body = listing(client, sign_in(client, account.username)).json()
        assert [m["description"] for m in body["content"]] == [assignor.description]


def test_sub_delegating_premium_appears_as_an_assignor_of_the_delegate(client):
    first, second = make_account(description="Sub S.r.l."), make_account()
    make_basic(delegate_to=first)
    delegate(first, second)
    body = listing(client, sign_in(client, second.username)).json()
    assert [m["description"] for m in body["content"]] == ["Sub S.r.l."]  # direct assignors only


def test_basic_users_are_forbidden_with_a_clear_message(client):
    basic = make_basic(delegate_to=make_account())
    token = sign_in(client, basic.username)
    for response in (
        listing(client, token),
        client.get("/auth/multicedenti/1", headers=bearer(token)),
        client.post("/api/v2/report", headers=bearer(token)),
        client.post("/api/v2/multicedenti/report", headers=bearer(token)),
    ):
        assert response.status_code == 403, response.text
        assert "Premium users only" in response.json()["errorDescription"]
        assert basic.username in response.json()["errorDescription"]


def test_a_token_is_required(client):
    assert client.get("/auth/multicedenti").status_code == 401
    assert client.get("/auth/multicedenti/1").status_code == 401
    assert client.post("/api/v2/report").status_code == 401
