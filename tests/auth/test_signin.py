"""§2.1, §2.2, §3.4, §5: sign-in, refresh, bearer tokens."""

from __future__ import annotations

from datetime import timedelta
from email.utils import parsedate_to_datetime

import pytest
from sqlalchemy import select

from tests.factories import bearer, make_account, make_basic, sign_in
from varco.accounts.models import DelegationStatus
from varco.audit.service import SYSTEM
from varco.auth.models import AuthToken
from varco.core.clock import current_clock
from varco.core.db import unit_of_work

UNAUTHORIZED = {
    "error": "unauthorized",
    "error_description": "Full authentication is required to access this resource",
}


def signin_raw(client, **form):
    return client.post("/auth/signin", data=form)


def test_password_grant_returns_every_token_field(client, clock):
    account = make_account()
    body = sign_in(client, account.username)
    assert set(body) == {
        "access_token",
        "token_type",
        "expires_in",
        "refresh_token",
        "userName",
        "as:client_id",
        ".issued",
        ".expires",
    }
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 1800
    assert body["userName"] == account.username
    assert body["as:client_id"] == ""
    assert body[".issued"] == "Mon, 23 Nov 2026 08:00:00 GMT"
    assert body[".expires"] == "Mon, 23 Nov 2026 08:30:00 GMT"
    issued, expires = parsedate_to_datetime(body[".issued"]), parsedate_to_datetime(body[".expires"])
    assert expires - issued == timedelta(seconds=1800)
    assert body["access_token"] != body["refresh_token"]


def test_client_id_is_echoed(client):
    account = make_account()
    response = signin_raw(
        client, grant_type="password", username=account.username, password="s3cret-pw", client_id="my-erp"
    )
    assert response.json()["as:client_id"] == "my-erp"


@pytest.mark.parametrize("username,password", [("known", "wrong"), ("nobody-at-all", "s3cret-pw")])
def test_wrong_credentials_are_invalid_grant(client, username, password):
    account = make_account()
    response = signin_raw(
        client,
        grant_type="password",
        username=account.username if username == "known" else username,
        password=password,
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_grant",
        "error_description": "The user name or password is incorrect.",
    }


def test_disabled_user_cannot_sign_in(client):
    from varco.accounts import service

    account = make_account()
    with unit_of_work() as session:
        service.disable_account(session, account.username, current_clock(), SYSTEM)
    response = signin_raw(client, grant_type="password", username=account.username, password="s3cret-pw")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert "disabled" in response.json()["error_description"]


def test_expired_user_cannot_sign_in(client, clock):
    account = make_account(expires_on=(clock.now() - timedelta(days=1)).date())
    response = signin_raw(client, grant_type="password", username=account.username, password="s3cret-pw")
    assert response.status_code == 400
    assert "expired" in response.json()["error_description"]


def test_basic_user_needs_an_active_delegation_to_a_premium_user(client):
    premium = make_account()
    lonely = make_basic()
    pending = make_basic(delegate_to=premium, status=DelegationStatus.PENDING)
    delegated = make_basic(delegate_to=premium)
    for refused in (lonely, pending):
        response = signin_raw(client, grant_type="password", username=refused.username, password="s3cret-pw")
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_grant"
        assert "delegation" in response.json()["error_description"]
    assert sign_in(client, delegated.username)["userName"] == delegated.username


