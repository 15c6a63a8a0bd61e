"""Configuration and admin pages, and e-mail receipt of received invoices (once, through the outbox)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from tests.factories import make_account, make_basic
from tests.panel.support import csrf_of, panel_login
from tests.search.factories import premium, received
from varco.core.db import unit_of_work
from varco.mail import receipts
from varco.mail.models import MailMessage


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
