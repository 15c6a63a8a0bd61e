"""Configuration and admin pages, and e-mail receipt of received invoices (once, through the outbox)."""

from __future__ import annotations

import base64
import json
import re
from datetime import timedelta

from sqlalchemy import select

from tests.factories import make_account, make_basic
from tests.invoices.support import invoice_xml
from tests.panel.support import NEW_PASSWORD, csrf_of, panel_login
from tests.search.factories import premium, received, upload
from varco.core.db import unit_of_work
from varco.mail import receipts
from varco.mail.models import MailMessage
from varco.settings import DEFAULT_TIERS


def outbox(account_id: int) -> list[MailMessage]:
    with unit_of_work() as session:
        return list(session.scalars(select(MailMessage).where(MailMessage.account_id == account_id)))


def test_email_receipt_is_sent_once_and_only_when_on(client, queue, clock):
    owner = premium(client)
    before = received(owner.account)  # received before receipt was turned on: never mailed
    clock.advance(timedelta(seconds=1))
    page = panel_login(client, owner.account.username)
    bad = client.post(
        "/panel/settings", data={"csrf_token": csrf_of(page.text), "enabled": "yes", "address": "x"}
    )
    assert bad.status_code == 400 and "invalid e-mail address" in bad.text
    saved = client.post(
        "/panel/settings",
        data={"csrf_token": csrf_of(page.text), "enabled": "yes", "address": "fatture@example.it"},
    )
    assert "Salvato" in saved.text
    got = received(owner.account)
    assert receipts.queue_pending_receipts() >= 1
    assert receipts.queue_pending_receipts() == 0  # once: the receipt row is the key
    queue.drain()
    messages = outbox(owner.account.id)
    assert [m.subject for m in messages] == [f"Fattura ricevuta {got.filename}"]
    assert messages[0].to_address == "fatture@example.it" and messages[0].delivered_at is not None
    assert before.filename not in messages[0].body
    client.post("/panel/settings", data={"csrf_token": csrf_of(page.text), "address": "fatture@example.it"})
    received(owner.account)
    receipts.queue_pending_receipts()
    assert len(outbox(owner.account.id)) == 1  # off: nothing more


def test_usage_tokens_and_revocation(client):
    account = make_account()
    client.post(
        "/auth/signin", data={"grant_type": "password", "username": account.username, "password": "s3cret-pw"}
    )
    page = panel_login(client, account.username)
    assert "Limite annuale" in client.get("/panel/usage").text
    tokens = client.get("/panel/tokens")
    assert "Questo browser" in tokens.text
    client.post("/panel/tokens/revoke", data={"csrf_token": csrf_of(page.text)})
    assert "Revocato" in client.get("/panel/tokens").text


