"""Callback endpoints managed in the panel: over HTTP, through the same service as /api/v2/callbacks."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.callbacks.receiver import Receiver
from tests.callbacks.support import run, status_event, usage_event
from tests.factories import bearer, make_account, sign_in
from tests.panel.support import NEW_PASSWORD, csrf_of, panel_login
from varco.panel import pages_callbacks
from varco.panel.i18n import ITALIAN

PRODUCTION = {
    "profile": "production",
    "secret_key": "p" * 40,
    "database_url": "postgresql+psycopg://h/db",
    "sdi_channel": "simulator",
}


@pytest.fixture
def receiver(clock) -> Iterator[Receiver]:
    live = Receiver(clock)
    yield live
    live.close()


def signed_in(client: TestClient):
    """A new account signed in to the panel: (account, CSRF token of its session)."""
    account = make_account()
    return account, csrf_of(panel_login(client, account.username).text)


def create(client: TestClient, csrf: str, url: str, events: tuple[str, ...] = (), description: str = ""):
    data = {"csrf_token": csrf, "url": url, "events": list(events), "description": description}
    return client.post("/panel/callbacks", data=data)


def act(client: TestClient, callback_id: str, action: str, csrf: str):
    """Press a button of an endpoint (test, enable, delete): the answer, redirects not followed."""
    path = f"/panel/callbacks/{callback_id}/{action}"
    return client.post(path, data={"csrf_token": csrf}, follow_redirects=False)


def secret_in(html: str) -> str:
    found = re.search(r'value="(vcs_[^"]+)"', html)
    assert found, "no secret on the page"
    return found.group(1)


def endpoint_id(client: TestClient, url: str) -> str:
    listing = client.get("/panel/callbacks").text
    found = re.search(rf'<a href="/panel/callbacks/(\d+)">{re.escape(url)}</a>', listing)
    assert found, f"{url} not listed"
    return found.group(1)


def api_error(client: TestClient, token: dict, body: dict) -> str:
    response = client.post("/api/v2/callbacks", json=body, headers=bearer(token))
    assert response.status_code == 400, response.text
    return response.json()["errorDescription"].split(" [request ")[0]


def test_the_secret_is_shown_once_on_the_result_page_and_never_again(client):
    account, csrf = signed_in(client)
    kinds = ("updateInvoiceStatus", "updateUsage")
    created = create(client, csrf, "https://erp.example.com/hooks", kinds, "ERP gestionale")
    assert created.status_code == 201
    assert created.headers["cache-control"] == "no-store"
    secret = secret_in(created.text)
    assert secret.startswith("vcs_") and "non verrà più mostrato" in created.text

    listing = client.get("/panel/callbacks")
    assert secret not in listing.text and "vcs_" not in listing.text
    link = r'<tr>\s*<td><a href="/panel/callbacks/\d+">https://erp.example.com/hooks</a>.*?</tr>'
    row = re.search(link, listing.text, re.S)
    assert row, listing.text
    for shown in ("updateInvoiceStatus, updateUsage", "ERP gestionale", "Attivo", "2026-11-23 08:00"):
        assert shown in row.group(0)
    callback_id = endpoint_id(client, "https://erp.example.com/hooks")
    detail = client.get(f"/panel/callbacks/{callback_id}")
    assert secret not in detail.text and f"…{secret[-4:]}" in detail.text
    assert "Nessun invio" in detail.text

    # the API sees the same endpoint (one service), without the secret
    token = sign_in(client, account.username, NEW_PASSWORD)
    [listed] = client.get("/api/v2/callbacks", headers=bearer(token)).json()["callbacks"]
    assert (listed["id"], listed["events"], listed["secretHint"]) == (
        callback_id,
        ["updateInvoiceStatus", "updateUsage"],
        secret[-4:],
    )

    english = client.post(
        "/panel/callbacks",
        data={"csrf_token": csrf, "url": "https://erp.example.com/other"},
        headers={"Accept-Language": "en"},
    )
    assert "Copy it now: it will not be shown again." in english.text
    assert "createInvoice, updateInvoiceStatus, updateUsage, callbackDisabled" in english.text  # none: all


def test_the_form_is_accessible(client):
    signed_in(client)
    form = client.get("/panel/callbacks").text
    assert '<label for="url">URL</label>' in form and '<label for="description">Descrizione</label>' in form
    fieldset = re.search(r"<fieldset.*?</fieldset>", form, re.S).group(0)
    assert "<legend>Eventi</legend>" in fieldset
    for kind in ("createInvoice", "updateInvoiceStatus", "updateUsage"):
        assert f'<label><input type="checkbox" name="events" value="{kind}">' in fieldset
    assert '<a href="/panel/callbacks">Callback</a>' in form  # in the navigation


def test_every_panel_text_has_an_italian_translation():
    templates = Path(pages_callbacks.__file__).parent / "templates"
    keys = set(pages_callbacks.KIND_TEXT.values())
    for path in sorted(templates.glob("*.html")):  # every page, callbacks included
        text = path.read_text()
        keys |= set(re.findall(r"t\('([^']+)'\)", text)) | set(re.findall(r't\("([^"]+)"\)', text))
    assert keys - set(ITALIAN) == set()


def test_validation_errors_are_shown_in_the_form_with_the_apis_messages(client):
    account, csrf = signed_in(client)
    token = sign_in(client, account.username, NEW_PASSWORD)  # registration changed the password
    cases = [
        ({"url": "ftp://erp.example.com/x"}, "url must be an absolute http or https URL"),
        ({"url": ""}, "url is required"),
        ({"url": "https://user:pw@erp.example.com/x"}, "url must not carry credentials"),
        ({"url": "https://erp.example.com/x", "description": "d" * 256}, "description is longer than 255"),
        ({"url": "https://erp.example.com/x", "events": ["createInvoice", "bogus"]}, "unknown event kind(s)"),
    ]
    for body, fragment in cases:
        events, description = tuple(body.get("events", ())), body.get("description", "")
        response = create(client, csrf, body["url"], events, description)
        assert response.status_code == 400, body
        shown = re.search(r'<p class="error" role="alert" id="form-error">(.*?)</p>', response.text, re.S)
        assert shown and fragment in shown.group(1)
        assert html.unescape(shown.group(1)) == api_error(client, token, body)  # the API's words
        assert 'aria-invalid="true"' in response.text
    kept = create(client, csrf, "ftp://kept.example.com/x", ("updateUsage",), "kept")
    assert 'value="ftp://kept.example.com/x"' in kept.text and 'value="kept"' in kept.text
    assert 'value="updateUsage" checked' in kept.text and 'value="createInvoice" checked' not in kept.text
    assert "Nessun endpoint" in client.get("/panel/callbacks").text  # nothing was created


def test_production_refuses_http_and_private_addresses(app, configure):
    configure(**PRODUCTION)
    with TestClient(app, base_url="https://testserver", raise_server_exceptions=False) as client:
        _, csrf = signed_in(client)  # the session cookie is Secure in production
        form = client.get("/panel/callbacks").text
        assert "Solo https, e l&#39;host deve risolversi in indirizzi pubblici." in form
        plain = create(client, csrf, "http://93.184.216.34/hook")
        assert plain.status_code == 400 and "https only in production" in plain.text
        metadata = create(client, csrf, "https://169.254.169.254/latest/meta-data")
        assert metadata.status_code == 400
        assert "resolves to 169.254.169.254" in metadata.text
        assert "public address in production" in metadata.text
        assert create(client, csrf, "https://93.184.216.34/hook").status_code == 201


def test_every_change_needs_the_csrf_token(client):
    _, csrf = signed_in(client)
    assert create(client, "", "https://erp.example.com/nocsrf").status_code == 400
    assert create(client, "wrong", "https://erp.example.com/nocsrf").status_code == 400
    assert "https://erp.example.com/nocsrf" not in client.get("/panel/callbacks").text
    create(client, csrf, "https://erp.example.com/kept")
    callback_id = endpoint_id(client, "https://erp.example.com/kept")
    for action in ("delete", "test", "enable"):
        assert act(client, callback_id, action, "wrong").status_code == 400, action
    assert "Nessun invio" in client.get(f"/panel/callbacks/{callback_id}").text  # no test was queued
    assert endpoint_id(client, "https://erp.example.com/kept") == callback_id  # not deleted


def test_delete_asks_first_then_removes_the_endpoint(client):
    account, csrf = signed_in(client)
    create(client, csrf, "https://erp.example.com/gone", description="old ERP")
    callback_id = endpoint_id(client, "https://erp.example.com/gone")
    confirm = client.get(f"/panel/callbacks/{callback_id}/delete")
    assert "Eliminare questo endpoint?" in confirm.text and "https://erp.example.com/gone" in confirm.text
    assert f'action="/panel/callbacks/{callback_id}/delete"' in confirm.text
    deleted = act(client, callback_id, "delete", csrf)
    assert deleted.status_code == 303 and deleted.headers["location"] == "/panel/callbacks?deleted=1"
    listing = client.get(deleted.headers["location"])
    assert "Endpoint eliminato" in listing.text and "https://erp.example.com/gone" not in listing.text
    assert client.get(f"/panel/callbacks/{callback_id}").status_code == 404
    again = act(client, callback_id, "delete", csrf)
    assert again.status_code == 404
    token = sign_in(client, account.username, NEW_PASSWORD)
    assert client.get(f"/api/v2/callbacks/{callback_id}", headers=bearer(token)).status_code == 404


def test_a_test_event_reaches_a_real_receiver_and_its_result_is_shown(client, receiver, queue):
    account, csrf = signed_in(client)
    created = create(client, csrf, receiver.url, ("updateInvoiceStatus",))
    receiver.secret = secret_in(created.text)
    callback_id = endpoint_id(client, receiver.url)

    pressed = act(client, callback_id, "test", csrf)
    assert pressed.status_code == 303
    location = pressed.headers["location"]
    assert re.fullmatch(rf"/panel/callbacks/{callback_id}\?tested=\d+#deliveries", location)
    waiting = client.get(location)
    assert "in coda, in attesa dell&#39;invio" in waiting.text
    assert 'hx-trigger="every 2s"' in waiting.text  # htmx refreshes the section while it is pending

    run(queue)
    [got] = receiver.received
    assert (got.event_type, got.signature_ok, got.accepted) == ("test", True, True)
    assert got.json["data"]["callbackId"] == callback_id
    done = client.get(location)
    result = re.search(r'<p id="test-result".*?</p>', done.text, re.S).group(0)
    assert got.event_id in result and "consegnato" in result and "(HTTP 200)" in result
    assert "hx-trigger" not in done.text  # nothing pending: no more polling
    fragment = client.get(f"/panel/callbacks/{callback_id}/deliveries?{location.split('?')[1].split('#')[0]}")
    assert fragment.text.startswith('<section id="deliveries"') and "<html" not in fragment.text
    assert "(HTTP 200)" in fragment.text

    # a real event: listed with its type, attempts, status and HTTP status
    event_id = status_event(account, "IT01234560017_P0001.xml")
    run(queue)
    assert receiver.accepted_ids()[-1] == event_id
    row = r'<tr>\s*<td><code>(\w+)</code></td><td>(\w+)</td>.*?<td>(\d+)</td>\s*<td class="status">(\w+)'
    rows = re.findall(row, client.get(f"/panel/callbacks/{callback_id}").text, re.S)
    assert rows == [
        (event_id, "updateInvoiceStatus", "1", "Consegnata"),
        (got.event_id, "test", "1", "Consegnata"),
    ]
    assert "Consegnata · HTTP 200 · updateInvoiceStatus" in client.get("/panel/callbacks").text


def test_another_accounts_endpoint_is_unknown(app, client):
    _, owner_csrf = signed_in(client)
    create(client, owner_csrf, "https://owner.example.com/hooks")
    callback_id = endpoint_id(client, "https://owner.example.com/hooks")
    with TestClient(app, raise_server_exceptions=False) as other:
        _, csrf = signed_in(other)
        assert "https://owner.example.com/hooks" not in other.get("/panel/callbacks").text
        base = f"/panel/callbacks/{callback_id}"
        for path in (base, f"{base}/delete", f"{base}/deliveries", "/panel/callbacks/abc"):
            assert other.get(path).status_code == 404, path
        for action in ("test", "enable", "delete"):
            response = act(other, callback_id, action, csrf)
            assert response.status_code == 404, action
    detail = client.get(f"/panel/callbacks/{callback_id}")
    assert detail.status_code == 200 and "Attivo" in detail.text and "Nessun invio" in detail.text


def test_a_disabled_endpoint_is_enabled_again(client, receiver, queue, configure):
    configure(callback_retry_window=0)  # the first failure spends the retry budget
    account, csrf = signed_in(client)
    receiver.secret = secret_in(create(client, csrf, receiver.url, ("updateUsage",)).text)
    callback_id = endpoint_id(client, receiver.url)
    receiver.fail(times=1)
    lost = usage_event(account, 1)
    run(queue)

    listing = client.get("/panel/callbacks").text
    assert "Disabilitato (2026-11-23 08:00)" in listing and "Non riuscita · HTTP 503 · updateUsage" in listing
    detail = client.get(f"/panel/callbacks/{callback_id}").text
    assert f"event {lost} not delivered after 1 attempts" in detail
    assert "HTTP 503: receiver busy" in detail
    assert "Disabilitato: un invio è fallito per tutto il periodo di ritentativi" in detail
    assert f'action="/panel/callbacks/{callback_id}/enable"' in detail
    usage_event(account, 2)
    run(queue)
    assert len(receiver.received) == 1  # disabled: nothing new is sent

    enabled = act(client, callback_id, "enable", csrf)
    assert enabled.headers["location"] == f"/panel/callbacks/{callback_id}?enabled=1"
    page = client.get(enabled.headers["location"]).text
    assert "Riattivato" in page and '<dd class="status">Attivo</dd>' in page
    assert f'action="/panel/callbacks/{callback_id}/enable"' not in page
    fresh = usage_event(account, 3)
    run(queue)
    assert receiver.accepted_ids() == [fresh]
    # enabling an active endpoint changes nothing (the state table allows it)
    again = act(client, callback_id, "enable", csrf)
    assert again.headers["location"].endswith("?enabled=1")


def test_the_secret_is_replaced_after_a_confirmation_and_shown_once(app, client, receiver, queue):
    account, csrf = signed_in(client)
    old = secret_in(create(client, csrf, receiver.url, ("updateUsage",), "ERP").text)
    callback_id = endpoint_id(client, receiver.url)
    detail = client.get(f"/panel/callbacks/{callback_id}").text
    assert f'<a href="/panel/callbacks/{callback_id}/secret">Sostituisci il segreto…</a>' in detail

    confirm = client.get(f"/panel/callbacks/{callback_id}/secret")
    assert "Sostituire il segreto di questo endpoint?" in confirm.text and f"…{old[-4:]}" in confirm.text
    assert f'action="/panel/callbacks/{callback_id}/secret"' in confirm.text and old not in confirm.text
    assert act(client, callback_id, "secret", "wrong").status_code == 400  # CSRF: nothing changed
    assert f"…{old[-4:]}" in client.get(f"/panel/callbacks/{callback_id}").text

    replaced = act(client, callback_id, "secret", csrf)
    assert replaced.status_code == 200 and replaced.headers["cache-control"] == "no-store"
    new = secret_in(replaced.text)
    assert new.startswith("vcs_") and new != old
    assert "Nuovo segreto di firma" in replaced.text and "non verrà più mostrato" in replaced.text
    detail = client.get(f"/panel/callbacks/{callback_id}").text
    assert new not in detail and f"…{new[-4:]}" in detail
    assert "vcs_" not in client.get("/panel/callbacks").text
    token = sign_in(client, account.username, NEW_PASSWORD)
    listed = client.get(f"/api/v2/callbacks/{callback_id}", headers=bearer(token)).json()
    assert listed["secretHint"] == new[-4:]  # the API sees the same endpoint

    # deliveries are signed with the new secret from now on: the old one no longer verifies
    receiver.secret = old
    act(client, callback_id, "test", csrf)
    run(queue)
    receiver.secret = new
    usage_event(account, 1)
    run(queue)
    assert [r.signature_ok for r in receiver.received] == [False, True]

    with TestClient(app, raise_server_exceptions=False) as other:  # another account's id is unknown
        _, other_csrf = signed_in(other)
        assert other.get(f"/panel/callbacks/{callback_id}/secret").status_code == 404
        assert act(other, callback_id, "secret", other_csrf).status_code == 404
    assert f"…{new[-4:]}" in client.get(f"/panel/callbacks/{callback_id}").text
