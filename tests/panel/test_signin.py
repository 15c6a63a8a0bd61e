"""Panel sign-in: login form with CSRF, registration at first sign-in, logout, redirects."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.factories import make_account, make_basic
from tests.panel.support import NEW_PASSWORD, csrf_of, panel_login


def test_pages_need_a_session(client):
    response = client.get("/panel/invoices/out", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/panel/login?next=/panel/invoices/out"


def test_login_needs_the_csrf_cookie_and_field(client):
    account = make_account()
    client.get("/panel/login")
    refused = client.post("/panel/login", data={"username": account.username, "password": "s3cret-pw"})
    assert refused.status_code == 400 and "CSRF" in refused.json()["errorDescription"]


def test_wrong_password_shows_the_form_again(client):
    account = make_account()
    form = client.get("/panel/login", headers={"Accept-Language": "en"})
    response = client.post(
        "/panel/login",
        data={"username": account.username, "password": "nope", "csrf_token": csrf_of(form.text)},
        headers={"Accept-Language": "en"},
    )
    assert response.status_code == 400 and "Wrong username or password" in response.text


def test_first_sign_in_completes_registration_then_logout(client):
    account = make_account()
    form = client.get("/panel/login")
    first = client.post(
        "/panel/login",
        data={"username": account.username, "password": "s3cret-pw", "csrf_token": csrf_of(form.text)},
    )
    assert (
        first.url.path == "/panel/register" and "Completa la registrazione" in first.text
    )  # Italian default
    bad = client.post(
        "/panel/register",
        data={
            "csrf_token": csrf_of(first.text),
            "accept": "yes",
            "email": "x@y.it",
            "password": "short",
            "repeated": "short",
        },
    )
    assert bad.status_code == 400 and "almeno 10 caratteri" in bad.text
    page = panel_login(client, account.username)
    assert page.url.path == "/panel/invoices/out" and account.username in page.text
    # the password changed: the old one no longer signs in to the API
    api = client.post(
        "/auth/signin", data={"grant_type": "password", "username": account.username, "password": "s3cret-pw"}
    )
    assert api.status_code == 400
    api = client.post(
        "/auth/signin",
        data={"grant_type": "password", "username": account.username, "password": NEW_PASSWORD},
    )
    assert api.status_code == 200
    # logout needs the CSRF token, then the session is gone
    assert client.post("/panel/logout", data={"csrf_token": "forged"}).status_code == 400
    out = client.post("/panel/logout", data={"csrf_token": csrf_of(page.text)}, follow_redirects=False)
    assert out.status_code == 303
    assert client.get("/panel/invoices/out", follow_redirects=False).status_code == 303


def _register(client: TestClient, username: str, password: str):
    form = client.get("/panel/login")
    first = client.post(
        "/panel/login", data={"username": username, "password": "s3cret-pw", "csrf_token": csrf_of(form.text)}
    )
    assert first.url.path == "/panel/register"
    return client.post(
        "/panel/register",
        data={
            "csrf_token": csrf_of(first.text),
            "accept": "yes",
            "email": "ref@pec.example.it",
            "password": password,
            "repeated": password,
        },
    )


def _api_token(client: TestClient, username: str, password: str = "s3cret-pw") -> str:
    answer = client.post(
        "/auth/signin", data={"grant_type": "password", "username": username, "password": password}
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def test_registration_says_what_happens_to_api_tokens(client):
    account = make_account()
    form = client.get("/panel/login")
    first = client.post(
        "/panel/login",
        data={"username": account.username, "password": "s3cret-pw", "csrf_token": csrf_of(form.text)},
        headers={"Accept-Language": "en"},
    )
    assert first.url.path == "/panel/register"
    assert "revokes every API token issued with the old one" in first.text
    assert "Typing your current password again keeps them working" in first.text


def test_registering_with_the_current_password_keeps_the_api_tokens(client):
    account = make_account()
    token = _api_token(client, account.username)
    page = _register(client, account.username, "s3cret-pw")  # the current one, even if under 10 characters
    assert page.url.path == "/panel/invoices/out", page.text
    info = client.get("/auth/userInfo", headers={"Authorization": f"Bearer {token}"})
    assert info.status_code == 200, info.text
    assert _api_token(client, account.username)  # the password is unchanged


def test_registering_with_a_new_password_revokes_the_api_tokens(client):
    account = make_account()
    token = _api_token(client, account.username)
    page = _register(client, account.username, NEW_PASSWORD)
    assert page.url.path == "/panel/invoices/out", page.text
    info = client.get("/auth/userInfo", headers={"Authorization": f"Bearer {token}"})
    assert info.status_code == 401
    assert _api_token(client, account.username, NEW_PASSWORD)


def test_a_refused_registration_changes_nothing(client):
    account = make_account()
    token = _api_token(client, account.username)
    page = _register(client, account.username, "short-new")
    assert page.status_code == 400 and page.url.path == "/panel/register"
    info = client.get("/auth/userInfo", headers={"Authorization": f"Bearer {token}"})
    assert info.status_code == 200 and info.json().get("pec") != "ref@pec.example.it"


def test_stolen_cookie_after_logout_is_refused(app):
    account = make_account()
    with TestClient(app) as browser:
        page = panel_login(browser, account.username)
        cookie = browser.cookies.get("varco_panel")
        browser.post("/panel/logout", data={"csrf_token": csrf_of(page.text)})
    with TestClient(app) as thief:
        thief.cookies.set("varco_panel", cookie, path="/panel")
        assert thief.get("/panel/invoices/out", follow_redirects=False).status_code == 303


def test_basic_user_without_mandate_may_sign_in_to_ask_for_one(client):
    basic = make_basic()
    page = panel_login(client, basic.username)
    assert page.url.path == "/panel/invoices/out"


def test_english_on_request(client):
    account = make_account()
    panel_login(client, account.username)
    client.get("/panel/lang/en")
    assert "Sent invoices" in client.get("/panel/invoices/out").text


@pytest.mark.parametrize(
    ("referer", "location"),
    [
        ("https://evil.example/", "/panel/invoices/out"),
        ("https://evil.example/panel/invoices/in?page=2", "/panel/invoices/in?page=2"),
        ("//evil.example/panel/x", "/panel/x"),
        ("/panel/\\evil.example", "/panel/invoices/out"),
        (None, "/panel/invoices/out"),
    ],
)
def test_choosing_a_language_redirects_only_within_the_panel(client, referer, location):
    headers = {"Referer": referer} if referer else {}
    answer = client.get("/panel/lang/en", headers=headers, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == location


def test_a_path_of_any_characters_redirects_to_sign_in(client):
    for path in ("/panel/callbacks/%E2%82%AC", "/panel/invoices/%E2%82%AC", "/panel/callbacks/%FF"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code in (303, 404), (path, answer.status_code)
        if answer.status_code == 303:
            assert answer.headers["location"].startswith("/panel/login?next=/panel/")


def test_registering_twice_is_not_an_error(client):
    account = make_account()
    panel_login(client, account.username)  # registers
    page = client.get("/panel/register")
    second = client.post(
        "/panel/register",
        data={
            "csrf_token": csrf_of(page.text),
            "accept": "yes",
            "email": "a@b.it",
            "password": "x" * 12,
            "repeated": "x" * 12,
        },
        follow_redirects=False,
    )
    assert second.status_code == 303