@pytest.mark.parametrize(
    "form,error",
    [
        ({}, "invalid_request"),
        ({"grant_type": "password", "username": "x"}, "invalid_request"),
        ({"grant_type": "password", "password": "x"}, "invalid_request"),
        ({"grant_type": "refresh_token"}, "invalid_request"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
    ],
)
def test_malformed_requests_get_oauth_errors(client, form, error):
    response = client.post("/auth/signin", data=form)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert response.json()["error_description"]


def test_json_body_is_refused_with_a_clear_message(client):
    account = make_account()
    response = client.post(
        "/auth/signin", json={"grant_type": "password", "username": account.username, "password": "s3cret-pw"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert "form" in response.json()["error_description"]


@pytest.mark.parametrize("param", ["username", "password", "grant_type", "refresh_token", "access_token"])
def test_sensitive_query_parameters_block_the_call(client, param):
    account = make_account()
    response = client.post(
        f"/auth/signin?{param}=x",
        data={"grant_type": "password", "username": account.username, "password": "s3cret-pw"},
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert param in response.json()["error_description"]
    assert "access_token" not in response.json()
    with unit_of_work() as session:
        assert session.scalar(select(AuthToken).where(AuthToken.account_id == account.id)) is None


def test_stale_authorization_header_on_signin_is_tolerated(client):
    account = make_account()
    response = client.post(
        "/auth/signin",
        headers={"Authorization": "Bearer expired-or-garbage"},
        data={"grant_type": "password", "username": account.username, "password": "s3cret-pw"},
    )
    assert response.status_code == 200


def test_refresh_returns_a_new_pair_and_uses_up_the_old_refresh_token(client, clock):
    account = make_account()
    first = sign_in(client, account.username)
    clock.advance(timedelta(minutes=10))
    response = signin_raw(client, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert response.status_code == 200
    second = response.json()
    assert second["expires_in"] == 1800
    assert second["access_token"] != first["access_token"]
    assert second["refresh_token"] != first["refresh_token"]
    assert second[".issued"] == "Mon, 23 Nov 2026 08:10:00 GMT"
    assert client.get("/auth/userInfo", headers=bearer(second)).status_code == 200
    again = signin_raw(client, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_expired_access_token_can_be_renewed_until_60_minutes_after_issue(client, clock):
    account = make_account()
    token = sign_in(client, account.username)
    clock.advance(timedelta(minutes=59, seconds=59))
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 401
    response = signin_raw(client, grant_type="refresh_token", refresh_token=token["refresh_token"])
    assert response.status_code == 200


def test_refresh_token_is_dead_60_minutes_after_issue(client, clock):
    account = make_account()
    token = sign_in(client, account.username)
    clock.advance(timedelta(seconds=3600))
    response = signin_raw(client, grant_type="refresh_token", refresh_token=token["refresh_token"])
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_grant",
        "error_description": "The refresh token has expired.",
    }


def test_unknown_refresh_token_is_invalid_grant(client):
    response = signin_raw(client, grant_type="refresh_token", refresh_token="not-a-token")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_refresh_is_refused_once_the_account_is_disabled(client):
    from varco.accounts import service

    account = make_account()
    token = sign_in(client, account.username)
    with unit_of_work() as session:
        service.disable_account(session, account.username, current_clock(), SYSTEM)
    response = signin_raw(client, grant_type="refresh_token", refresh_token=token["refresh_token"])
    assert response.status_code == 400


def test_token_expires_after_1800_seconds(client, clock):
    account = make_account()
    token = sign_in(client, account.username)
    clock.advance(timedelta(seconds=1799))
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 200
    clock.advance(timedelta(seconds=1))
    response = client.get("/auth/userInfo", headers=bearer(token))
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer "}],
)
def test_missing_or_wrong_token_is_401(client, headers):
    response = client.get("/auth/userInfo", headers=headers)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


def test_tokens_are_stored_hashed(client):
    account = make_account()
    token = sign_in(client, account.username)
    with unit_of_work() as session:
        record = session.scalar(select(AuthToken).where(AuthToken.account_id == account.id))
    assert record is not None
    stored = {record.access_digest, record.refresh_digest}
    assert token["access_token"] not in stored and token["refresh_token"] not in stored
    assert all(len(value) == 64 for value in stored)


def test_disabled_account_token_stops_working(client):
    from varco.accounts import service
    from varco.auth import service as auth_service

    account = make_account()
    token = sign_in(client, account.username)
    with unit_of_work() as session:
        disabled = service.disable_account(session, account.username, current_clock(), SYSTEM)
        assert auth_service.revoke_all(session, disabled, current_clock()) == 1
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 401