def test_one_api_token_is_revoked_and_the_others_keep_working(client):
    account = make_account()
    page = panel_login(client, account.username)  # registration changes the password: old tokens go
    signin = {"grant_type": "password", "username": account.username, "password": NEW_PASSWORD}
    first = client.post("/auth/signin", data=signin).json()
    second = client.post("/auth/signin", data=signin).json()
    listing = client.get("/panel/tokens").text
    ids = re.findall(r'action="/panel/tokens/(\d+)/revoke"', listing)
    assert len(ids) == 2  # newest first: the second sign-in's token
    other = make_account()
    client.post(
        "/auth/signin", data={"grant_type": "password", "username": other.username, "password": "s3cret-pw"}
    )
    csrf = csrf_of(page.text)
    assert client.post(f"/panel/tokens/{ids[0]}/revoke", data={"csrf_token": "wrong"}).status_code == 400
    assert client.post(f"/panel/tokens/{ids[0]}/revoke", data={"csrf_token": csrf}).status_code in (200, 303)

    def user_info(token: dict) -> int:
        bearer = {"Authorization": f"Bearer {token['access_token']}"}
        return client.get("/auth/userInfo", headers=bearer).status_code

    assert (user_info(second), user_info(first)) == (401, 200)
    refreshed = client.post(
        "/auth/signin", data={"grant_type": "refresh_token", "refresh_token": second["refresh_token"]}
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    assert client.post(f"/panel/tokens/{ids[0]}/revoke", data={"csrf_token": csrf}).status_code == 404
    assert client.post("/panel/tokens/999999999/revoke", data={"csrf_token": csrf}).status_code == 404
    assert "Revocato" in client.get("/panel/tokens").text and user_info(first) == 200


def test_only_the_delegate_approves(client):
    premium_user = make_account()
    basic = make_basic()
    page = panel_login(client, basic.username)
    client.post(
        "/panel/delegations", data={"csrf_token": csrf_of(page.text), "premium": premium_user.username}
    )
    listing = client.get("/panel/delegations")
    assert "PENDING" in listing.text
    import re

    delegation_id = re.search(r"/panel/delegations/(\d+)/revoke", listing.text).group(1)
    own = client.post(f"/panel/delegations/{delegation_id}/approve", data={"csrf_token": csrf_of(page.text)})
    assert "only the Premium user who was asked" in own.text
    unknown = client.post(
        "/panel/delegations", data={"csrf_token": csrf_of(page.text), "premium": "nobody-x"}
    )
    assert "no Premium user named" in unknown.text


def test_admin_pages_are_for_operators(client):
    panel_login(client, make_account().username)
    assert client.get("/panel/admin").status_code == 403


def test_admin_sets_tier_and_sees_the_outbox(client):
    admin = make_account(is_admin=True)
    target = make_account()
    page = panel_login(client, admin.username)
    client.post(
        "/panel/admin/tier", data={"csrf_token": csrf_of(page.text), "username": target.username, "tier": "3"}
    )
    html = client.get("/panel/admin").text
    assert target.username in html and "Posta in uscita" in html
    bad = client.post(
        "/panel/admin/tier",
        data={"csrf_token": csrf_of(page.text), "username": target.username, "tier": "99"},
    )
    assert 'role="alert"' in bad.text


def test_a_mandate_is_requested_approved_suspended_resumed_and_revoked(app, client):
    from fastapi.testclient import TestClient

    premium_user = make_account(vat_code="05555550028")
    basic = make_basic(vat_code="07111110032")
    theirs = received(basic, sender_vat="12345670017", number="MANDATE-1")
    asker = csrf_of(panel_login(client, basic.username).text)
    client.post("/panel/delegations", data={"csrf_token": asker, "premium": premium_user.username})
    given = client.get("/panel/delegations").text
    pending = 'class="status" data-status="PENDING">In attesa di approvazione</td>'
    assert re.search(rf"<tr><td>{premium_user.username}</td><td {pending}", given)

    with TestClient(app, raise_server_exceptions=False) as approver:
        token = csrf_of(panel_login(approver, premium_user.username).text)

        def press(action: str) -> str:
            listing = approver.get("/panel/delegations").text
            row = re.search(rf"<tr><td>{basic.username}</td>.*?</tr>", listing, re.S).group(0)
            path = re.search(rf'action="(/panel/delegations/\d+/{action})"', row).group(1)
            approver.post(path, data={"csrf_token": token})
            after = approver.get("/panel/delegations").text
            return re.search(
                rf'<tr><td>{basic.username}</td><td class="status" data-status="(\w+)">', after
            ).group(1)

        def sees_assignors_invoice() -> bool:
            return theirs.filename in approver.get("/panel/invoices/in").text

        assert not sees_assignors_invoice()  # PENDING: not yet an assignor
        assert press("approve") == "ACTIVE" and sees_assignors_invoice()
        assert press("suspend") == "SUSPEND" and not sees_assignors_invoice()
        assert press("resume") == "ACTIVE" and sees_assignors_invoice()
        assert press("revoke") == "INACTIVE" and not sees_assignors_invoice()
    given = client.get("/panel/delegations").text
    assert re.search(
        rf'<tr><td>{premium_user.username}</td><td class="status" data-status="INACTIVE">Non attivo</td>',
        given,
    )
    english = client.get("/panel/delegations", headers={"Accept-Language": "en"}).text
    assert re.search(
        rf'<tr><td>{premium_user.username}</td><td class="status" data-status="INACTIVE">Inactive</td>',
        english,
    )


def test_usage_shows_transmissions_against_the_limits_and_the_space_used(client):
    supplier = premium(client)
    upload(client, supplier, invoice_xml(number="USE-1"))
    upload(client, supplier, invoice_xml(number="USE-2"))
    panel_login(client, supplier.account.username)
    usage = client.get("/panel/usage").text
    figures = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", usage))
    assert figures["Trasmissioni quest&#39;anno (2026)"] == "2"
    tier = int(figures["Fascia"].split()[0])
    hourly, annual = DEFAULT_TIERS[tier]  # the tier's limits (§8.2)
    assert figures["Fascia"] == f"{tier} ({hourly}/h) — {supplier.account.username}"
    assert figures["Limite annuale"] == str(annual)
    assert figures["Spazio usato"] != "0 KB" and figures["Spazio usato"].endswith(" KB")


def test_admin_sees_a_lock_and_unlocks_it(app, client, configure):
    from fastapi.testclient import TestClient

    from tests.factories import bearer, sign_in
    from tests.invoices.support import SUPPLIER_VAT

    configure(tiers=json.dumps({**DEFAULT_TIERS, 0: (60, 1)}))  # tier 0: one transmission a year
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    api = sign_in(client, account.username)

    def send() -> int:
        body = {"dataFile": base64.b64encode(invoice_xml()).decode()}
        return client.post("/services/invoice/upload", json=body, headers=bearer(api)).status_code

    assert send() == 200 and send() == 429  # the limit is reached: locked
    admin = make_account(is_admin=True)
    with TestClient(app, raise_server_exceptions=False) as operator:
        token = csrf_of(panel_login(operator, admin.username).text)
        locks = re.search(r'<table id="locks">.*?</table>', operator.get("/panel/admin").text, re.S).group(0)
        assert re.search(rf"<tr><td>{account.username}</td><td>2026</td><td>1</td>", locks)
        operator.post("/panel/admin/unlock", data={"csrf_token": token, "username": account.username})
        locks = re.search(r'<table id="locks">.*?</table>', operator.get("/panel/admin").text, re.S).group(0)
        assert account.username not in locks
        raised = {"csrf_token": token, "username": account.username, "tier": "2"}
        operator.post("/panel/admin/tier", data=raised)
        row = re.search(rf"<tr><td>{account.username}</td>.*?</tr>", operator.get("/panel/admin").text, re.S)
        assert "<option selected>2</option>" in row.group(0)
    assert send() == 200  # unlocked, and tier 2 allows more
