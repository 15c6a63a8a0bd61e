"""Each audited act records its event where it is caused, with its actor: the API, the panel, the
version 1 calls and the command line (actor `cli`, no account)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from tests.audit.support import events_of
from tests.factories import bearer, make_account, sign_in, unique_name
from tests.panel.support import NEW_PASSWORD, csrf_of, panel_login
from tests.sdi.factories import unique_code
from varco.cli import app as cli

runner = CliRunner()


def run(*args: str) -> str:
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def kinds(username: str, prefix: str | None = None) -> list[str]:
    return [e.kind for e in events_of(username, prefix)]


def test_command_line_account_events_are_the_cli_s(client):
    name = unique_name()
    run("users", "create", name, "--password", "pw-123456", "--tier", "2")
    sign_in(client, name, "pw-123456")
    run("users", "set-tier", name, "4")
    run("users", "set-tier", name, "4")  # no change, no event
    run("users", "disable", name)
    created, _, tier, disabled, revoked = events_of(name)
    assert (created.kind, created.actor_username, created.actor_account_id) == (
        "account.created",
        "cli",
        None,
    )
    assert created.details == {"accountKind": "premium", "tier": 2, "isAdmin": False}
    assert (tier.kind, tier.actor_username, tier.details) == (
        "account.tier.changed",
        "cli",
        {"from": 2, "to": 4},
    )
    assert (disabled.kind, disabled.actor_username, disabled.subject_username) == (
        "account.disabled",
        "cli",
        name,
    )
    assert (revoked.kind, revoked.details) == ("auth.token.revoked_all", {"count": 1})
    refused = client.post(
        "/auth/signin", data={"grant_type": "password", "username": name, "password": "pw-123456"}
    )
    assert refused.status_code == 400
    assert events_of(name)[-1].details == {"channel": "api", "reason": "account_refused"}


def test_delegations_from_the_command_line(db, clock):
    premium, basic = make_account(), make_account(kind="basic")
    run("delegations", "create", basic.username, premium.username, "--status", "PENDING")
    [created] = events_of(basic.username, "delegation")
    number = str(created.details["delegationId"])
    run("delegations", "set-status", number, "ACTIVE")
    created, approved = events_of(basic.username, "delegation")
    assert created.details == {"delegationId": int(number), "delegate": premium.username, "status": "PENDING"}
    assert (approved.kind, approved.actor_username, approved.subject_username) == (
        "delegation.changed",
        "cli",
        basic.username,
    )
    assert approved.details | {"delegationId": 0} == {
        "delegationId": 0,
        "delegate": premium.username,
        "event": "approve",
        "from": "PENDING",
        "to": "ACTIVE",
    }


def test_simulator_controls_name_the_operator(client, db, clock):
    admin = make_account(is_admin=True)
    token = bearer(sign_in(client, admin.username))
    code = unique_code()
    assert client.post(
        "/api/v2/admin/sdi/scenarios", json={"recipientCode": code, "outcome": "NS"}, headers=token
    ).is_success
    assert client.delete(
        "/api/v2/admin/sdi/scenarios", params={"recipientCode": code}, headers=token
    ).is_success
    assert client.post("/api/v2/admin/sdi/advance", json={"duration": "1h"}, headers=token).is_success
    assert client.post("/api/v2/admin/sdi/redeliver", headers=token).is_success
    assert kinds(admin.username, "sdi") == [
        "sdi.scenario.set",
        "sdi.scenario.deleted",
        "sdi.clock.advanced",
        "sdi.unroutable.redelivered",
    ]
    scenario_set, deleted, advanced, _ = events_of(admin.username, "sdi")
    assert scenario_set.details == {
        "rule": "recipient_code",
        "value": code,
        "outcome": "NS",
        "esitoOutcome": None,
        "delay": "0s",
    }
    assert deleted.details == {"rule": "one", "value": code, "deleted": 1}
    assert advanced.details["duration"] == "1h"
    run("sdi", "scenario", "set", "--recipient-code", code, "--outcome", "RC")
    run("sdi", "scenario", "clear", "--recipient-code", code)
    by_cli = [e for e in events_of("cli", "sdi.scenario") if e.details.get("value") == code]
    assert [(e.kind, e.actor_username, e.actor_account_id) for e in by_cli] == [
        ("sdi.scenario.set", "cli", None),
        ("sdi.scenario.deleted", "cli", None),
    ]


def test_panel_password_change_and_revocations(client):
    account = make_account()
    token = sign_in(client, account.username)
    page = panel_login(client, account.username)  # registration chooses a new password
    assert [e.kind for e in events_of(account.username, "auth")][-3:] == [
        "auth.signin.succeeded",
        "auth.password.changed",
        "auth.token.revoked_all",
    ]
    signed_in = events_of(account.username, "auth.signin")[-1]
    assert signed_in.details["channel"] == "panel" and signed_in.details["panelSessionId"] > 0
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 401
    sign_in(client, account.username, NEW_PASSWORD)
    csrf = csrf_of(page.text)
    listing = client.get("/panel/tokens").text
    grant = re.findall(r'action="/panel/tokens/(\d+)/revoke"', listing)[0]
    client.post(f"/panel/tokens/{grant}/revoke", data={"csrf_token": csrf})
    revoked = events_of(account.username, "auth.token.revoked")[-1]
    assert (revoked.actor_username, revoked.details) == (account.username, {"grantId": int(grant)})


@pytest.mark.parametrize("route", ["panel", "v1"])
def test_failed_password_checks_of_the_panel_and_version_1(client, route):
    account = make_account()
    if route == "panel":
        form = client.get("/panel/login")
        data = {"username": account.username, "password": "wrong-pw-1", "csrf_token": csrf_of(form.text)}
        assert client.post("/panel/login", data=data).status_code == 400
    else:
        body = {"userName": account.username, "password": "wrong-pw-1", "requestID": "x"}
        assert (
            client.post("/services/ClientRequest/GetTransmissionInfoRequest", json=body).json()["result"]
            == "AR02"
        )
    failed = events_of(account.username, "auth.signin.failed")[-1]
    assert failed.details == {"channel": route, "reason": "wrong_credentials"}
    assert failed.subject_username == account.username and failed.actor_username is None
