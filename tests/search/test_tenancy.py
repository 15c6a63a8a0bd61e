"""Two Premium users with their delegated basic users: each sees its own taxpayers, nothing else."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import update

from tests.factories import make_basic
from tests.invoices.support import invoice_xml
from tests.search.factories import (
    User,
    filenames,
    find_v1,
    move,
    notify,
    premium,
    received,
    search_v2,
    upload,
    user,
)
from varco.accounts.models import Delegation, DelegationStatus
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceEvent
from varco.preservation import service as preservation


@dataclass
class Tenant:
    premium: User
    basic: User
    own: Invoice  # sent by the Premium user for itself
    assigned: Invoice  # sent by the Premium user for its basic user
    got: Invoice  # received by the basic user


def tenant(client, premium_vat: str, basic_vat: str, sdi_id: str) -> Tenant:
    boss = premium(client, vat=premium_vat)
    basic = user(client, make_basic(delegate_to=boss.account, vat_code=basic_vat))
    own = move(
        upload(client, boss, invoice_xml(supplier_vat=premium_vat)).id, InvoiceEvent.SENT, sdi_id=sdi_id
    )
    assigned = upload(client, boss, invoice_xml(supplier_vat=basic_vat))
    got = received(basic.account)
    notify(own, "RC")
    with unit_of_work() as session:
        preservation.seal_invoice(session, got.id, current_clock())
    return Tenant(boss, basic, own, assigned, got)


@pytest.fixture
def tenants(client):
    return (
        tenant(client, "01234560017", "09876540015", "880001"),
        tenant(client, "12345670017", "07111110032", "880002"),
    )


def test_lists_show_own_and_delegated_taxpayers_only(client, tenants):
    a, b = tenants
    for t in (a, b):
        assert set(filenames(search_v2(client, t.premium))) == {t.own.filename, t.assigned.filename}
        assert filenames(search_v2(client, t.premium, "in")) == [t.got.filename]
        assert filenames(find_v1(client, t.basic)) == [t.assigned.filename]
        assert filenames(find_v1(client, t.basic, "in")) == [t.got.filename]
    assert find_v1(client, a.premium, username=b.basic.account.username).status_code == 403
    assert find_v1(client, a.premium, username=b.premium.account.username).status_code == 403
    assert search_v2(client, a.basic, username=a.premium.account.username).status_code == 403


def test_nothing_of_another_tenant_is_reachable(client, tenants):
    a, b = tenants
    other = b.own
    lookups = [
        ("/services/invoice/out/getByFilename", {"filename": other.filename}),
        (f"/services/invoice/out/{other.id}", {}),
        ("/services/invoice/out/getByIdSdi", {"idSdi": "880002"}),
        ("/services/invoice/out/getZipByFilename", {"filename": other.filename}),
        ("/services/invoice/out/pdd", {"invoiceId": other.id}),
        ("/services/notification/out/getByInvoiceFilename", {"invoiceFilename": other.filename}),
        (f"/services/notification/out/{other.id}", {}),
        ("/services/notification/out/getByFilename", {"filename": other.filename[:-4] + "_RC_001.xml"}),
        ("/api/v2/invoices-out/detail", {"id": other.id}),
        ("/api/v2/invoices-out/detail", {"idSdi": "880002"}),
        ("/api/v2/invoices-out/zip", {"filename": other.filename}),
        ("/api/v2/invoices-out/pdd", {"id": other.id}),
        ("/api/v2/invoices-out/notifications", {"id": other.id}),
        ("/api/v2/invoices-out/notifications/detail", {"filename": other.filename[:-4] + "_RC_001.xml"}),
        ("/services/invoice/in/getInvoiceWithUnsignedFile", {"invoiceId": b.got.id}),
        ("/api/v2/invoices-in/detail", {"filename": b.got.filename}),
        ("/api/v2/invoices-in/pdd", {"id": b.got.id}),
    ]
    for who in (a.premium, a.basic):
        for url, query in lookups:
            response = client.get(url, params=query, headers=who.headers)
            assert response.status_code == 404, (url, response.text)
            body = response.json()
            assert set(body) == {"errorCode", "errorDescription"}  # the input echoed, nothing of theirs
            assert b.premium.account.username not in body["errorDescription"]
    download = client.post(
        "/api/v2/invoices-out/download",
        json={"ids": [other.id], "downloadTypes": ["XML"]},
        headers=a.premium.headers,
    )
    assert download.status_code == 404
    # the same lookups work for the owner
    assert (
        client.get(
            "/api/v2/invoices-out/detail", params={"id": other.id}, headers=b.premium.headers
        ).status_code
        == 200
    )
    assert (
        client.get("/api/v2/invoices-in/pdd", params={"id": b.got.id}, headers=b.basic.headers).status_code
        == 200
    )
    assert (
        client.get("/api/v2/invoices-in/pdd", params={"id": b.got.id}, headers=b.premium.headers).status_code
        == 200
    )


def test_a_delegation_no_longer_active_hides_the_taxpayer(client, tenants):
    a, _ = tenants
    with unit_of_work() as session:
        session.execute(
            update(Delegation)
            .where(Delegation.delegator_id == a.basic.account.id)
            .values(status=DelegationStatus.SUSPEND)
        )
    assert filenames(search_v2(client, a.premium)) == [a.own.filename]
    assert filenames(search_v2(client, a.premium, "in")) == []
    response = client.get(
        "/api/v2/invoices-out/detail", params={"id": a.assigned.id}, headers=a.premium.headers
    )
    assert response.status_code == 404
    assert find_v1(client, a.premium, username=a.basic.account.username).status_code == 403
